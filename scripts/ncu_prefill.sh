#!/usr/bin/env bash
# ncu on one launch of the d128 prefill kernel (scripts/prefill_breakdown.py --ncu: 2 x 8k tokens, 32/8 heads):
# speed of light, warp states, and the per-SASS-line warp stall sampling (SourceCounters). Clocks left as found.
#   scripts/ncu_prefill.sh [VALUE [CASE]]    VALUE: FLASHSEEK_EXPERIMENT value or "default"; CASE: full | causal
# Writes under $OUT (./gpu-out when unset): ncu_<VALUE>_<CASE>.ncu-rep, the full source-page CSV (gzipped), and
# ncu_<VALUE>_<CASE>_stalls.csv (the 200 SASS lines with the most samples, compact); prints the summary
# metrics and the top 40 lines by stall samples.
set -uo pipefail
cd "$(dirname "$0")/.."
export PYTHONPATH=$PWD/python${PYTHONPATH:+:$PYTHONPATH}
OUT=${OUT:-$PWD/gpu-out}
mkdir -p "$OUT"
VALUE=${1:-default}
CASE=${2:-full}
REP="$OUT/ncu_${VALUE}_${CASE}"
command -v ncu >/dev/null || { echo "ncu not found"; exit 1; }
t0=$SECONDS
ncu --clock-control none --profile-from-start off -k regex:attention_fwd --launch-count 1 \
    --section SpeedOfLight --section WarpStateStats --section SchedulerStats --section ComputeWorkloadAnalysis \
    --section SourceCounters -o "$REP" -f \
    python3 scripts/prefill_breakdown.py --ncu "$VALUE" --case "$CASE" >"$REP.log" 2>&1 ||
  { echo "ncu failed"; tail -30 "$REP.log"; exit 1; }
scripts/ncu_report.sh "$REP" 60
echo "ncu done in $((SECONDS - t0)) s; report $REP.ncu-rep"
