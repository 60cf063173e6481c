#!/usr/bin/env bash
# The summary of one ncu report (shared by ncu_prefill.sh and ncu_scenario.sh): the details page's key metrics,
# the source page as CSV (gzipped beside the report), and the top SASS lines by stall samples (REP_stalls.csv).
#   scripts/ncu_report.sh REP [DETAIL_LINES]     REP: the report path without .ncu-rep
set -uo pipefail
cd "$(dirname "$0")/.."
REP=${1:?report path without .ncu-rep}
LINES=${2:-60}
ncu -i "$REP.ncu-rep" --page details 2>/dev/null | grep -vE "^==PROF==|^\s*$" |
  grep -E "Duration|Throughput|L2 Hit|L1/TEX Hit|Stall|Issue|Eligible|Active Warps|Pipe|pipe|Warp Cycles|No Eligible|Busy|Tensor|Executed Ipc|Registers|Shared Memory Config|Grid Size|Block Size|Achieved Occupancy" |
  head -"$LINES"
ncu -i "$REP.ncu-rep" --page source --csv --print-source sass >"$REP.source.csv" 2>"$REP.source.err" ||
  { echo "source page export failed"; tail -5 "$REP.source.err"; }
python3 scripts/ncu_source_top.py "$REP.source.csv" --top 40 --save "${REP}_stalls.csv" --keep 200
gzip -f "$REP.source.csv"
