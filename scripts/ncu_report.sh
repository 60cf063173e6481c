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
# Memory-side counters (bytes from DRAM, L2 sectors and hits by source) for comparing two kernels' streaming.
ncu -i "$REP.ncu-rep" --page raw --csv 2>/dev/null >"$REP.raw.csv"
python3 - "$REP.raw.csv" <<'PY'
import csv, sys
rows = list(csv.reader(open(sys.argv[1])))
if len(rows) >= 3:
    head, units, vals = rows[0], rows[1], rows[2]
    keys = ("dram__bytes_read.sum", "dram__bytes_write.sum", "dram__throughput", "lts__t_sectors_srcunit_tex",
            "lts__t_sectors_op_read", "lts__t_sector_hit_rate", "lts__t_bytes.sum", "lts__throughput",
            "lts__d_", "lts__t_requests_srcunit_tex", "l1tex__m_xbar2l1tex", "gpu__time_duration.sum",
            "lts__average_gcomp", "lts__t_sectors_srcnode_gpc", "lts__t_sectors_srcunit_ltcfabric",
            "sm__cycles_active")  # .min / .max against .avg: SMs that finish early (a grid's tail)
    for h, u, v in zip(head, units, vals):
        if any(h.startswith(k) for k in keys):
            print(f"  raw {h:70s} {v:>16s} {u}")
PY
gzip -f "$REP.raw.csv"
ncu -i "$REP.ncu-rep" --page source --csv --print-source sass >"$REP.source.csv" 2>"$REP.source.err" ||
  { echo "source page export failed"; tail -5 "$REP.source.err"; }
python3 scripts/ncu_source_top.py "$REP.source.csv" --top 40 --save "${REP}_stalls.csv" --keep 200
gzip -f "$REP.source.csv"
