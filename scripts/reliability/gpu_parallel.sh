#!/usr/bin/env bash
# The whole reliability suite in one GPU-machine call: the pytest checks (two processes) and each sanitizer tool
# (one process each) run side by side, then one merged report. The GPU is far from busy under any of them, and
# run one after the other they take longer than one call may.
#   scripts/reliability/gpu_parallel.sh OUTDIR     -> OUTDIR/reliability.json, OUTDIR/reliability-logs.tgz
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1
OUTDIR=${1:?usage: gpu_parallel.sh OUTDIR}
LOGS=$(mktemp -d /tmp/flashseek-rel-XXXX)
RUN="python3 scripts/reliability/run_all.py"
pids=()
$RUN --checks hostile,graph_replay,unused_slots --logs "$LOGS/checks-a" --out "$LOGS/checks-a.json" \
  >"$LOGS/checks-a.out" 2>&1 & pids+=($!)
$RUN --checks determinism,fuzz --logs "$LOGS/checks-b" --out "$LOGS/checks-b.json" \
  >"$LOGS/checks-b.out" 2>&1 & pids+=($!)
for tool in memcheck racecheck synccheck initcheck; do
  $RUN --checks none --sanitizers --sanitizer-tools $tool --sanitizer-timeout ${SANITIZER_TIMEOUT:-420} \
    --logs "$LOGS/san-$tool" --out "$LOGS/san-$tool.json" >"$LOGS/san-$tool.out" 2>&1 & pids+=($!)
done
for p in "${pids[@]}"; do wait "$p"; done
tail -n 12 "$LOGS"/*.out
$RUN --merge-from "$LOGS"/checks-a.json "$LOGS"/checks-b.json "$LOGS"/san-*.json --out "$OUTDIR/reliability.json"
rc=$?
tar czf "$OUTDIR/reliability-logs.tgz" -C "$(dirname "$LOGS")" "$(basename "$LOGS")"
exit $rc
