#!/usr/bin/env bash
# One GPU-machine call: build (cmake + ninja, reusing build/gpu when the machine is warm), then the steps named
# on the command line, each logging under $OUT (or ./gpu-out when OUT is unset).
#   steps: build prims ctest smoke tests tests-par reliability eval-quick eval-full eval:<args> py:<script args>
#          micro-tma[:<args>] (scripts/micro_tma.sh: the TMA streaming micro-benchmark; e.g. micro-tma:--heads-only)
#          ncu:<value>[,<case>] (scripts/ncu_prefill.sh: one prefill launch under ncu, per-SASS-line stalls)
#          ncu-scn:<scenario>[,<value>] (scripts/ncu_scenario.sh: the forward kernel of one grid scenario under ncu)
#          env:NAME=VALUE / unenv:NAME  set / unset a variable for the steps after it (e.g. FLASHSEEK_EXPERIMENT)
#          A py: step is cut after PY_TIMEOUT seconds (default 240; env:PY_TIMEOUT=N for a longer script, 0 for
#          none) and an eval: step or an ab: round after EVAL_TIMEOUT (default none), so that a deadlocking kernel
#          costs one step
#          ab:A|B|ROUNDS|EVAL ARGS  an interleaved A/B of two FLASHSEEK_EXPERIMENT values (or "default"), ours
#                               only (--baselines none), ROUNDS rounds each, compared by scripts/ab_compare.py
#          sanitize:<scenario>[,<tool>]  that grid scenario's call under compute-sanitizer (memcheck unless a tool
#                               is named: racecheck, synccheck, initcheck; scripts/one_scenario.py)
#          bitwise:<FLASHSEEK_EXPERIMENT value>  test_tma_producer's bitwise cases of that value against the default
#          tests-exp:<FLASHSEEK_EXPERIMENT value>  the decode-tile, split, scheduler-metadata, CUDA-graph and
#                                                  family GPU tests under that value (e.g. tests-exp:cta2)
# Folders under $OUT come back packed as <folder>.tgz (see the end). Example: scripts/gpu-run.sh build prims smoke
# tests eval-quick
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-$PWD/gpu-out}
mkdir -p "$OUT"
export PYTHONUNBUFFERED=1
export PYTHONPATH=$PWD/python${PYTHONPATH:+:$PYTHONPATH}
# The commit being measured: scripts/stamp-sha.sh writes .git-sha ("<sha> <dirty 0|1>") here before a call
# (the copied tree on the GPU machine may have no .git); carry it with the call.
if [ -f .git-sha ]; then
  read -r FLASHSEEK_GIT_SHA FLASHSEEK_GIT_DIRTY < .git-sha
  export FLASHSEEK_GIT_SHA FLASHSEEK_GIT_DIRTY
fi
BUILD=build/gpu
# FA3 as a baseline: the carried build of vLLM's FA3 (scripts/fa3/make_carry.sh makes .fa3; carry it with the call).
if [ -f .fa3/unpack.sh ]; then
  FA3_PATH=$(bash .fa3/unpack.sh 2>/dev/null) && export PYTHONPATH=$FA3_PATH:$PYTHONPATH
fi
status=0

step_build() {
  local t0=$SECONDS
  cmake -S . -B $BUILD -G Ninja -DFLASHSEEK_BUILD_PYTHON=ON -DPython3_EXECUTABLE="$(command -v python3)" \
      >"$OUT/build.log" 2>&1 &&
    ninja -C $BUILD >>"$OUT/build.log" 2>&1 || { echo "BUILD FAILED"; tail -40 "$OUT/build.log"; return 1; }
  cp $BUILD/_C*.so python/flashseek/
  grep -E "spill|lmem|C75" "$OUT/build.log" | sort -u | head -20
  echo "build ok in $((SECONDS - t0)) s"
}

run_step() {
  local step=$1
  case $step in
    build) step_build || exit 1 ;;
    prims) (cd $BUILD && ctest --output-on-failure -L gpu) 2>&1 | tee "$OUT/prims.log" | tail -15 ;;
    ctest) (cd $BUILD && ctest --output-on-failure) 2>&1 | tee "$OUT/ctest.log" | tail -15 ;;
    smoke) python3 scripts/smoke_gpu.py 2>&1 | tee "$OUT/smoke.log" | tail -60 ;;
    tests) python3 -m pytest tests/gpu tests/python -q -rf --maxfail=30 --timeout=600 -p no:cacheprovider 2>&1 \
             | tee "$OUT/pytest.log" | tail -40 ;;
    tests-par)  # the same tests in PYTEST_WORKERS processes (pytest-xdist, on the GPU machine's image; default 6):
      # test_tma_producer's tests of one experiment in one worker (its child process runs once), the rest test by test
      python3 -m pytest tests/gpu tests/python -q -rf -n "${PYTEST_WORKERS:-6}" --dist loadgroup --maxfail=30 \
        --timeout=600 -p no:cacheprovider 2>&1 | tee "$OUT/pytest.log" | tail -40 ;;
    tests-exp:*) FLASHSEEK_EXPERIMENT=${step#tests-exp:} python3 -m pytest tests/gpu/test_decode_tiles.py \
                   tests/gpu/test_splits.py tests/gpu/test_scheduler_metadata.py tests/gpu/test_cuda_graphs.py \
                   tests/gpu/test_families.py -q --timeout=600 -p no:cacheprovider 2>&1 \
                   | tee -a "$OUT/pytest-exp.log" | tail -25 ;;
    eval-quick) python3 -m flashseek.eval.cli --quick --out "$OUT/eval" 2>"$OUT/eval-progress.log" | tail -60 ;;
    eval-full) python3 -m flashseek.eval.cli --out "$OUT/eval" 2>"$OUT/eval-progress.log" | tail -60 ;;
    eval:*)  # eval:<args>; with --out DIR among them the results go there (e.g. two halves of the grid)
      args=${step#eval:}
      args=${args//\$OUT/$OUT}  # a literal $OUT (the step quoted in single quotes) means this call's $OUT
      case " $args " in *" --out "*) out_args=() ;; *) out_args=(--out "$OUT/eval") ;; esac
      # shellcheck disable=SC2086
      # EVAL_TIMEOUT (seconds, env:EVAL_TIMEOUT=N): cut a run that hangs (an experiment kernel) instead of the call
      timeout "${EVAL_TIMEOUT:-0}" python3 -m flashseek.eval.cli $args "${out_args[@]}" 2>>"$OUT/eval-progress.log" \
        | tail -60 ;;
    ab:*)  # ab:A|B|ROUNDS|EVAL ARGS: alternating rounds of FLASHSEEK_EXPERIMENT=A and =B (a value or "default":
      # unset), ours only, then scripts/ab_compare.py; results under $OUT/ab<N>-a<k> and $OUT/ab<N>-b<k> (the N-th ab step)
      local spec=${step#ab:}; local va vb rounds eargs
      IFS='|' read -r va vb rounds eargs <<<"$spec"
      local a_files=() b_files=()
      AB_STEP=$((${AB_STEP:-0} + 1))  # several ab: steps in one call keep their own folders (ab<N>-a<k>)
      for k in $(seq 1 "${rounds:-2}"); do
        for side in a b; do
          local v=$va; [ $side = b ] && v=$vb
          # shellcheck disable=SC2086
          # EVAL_TIMEOUT cuts a round that hangs (a new experiment kernel) instead of the whole call
          if [ "$v" = default ]; then env -u FLASHSEEK_EXPERIMENT timeout "${EVAL_TIMEOUT:-0}" python3 -m flashseek.eval.cli \
                 $eargs --baselines none --out "$OUT/ab$AB_STEP-$side$k" 2>>"$OUT/eval-progress.log" | tail -1
          else FLASHSEEK_EXPERIMENT=$v timeout "${EVAL_TIMEOUT:-0}" python3 -m flashseek.eval.cli $eargs --baselines none \
                 --out "$OUT/ab$AB_STEP-$side$k" 2>>"$OUT/eval-progress.log" | tail -1; fi
          if [ $side = a ]; then a_files+=("$OUT/ab$AB_STEP-a$k/results.json"); else b_files+=("$OUT/ab$AB_STEP-b$k/results.json"); fi
        done
      done
      echo "ab$AB_STEP: A = $va, B = $vb" | tee -a "$OUT/ab.log"
      python3 scripts/ab_compare.py --a "${a_files[@]}" --b "${b_files[@]}" 2>&1 | tee -a "$OUT/ab.log" | tail -50 ;;
    reliability) scripts/reliability/gpu_parallel.sh "$OUT" 2>&1 | tee "$OUT/reliability.log" | tail -60 ;;
    # PY_TIMEOUT (seconds, default 240; env:PY_TIMEOUT=N, 0 for none): a new kernel that deadlocks (a barrier or
    # register-pool wait) holds a step until the call's limit; cut it and go on with the next steps.
    bitwise:*)  # bitwise:VALUE: tests/gpu/test_tma_producer.py's cases of one FLASHSEEK_EXPERIMENT value against
      # the default (pytest -k VALUE; a py: step splits its arguments on spaces, so it cannot pass a -k expression)
      python3 -m pytest tests/gpu/test_tma_producer.py -q -p no:cacheprovider --timeout=600 -k "${step#bitwise:}" 2>&1 \
        | tee -a "$OUT/pytest-bitwise.log" | tail -15 ;;
    py:*) pyargs=${step#py:}; pyargs=${pyargs//\$OUT/$OUT}  # a literal $OUT: this call's, as in eval:
      # shellcheck disable=SC2086
      timeout -k 10 "${PY_TIMEOUT:-240}" python3 $pyargs 2>&1 | tee -a "$OUT/py.log" | tail -80
          local rc=${PIPESTATUS[0]}
          if [ "$rc" = 124 ]; then echo "py step cut after ${PY_TIMEOUT:-240} s (PY_TIMEOUT)" | tee -a "$OUT/py.log"; fi
          (exit "$rc") ;;
    micro-tma|micro-tma:*)  # the TMA streaming micro-benchmark (scripts/micro_tma.sh); micro-tma:--heads-only etc.
      local margs=${step#micro-tma}; margs=${margs#:}
      # shellcheck disable=SC2086
      BUILD=$BUILD OUT=$OUT timeout -k 10 "${PY_TIMEOUT:-240}" scripts/micro_tma.sh $margs 2>&1 | tail -80 ;;
    env:*) export "${step#env:}"; return ;;  # env:NAME=VALUE holds for the steps after it
    unenv:*) unset "${step#unenv:}"; return ;;
    ncu:*) local a=${step#ncu:}; OUT=$OUT scripts/ncu_prefill.sh ${a%%,*} $( [ "${a#*,}" != "$a" ] && echo ${a#*,} ) 2>&1 \
             | tee -a "$OUT/ncu.log" | tail -90 ;;
    ncu-scn:*) local a=${step#ncu-scn:}; OUT=$OUT scripts/ncu_scenario.sh "${a%%,*}" \
                 $( [ "${a#*,}" != "$a" ] && echo "${a#*,}" ) 2>&1 | tee -a "$OUT/ncu.log" | tail -120 ;;
    sanitize:*)  # sanitize:<scenario>[,<tool>]: that scenario's call (scripts/one_scenario.py) under compute-sanitizer
      local sa=${step#sanitize:}; local tool=memcheck
      if [ "${sa#*,}" != "$sa" ]; then tool=${sa#*,}; sa=${sa%%,*}; fi
      timeout -k 10 "${PY_TIMEOUT:-240}" compute-sanitizer --tool "$tool" --print-limit 20 \
        python3 scripts/one_scenario.py "$sa" --warmup 1 2>&1 | tee -a "$OUT/sanitize.log" | tail -40 ;;
    *) echo "unknown step $step"; exit 2 ;;
  esac
  [ "${PIPESTATUS[0]}" = 0 ] || status=1
}

# At most 8 files come back from a call (sessions 6 and 7 lost outputs to that limit): every folder under $OUT (an
# evaluator's --out) and ncu's per-scenario files (without the .ncu-rep reports, too large to come back) go into one
# outputs.tgz; the step logs stay plain files. The folders are packed after every step, so that a call cut by its
# time limit still returns what its finished steps wrote (session 20 lost a finished grid half that way).
STAGE=$(mktemp -d /tmp/gpu-run-stage-XXXX)
pack_outputs() {
  if compgen -G "$OUT/ncu_*" >/dev/null; then rm -f "$OUT"/ncu_*.ncu-rep; fi
  local moved=0 f
  for f in "$OUT"/*/ "$OUT"/ncu_*; do
    [ -e "$f" ] || continue
    f=${f%/}
    rm -rf "$STAGE/$(basename "$f")"
    mv "$f" "$STAGE/" && moved=1
  done
  if [ "$moved" = 1 ]; then
    (cd "$STAGE" && tar czf "$OUT/outputs.tgz.tmp" -- * && mv "$OUT/outputs.tgz.tmp" "$OUT/outputs.tgz")
  fi
}

nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu --format=csv,noheader
for step in "$@"; do
  echo "=== $step"
  run_step "$step"
  pack_outputs
done
ls "$OUT"
exit $status
