#!/usr/bin/env bash
# compute-sanitizer over scripts/reliability/sanitizer_workload.py, one pass per tool, then a JSON summary
# (per tool: scenarios run, "ERROR SUMMARY" errors, API errors, findings attributed to scenarios, passed).
#
#   scripts/reliability/run_sanitizers.sh [--out DIR] [--json FILE] [--tools "memcheck racecheck synccheck initcheck"]
#                                         [--timeout SECONDS] [--quick] [--only REGEX]
#
# Defaults: DIR = ${TMPDIR:-/tmp}/flashseek-sanitizers, FILE = DIR/sanitizers.json, every tool, 280 s per tool.
# Logs: DIR/<tool>.log (sanitizer and workload output interleaved, so each report follows the scenario that
# caused it), DIR/status.txt ("<tool> <exit code> <seconds>"), DIR/version.txt.
#
# How each tool runs:
#   memcheck   our kernels only (--kernel-name kns=flashseek: every flashseek kernel's mangled name holds it),
#              512 bytes of padding after every allocation, plus the hostile device data of reliability_cases
#   racecheck  our kernels only, analysis report; the workload's --quick set (no 993-sequence batch: slow here)
#   synccheck  our kernels only
#   initcheck  every kernel: a write by an unchecked kernel (torch's randn) would not count as initialising
#              memory, so filtering would report false uninitialised reads; findings are split by kernel;
#              the --quick set
# PYTORCH_NO_CUDA_MEMORY_CACHING=1: every tensor is its own cudaMalloc, so an access past a tensor is past an
# allocation (with the caching allocator it would land in a neighbour inside the same segment, unseen).
# The sanitizer binary: $COMPUTE_SANITIZER, else compute-sanitizer on the PATH, else /usr/local/cuda/bin.
# Extra options for every tool: $SANITIZER_EXTRA_ARGS.
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1
ROOT=$PWD

DIR=""
JSON=""
TOOLS="memcheck racecheck synccheck initcheck"
TIMEOUT=280
WORKLOAD_ARGS=()
while [ $# -gt 0 ]; do
  case $1 in
    --out) DIR=$2; shift 2 ;;
    --json) JSON=$2; shift 2 ;;
    --tools) TOOLS=$2; shift 2 ;;
    --timeout) TIMEOUT=$2; shift 2 ;;
    --quick) WORKLOAD_ARGS+=(--quick); shift ;;
    --only) WORKLOAD_ARGS+=(--only "$2"); shift 2 ;;
    -h|--help) sed -n '2,24p' "$0"; exit 0 ;;
    *) echo "run_sanitizers.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
DIR=${DIR:-${TMPDIR:-/tmp}/flashseek-sanitizers}
mkdir -p "$DIR"
DIR=$(cd "$DIR" && pwd)
JSON=${JSON:-$DIR/sanitizers.json}

CS=${COMPUTE_SANITIZER:-}
if [ -z "$CS" ]; then
  CS=$(command -v compute-sanitizer || true)
  [ -z "$CS" ] && [ -x /usr/local/cuda/bin/compute-sanitizer ] && CS=/usr/local/cuda/bin/compute-sanitizer
fi
PY=${PYTHON:-python3}
export PYTHONPATH=$ROOT/python:$ROOT/scripts/reliability${PYTHONPATH:+:$PYTHONPATH}
export PYTORCH_NO_CUDA_MEMORY_CACHING=1
export PYTHONUNBUFFERED=1
: >"$DIR/status.txt"

if [ -z "$CS" ]; then
  echo "compute-sanitizer not found (PATH, /usr/local/cuda/bin, \$COMPUTE_SANITIZER)" | tee "$DIR/version.txt"
  for tool in $TOOLS; do
    echo "compute-sanitizer not found" >"$DIR/$tool.log"
    echo "$tool 127 0" >>"$DIR/status.txt"
  done
else
  "$CS" --version >"$DIR/version.txt" 2>&1 || true
  for tool in $TOOLS; do
    case $tool in
      memcheck) opts=(--tool memcheck --kernel-name kns=flashseek --padding 512); wl=(--hostile all) ;;
      racecheck) opts=(--tool racecheck --kernel-name kns=flashseek --racecheck-report analysis); wl=(--quick) ;;
      synccheck) opts=(--tool synccheck --kernel-name kns=flashseek); wl=() ;;
      initcheck) opts=(--tool initcheck); wl=(--quick) ;;
      *) echo "unknown tool $tool" >&2; continue ;;
    esac
    # shellcheck disable=SC2206
    extra=(${SANITIZER_EXTRA_ARGS:-})
    start=$SECONDS
    app=("$PY" scripts/reliability/sanitizer_workload.py "${wl[@]}" "${WORKLOAD_ARGS[@]}")
    echo "=== $tool: $CS ${opts[*]} ${extra[*]} ${app[*]}"
    # timeout signals its whole process group: the sanitizer and the Python program under it
    timeout --kill-after=30 "$TIMEOUT" "$CS" "${opts[@]}" "${extra[@]}" --print-limit 200 "${app[@]}" \
      >"$DIR/$tool.log" 2>&1
    rc=$?
    secs=$((SECONDS - start))
    echo "$tool $rc $secs" >>"$DIR/status.txt"
    summary=$(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|RELIABILITY-WORKLOAD' "$DIR/$tool.log" | tr '\n' ' ')
    echo "    exit $rc in ${secs}s; $summary"
  done
fi

"$PY" scripts/reliability/reliability_report.py sanitizers --dir "$DIR" --json "$JSON" --tools "$TOOLS"
