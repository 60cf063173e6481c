#!/usr/bin/env bash
# ncu on the forward kernel of one grid scenario's call (scripts/one_scenario.py; the first attention_fwd* or
# mla_decode launch inside the profiled call): speed of light, memory workload, warp states, and the per-SASS-line
# stall sampling. Clocks left as found.
#   scripts/ncu_scenario.sh SCENARIO [VALUE]    VALUE: FLASHSEEK_EXPERIMENT value, "default", or "vllm" (FA3's
#                                               forward kernel, cutlass device_kernel, in the evaluator's vLLM baseline call)
#                                               or "cudnn" (the cuDNN SDPA kernel of the evaluator's cudnn baseline,
#                                               on its dense copy)
# NCU_SKIP=N (env): profile the (N+1)-th matching launch instead (a cascade's suffix pass: NCU_SKIP=1).
# Writes under $OUT (./gpu-out when unset): ncu_<tag>.ncu-rep, the source-page CSV (gzipped) and ncu_<tag>_stalls.csv;
# prints the duration, DRAM / L2 / SM throughput, occupancy and the top stall lines.
set -uo pipefail
cd "$(dirname "$0")/.."
export PYTHONPATH=$PWD/python${PYTHONPATH:+:$PYTHONPATH}
OUT=${OUT:-$PWD/gpu-out}
mkdir -p "$OUT"
SCENARIO=${1:?scenario name}
VALUE=${2:-default}
SKIP=${NCU_SKIP:-0}
TAG=$(echo "${SCENARIO}_${VALUE}" | tr '/=,' '__-')
[ "$SKIP" != 0 ] && TAG="${TAG}_skip$SKIP"
REP="$OUT/ncu_${TAG}"
command -v ncu >/dev/null || { echo "ncu not found"; exit 1; }
KERNELS="attention_fwd|mla_decode"; WHO=()
if [ "$VALUE" = vllm ]; then KERNELS="device_kernel"; WHO=(--baseline vllm)
elif [ "$VALUE" = cudnn ]; then KERNELS="sdpa|fprop|fmha|flash"; WHO=(--baseline cudnn)
elif [ "$VALUE" != default ]; then export FLASHSEEK_EXPERIMENT=$VALUE; fi
t0=$SECONDS
ncu --clock-control none --profile-from-start off -k regex:"$KERNELS" --launch-skip "$SKIP" --launch-count 1 \
    --section SpeedOfLight --section MemoryWorkloadAnalysis --section WarpStateStats --section SchedulerStats \
    --section LaunchStats --section Occupancy --section SourceCounters -o "$REP" -f \
    --metrics sm__cycles_active.min,sm__cycles_active.max,sm__cycles_active.avg \
    python3 scripts/one_scenario.py "$SCENARIO" "${WHO[@]}" >"$REP.log" 2>&1 ||
  { echo "ncu failed"; tail -30 "$REP.log"; exit 1; }
grep -E "correct|WRONG" "$REP.log"
scripts/ncu_report.sh "$REP" 90
echo "ncu done in $((SECONDS - t0)) s; report $REP.ncu-rep"
