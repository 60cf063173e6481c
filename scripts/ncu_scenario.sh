#!/usr/bin/env bash
# ncu on the forward kernel of one grid scenario's call (scripts/one_scenario.py; the first attention_fwd* or
# mla_decode launch inside the profiled call): speed of light, memory workload, warp states, and the per-SASS-line
# stall sampling. Clocks left as found.
#   scripts/ncu_scenario.sh SCENARIO [VALUE]    VALUE: FLASHSEEK_EXPERIMENT value or "default"
# Writes under $OUT (./gpu-out when unset): ncu_<tag>.ncu-rep, the source-page CSV (gzipped) and ncu_<tag>_stalls.csv;
# prints the duration, DRAM / L2 / SM throughput, occupancy and the top stall lines.
set -uo pipefail
cd "$(dirname "$0")/.."
export PYTHONPATH=$PWD/python${PYTHONPATH:+:$PYTHONPATH}
OUT=${OUT:-$PWD/gpu-out}
mkdir -p "$OUT"
SCENARIO=${1:?scenario name}
VALUE=${2:-default}
TAG=$(echo "${SCENARIO}_${VALUE}" | tr '/=,' '__-')
REP="$OUT/ncu_${TAG}"
command -v ncu >/dev/null || { echo "ncu not found"; exit 1; }
if [ "$VALUE" != default ]; then export FLASHSEEK_EXPERIMENT=$VALUE; fi
t0=$SECONDS
ncu --clock-control none --profile-from-start off -k regex:"attention_fwd|mla_decode" --launch-count 1 \
    --section SpeedOfLight --section MemoryWorkloadAnalysis --section WarpStateStats --section SchedulerStats \
    --section LaunchStats --section Occupancy --section SourceCounters -o "$REP" -f \
    python3 scripts/one_scenario.py "$SCENARIO" >"$REP.log" 2>&1 ||
  { echo "ncu failed"; tail -30 "$REP.log"; exit 1; }
grep -E "correct|WRONG" "$REP.log"
ncu -i "$REP.ncu-rep" --page details 2>/dev/null | grep -vE "^==PROF==|^\s*$" |
  grep -E "^  [a-z_]|Duration|DRAM Throughput|Memory Throughput|L2 Hit|L1/TEX Hit|Compute \(SM\) Throughput|Stall|Eligible|Active Warps|Issued Warp|No Eligible|Registers Per|Grid Size|Block Size|Dynamic Shared|Achieved Occupancy" |
  head -90
ncu -i "$REP.ncu-rep" --page source --csv --print-source sass >"$REP.source.csv" 2>"$REP.source.err" ||
  { echo "source page export failed"; tail -5 "$REP.source.err"; }
python3 scripts/ncu_source_top.py "$REP.source.csv" --top 30 --save "${REP}_stalls.csv" --keep 200
gzip -f "$REP.source.csv"
echo "ncu done in $((SECONDS - t0)) s; report $REP.ncu-rep"
