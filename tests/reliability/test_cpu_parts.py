"""The reliability suite's CPU parts, for CI (no GPU; the torch parts skip without torch):
the opt-in input checker (flashseek.check_inputs), the report bookkeeping (sanitizer logs, pytest's junit and
summary, metrics, the JSON writer), the fuzz space, the sanitizer workload's plan and driver (with a stand-in
compute-sanitizer), run_all's collection, and the hostile cases against the checker on CPU tensors."""

import importlib.util
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from flashseek.check_inputs import InputError, check_index_values

import fuzz_space
import reliability_report as rr

ROOT = Path(__file__).resolve().parents[2]
SCRIPTS = ROOT / "scripts" / "reliability"

try:
    import torch
except ImportError:  # the checker and the bookkeeping need no torch
    torch = None
needs_torch = pytest.mark.skipif(torch is None, reason="torch is not installed")


# ---- the input checker on host values ---------------------------------------------------------------------------

PAGED = dict(total_q=7, cu_seqlens_q=[0, 3, 4, 7], max_seqlen_q=3, kv_layout="paged", seqused_k=[20, 5, 16],
             block_table=[[0, 1, 2], [3, 99, -1], [4, 5, 7]], num_blocks=8, page_size=8, max_seqlen_k=20)
VARLEN = dict(total_q=7, cu_seqlens_q=[0, 3, 4, 7], max_seqlen_q=3, kv_layout="varlen", total_k=41,
              cu_seqlens_k=[0, 20, 25, 41], max_seqlen_k=20)
BATCHED = dict(total_q=7, cu_seqlens_q=[0, 3, 4, 7], max_seqlen_q=3, kv_layout="batched", seqused_k=[20, 5, 16],
               page_size=24, cache_rows=3, max_seqlen_k=20)


@pytest.mark.parametrize("kw", [PAGED, VARLEN, BATCHED], ids=["paged", "varlen", "batched"])
def test_checker_accepts_valid_values(kw):
    check_index_values(**kw)  # PAGED's row 1 holds 99 and -1 past its one used page: never read, fine


BAD = [
    ("cu-q-decreasing", PAGED, dict(cu_seqlens_q=[0, 3, 2, 7]), "cu_seqlens_q", "non-decreasing"),
    ("cu-q-past-total", PAGED, dict(cu_seqlens_q=[0, 3, 4, 8]), "cu_seqlens_q", "total_q"),
    ("cu-q-negative", PAGED, dict(cu_seqlens_q=[-1, 3, 4, 7]), "cu_seqlens_q", ">= 0"),
    ("cu-q-empty", PAGED, dict(cu_seqlens_q=[]), "cu_seqlens_q", "shape"),
    ("max-seqlen-q", PAGED, dict(max_seqlen_q=2), "max_seqlen_q", "sequence 0 has 3"),
    ("seqused-negative", PAGED, dict(seqused_k=[20, -5, 16]), "seqused_k", ">= 0"),
    ("seqused-past-table", PAGED, dict(seqused_k=[25, 5, 16]), "seqused_k", "3 * 8 = 24"),
    ("seqused-wrong-shape", PAGED, dict(seqused_k=[20, 5]), "seqused_k", "shape"),
    ("bt-negative", PAGED, dict(block_table=[[0, -1, 2], [3, 9, 9], [4, 5, 7]]), "block_table", "block_table[0][1]=-1"),
    ("bt-num-blocks", PAGED, dict(block_table=[[0, 1, 2], [3, 9, 9], [4, 8, 7]]), "block_table", "block_table[2][1]=8"),
    ("bt-used-by-longer-seq", PAGED, dict(seqused_k=[20, 9, 16]), "block_table", "block_table[1][1]=99"),
    ("bt-wrong-rows", PAGED, dict(block_table=[[0, 1, 2]]), "block_table", "shape"),
    ("max-seqlen-k", PAGED, dict(max_seqlen_k=19), "max_seqlen_k", "sequence 0 has 20"),
    ("cu-k-decreasing", VARLEN, dict(cu_seqlens_k=[0, 20, 19, 41]), "cu_seqlens_k", "non-decreasing"),
    ("cu-k-past-total", VARLEN, dict(cu_seqlens_k=[0, 20, 25, 42]), "cu_seqlens_k", "total_k"),
    ("cu-k-int-min", VARLEN, dict(cu_seqlens_k=[-(2 ** 31), 20, 25, 41]), "cu_seqlens_k", ">= 0"),
    ("cu-k-missing", VARLEN, dict(cu_seqlens_k=None), "cu_seqlens_k", "None"),
    ("varlen-seqused-past-span", VARLEN, dict(seqused_k=[20, 6, 16]), "seqused_k", "cu_seqlens_k gives"),
    ("batched-seqused-past-row", BATCHED, dict(seqused_k=[20, 25, 16]), "seqused_k", "row length"),
    ("batched-too-many-seqs", BATCHED, dict(cache_rows=2), "seqused_k", "at most k.shape[0]=2"),
]


@pytest.mark.parametrize("name,base,change,arg,words", BAD, ids=[b[0] for b in BAD])
def test_checker_names_the_bad_argument(name, base, change, arg, words):
    with pytest.raises(ValueError) as err:
        check_index_values(**dict(base, **change))
    assert isinstance(err.value, InputError) and err.value.argument == arg
    assert str(err.value).startswith(f"{arg}: expected ") and words in str(err.value), str(err.value)


def test_checker_skips_no_layout():
    with pytest.raises(ValueError, match="kv_layout"):
        check_index_values(**dict(PAGED, kv_layout="ragged"))


# ---- the checker on real kwargs (CPU tensors) and the hostile cases --------------------------------------------

@needs_torch
def test_hostile_cases_are_named_by_the_checker_on_cpu_tensors():
    import reliability_cases as rc
    named = 0
    for case in rc.HOSTILE_CASES:
        hc = rc.build_hostile(case, "cpu", seed=4)
        for g in hc.guards.values():  # nothing has run yet: the guards are intact
            assert g.violations() is None
        if case.arg is None:
            continue
        arg, msg = rc.run_checker(hc)
        assert arg == case.arg, f"{case.name}: named {arg!r}, expected {case.arg!r}: {msg}"
        named += 1
    assert named >= 30
    assert {c.arg for c in rc.HOSTILE_CASES} >= {"block_table", "seqused_k", "cu_seqlens_q", "cu_seqlens_k"}


@needs_torch
def test_checker_accepts_every_base_and_garbage_in_unused_table_entries():
    import reliability_cases as rc
    from flashseek.check_inputs import check_inputs
    from flashseek.testing.inputs import make_inputs
    for name, s in rc.BASES.items():
        if s.entry != "varlen":
            continue
        kw = make_inputs(s, "cpu", seed=6).kwargs
        check_inputs(**kw)
        if kw.get("block_table") is not None:
            for value in (-1, rc.INT32_MIN, rc.INT32_MAX):
                rc.set_unused_table_entries(kw, value)
                check_inputs(**kw)


@needs_torch
def test_guarded_buffer_reports_writes_outside_the_view():
    import reliability_cases as rc
    g = rc.Guarded((5, 3, 8), torch.bfloat16, "cpu", guard=64, row_pad=8)
    assert g.tensor.shape == (5, 3, 8) and g.tensor.stride() == (32, 8, 1)
    assert torch.isnan(g.tensor.float()).all()
    g.tensor.fill_(1.0)
    assert g.violations() is None
    g.buffer[64 + 5 * 32] = 2.0  # first element after the tensor
    assert "after the tensor" in g.violations()
    g2 = rc.Guarded((2, 4), torch.float32, "cpu", guard=16, row_pad=4)
    g2.buffer[16 + 6] = 0.0  # the padding of row 0
    assert "padding of row 0" in g2.violations()
    g3 = rc.Guarded((2, 4), torch.float16, "cpu", guard=16)
    g3.buffer[3] = 1.0
    assert "before the tensor" in g3.violations()


@needs_torch
def test_pack_sequences_and_reference_for_call_agree_across_layouts():
    import reliability_cases as rc
    gen = torch.Generator().manual_seed(0)
    qs = [torch.randn(n, 4, 16, generator=gen).to(torch.bfloat16) for n in (3, 1, 0, 5)]
    ks = [torch.randn(n, 2, 16, generator=gen).to(torch.bfloat16) for n in (9, 17, 4, 5)]
    vs = [torch.randn(k.shape[0], 2, 16, generator=gen).to(torch.bfloat16) for k in ks]
    refs = []
    for lay in (dict(layout="paged", page_size=4), dict(layout="paged", page_size=1), dict(layout="varlen"),
                dict(layout="batched", kv_gap=3)):
        kw = rc.pack_sequences(qs, ks, vs, causal=True, seed=2, **lay)
        if lay["layout"] == "paged":  # pages outside the sequences hold NaN; the table's used entries are valid
            assert torch.isnan(kw["k"].float()).any()
        out, lse, naive, n = rc.reference_for_call(kw)
        assert n == 9 and torch.isfinite(out).all()
        refs.append((out, lse))
    for out, lse in refs[1:]:
        assert torch.equal(out, refs[0][0]) and torch.equal(lse, refs[0][1])


@needs_torch
def test_fuzz_cases_build_inputs_on_cpu():
    import reliability_cases as rc
    for case in fuzz_space.fuzz_cases(seed=1234, count=40):
        inputs = rc.prepare_fuzz_inputs(case, "cpu")
        if case.sink_dtype == "bf16" and case.scenario.sinks:
            assert inputs.kwargs["s_aux"].dtype == torch.bfloat16 and inputs.s_aux.dtype == torch.float32


def _fake_binding():
    """tests/python/fake_binding.py (a pure-torch stand-in for flashseek._C), or None if it is not there."""
    path = ROOT / "tests" / "python" / "fake_binding.py"
    if torch is None or not path.exists():
        return None
    spec = importlib.util.spec_from_file_location("reliability_fake_binding", path)
    mod = importlib.util.module_from_spec(spec)
    try:
        spec.loader.exec_module(mod)
        return mod.FakeBinding()
    except Exception:
        return None


def test_fuzz_runner_end_to_end_with_the_fake_binding(monkeypatch):
    """The fuzzer's whole path (space -> inputs -> call -> every rule) through the Python API on CPU with the
    independent pure-torch stand-in for the binding: a correct implementation passes every drawn case."""
    fake = _fake_binding()
    if fake is None:
        pytest.skip("torch or tests/python/fake_binding.py unavailable")
    import flashseek.api as api
    import reliability_cases as rc
    monkeypatch.setattr(api, "_C", fake)
    monkeypatch.setattr(api, "_IMPORT_ERROR", None)
    failures = []
    for case in fuzz_space.fuzz_cases(seed=777, count=30):
        res = rc.run_fuzz_case(case, "cpu")
        if not res.correct:
            failures.append(f"{case.scenario.name}: {res.reason[:300]}")
    assert not failures, failures


# ---- the fuzz space --------------------------------------------------------------------------------------------

REQUIRED_FEATURES = {
    "bf16", "fp16", "d8", "d256", "d192-128", "paged", "varlen", "batched", "page1", "page256", "page_non_pow2",
    "hnd", "bt_pad", "bt_repeats", "q_row_pad", "causal", "window", "softcap", "scale", "sinks_fp32", "sinks_bf16",
    "splits0", "splits1", "splitsN", "metadata", "lse", "out_given", "empty_seq", "total_q0", "total_k0", "mha",
    "gqa", "mqa", "kvcache", "append", "leftpad", "cache_batch_idx", "cascade",
}


def test_fuzz_space_covers_every_argument_and_replays():
    cases = fuzz_space.fuzz_cases(seed=0, count=fuzz_space.DEFAULT_CASES)
    seen = set()
    for c in cases:
        seen.update(c.features)
        s = c.scenario
        assert 8 <= s.head_dim <= 256 and s.head_dim % 8 == 0
        assert s.head_dim_v == s.head_dim or (s.head_dim, s.head_dim_v) == (192, 128)
        assert s.num_heads_q % s.num_heads_kv == 0 and s.num_heads_q <= 32
        assert 1 <= s.page_size <= 256 and s.q_row_pad % 8 == 0
        assert all(0 <= q for q, k in s.seqs) and s.dtype in ("bf16", "fp16")
        if s.entry == "kvcache":
            assert len(set(s.q_lens)) == 1 and all(k >= q for q, k in s.seqs)
        if s.entry == "cascade":
            assert not s.sinks and all(k - q >= s.cascade_prefix for q, k in s.seqs)
    assert REQUIRED_FEATURES <= seen, f"never drawn in {len(cases)} cases: {sorted(REQUIRED_FEATURES - seen)}"
    assert len({c.scenario.name for c in cases}) == len(cases)
    # a case is a function of its own seed: replaying case i alone gives the same call
    again = fuzz_space.fuzz_case(cases[123].case_seed)
    assert again == cases[123] and again.replay == f"FLASHSEEK_FUZZ_SEED={cases[123].case_seed} FLASHSEEK_FUZZ_CASES=1"
    assert fuzz_space.fuzz_cases(seed=5, count=3)[1] == fuzz_space.fuzz_case(6)


def test_fuzz_shapes_stay_small():
    cases = fuzz_space.fuzz_cases(seed=99, count=300)
    assert max(c.scenario.total_q for c in cases) <= 1000
    assert max(max(c.scenario.k_lens) for c in cases) <= 1300


# ---- the sanitizer workload and its driver -----------------------------------------------------------------------

def test_workload_plan_covers_every_variant_and_family():
    import sanitizer_workload as sw
    items = sw.plan()
    variants = {(it.scenario.dtype, it.label.split("/")[2], it.label.endswith("/split")) for it in items
                if it.family == "variant"}
    assert variants == {(dt, f"tile{t}", sp) for dt in ("bf16", "fp16") for t in sw.TILES for sp in (False, True)}
    kernels = {(it.scenario.dtype, it.label.split("/")[2], it.label.split("/")[4]) for it in items
               if it.family == "variant"}
    assert kernels == {(dt, f"tile{t}", m) for dt in ("bf16", "fp16") for t in sw.TILES for m in ("m64", "m128")}
    for it in items:  # the label's block size is the one the library will choose (64 rows when all fit)
        if it.family == "variant":
            rows = max(it.scenario.q_lens) * it.scenario.num_heads_q // it.scenario.num_heads_kv
            assert (rows <= 64) == it.label.endswith(("m64/split", "m64/nosplit")), it.label
    fp8 = {(it.scenario.dtype, it.label.split("/")[2], it.label.split("/")[4]) for it in items
           if it.family == "variant-fp8"}  # every fp8-cache kernel: compute fp16 (e4m3 q) and bf16, m64 and m128
    assert fp8 == {(dt, f"tile{t}", m) for dt in ("e4m3", "bf16") for t in sw.TILES for m in ("m64", "m128")}
    for it in items:
        if it.family == "variant-fp8":
            rows = max(it.scenario.q_lens) * it.scenario.num_heads_q // it.scenario.num_heads_kv
            assert (rows <= 64) == ("/m64/" in it.label) and it.scenario.has_fp8, it.label
    dims = {it.scenario.head_dim for it in items if it.family == "variant"}
    assert {40, 64, 72, 80, 96, 128, 160, 192, 256} <= dims
    families = {it.family for it in items}
    assert set(sw.GRID_FAMILIES) <= families
    feats = {(it.scenario.entry, it.scenario.kv_layout) for it in items if it.scenario}
    assert {("varlen", "paged"), ("varlen", "varlen"), ("varlen", "batched"), ("kvcache", "batched"),
            ("kvcache", "paged"), ("cascade", "paged")} <= feats
    assert any(it.kind == "merge" for it in items)
    assert any(it.tweak == "sinks_bf16" for it in items)
    assert any(it.scenario and it.scenario.rotary for it in items)
    assert len(sw.plan(quick=True)) < len(items)
    assert sw.plan(only="variant/fp16") and all("variant/fp16" in it.label for it in sw.plan(only="variant/fp16"))


def test_workload_lists_its_plan_without_a_gpu():
    out = subprocess.run([sys.executable, str(SCRIPTS / "sanitizer_workload.py"), "--list"], capture_output=True,
                         text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert "variant/bf16/tile256/d256/m64/split" in out.stdout and "family/lse/merge-fp32-inf-lse" in out.stdout


MEMCHECK_LOG = """========= COMPUTE-SANITIZER
RELIABILITY-SCENARIO variant/bf16/tile64/d40/nosplit
  ok (0.12 s)
RELIABILITY-SCENARIO family/edge/page1
========= Invalid __global__ read of size 16 bytes
=========     at void flashseek::sm90::attention_fwd_kernel<FwdKernelTraits<__nv_bfloat16, 64, 64>>(FwdParams)+0x1a30
=========     by thread (5,0,0) in block (0,1,0)
=========     Address 0x7f0000001000 is out of bounds
=========     Saved host backtrace up to driver entry point at kernel launch time
=========     Host Frame: [0x2f3e1] in libcuda.so.1
=========
========= Program hit cudaErrorInvalidValue (error 1) due to "invalid argument" on CUDA API call to cuFoo.
=========     Saved host backtrace up to driver entry point at error
=========
  FAILED RuntimeError: CUDA error: unspecified launch failure
RELIABILITY-WORKLOAD scenarios=1 calls=1 failed=1 skipped=0
========= ERROR SUMMARY: 2 errors
"""
RACECHECK_LOG = """RELIABILITY-SCENARIO variant/fp16/tile128/d96/nosplit
========= Error: Race reported between Write access at void flashseek::sm90::attention_fwd_kernel<X>(FwdParams)+0x100
=========     and Read access at void flashseek::sm90::attention_fwd_kernel<X>(FwdParams)+0x200 [256 hazards]
=========
RELIABILITY-WORKLOAD scenarios=47 calls=60 failed=0 skipped=0
========= RACECHECK SUMMARY: 1 hazard displayed (1 error, 0 warnings)
"""
INITCHECK_LOG = """RELIABILITY-SCENARIO family/kvcache/x
========= Uninitialized __global__ memory read of size 4 bytes
=========     at void at::native::vectorized_elementwise_kernel<4, X>(int, X)+0x50
=========     by thread (0,0,0) in block (0,0,0)
=========
RELIABILITY-WORKLOAD scenarios=47 calls=60 failed=0 skipped=0
========= ERROR SUMMARY: 1 error
"""


def test_parse_sanitizer_logs():
    m = rr.parse_sanitizer_log(MEMCHECK_LOG)
    assert m["errors"] == 2 and m["api_errors"] == 1 and m["flashseek_findings"] == 1
    assert m["scenarios"] == 1 and m["workload_failed"] == 1 and m["scenarios_started"] == 2
    assert m["findings"][0]["scenario"] == "family/edge/page1" and "Invalid __global__ read" in m["findings"][0][
        "message"] and "attention_fwd_kernel" in m["findings"][0]["kernel"]
    e = rr.sanitizer_tool_entry("memcheck", MEMCHECK_LOG, 0, 12.0)
    assert not e["passed"] and e["device_errors"] == 1 and "device-side" in e["reason"]
    r = rr.parse_sanitizer_log(RACECHECK_LOG)
    assert r["errors"] == 1 and r["hazards"] == 1 and r["race_errors"] == 1 and r["flashseek_findings"] == 1
    e = rr.sanitizer_tool_entry("racecheck", RACECHECK_LOG, 0, 50.0)
    assert not e["passed"] and e["scenarios"] == 47 and e["race_warnings"] == 0
    i = rr.parse_sanitizer_log(INITCHECK_LOG)
    assert i["errors"] == 1 and i["other_findings"] == 1 and i["flashseek_findings"] == 0
    clean = "RELIABILITY-SCENARIO a\nRELIABILITY-WORKLOAD scenarios=1 calls=1 failed=0 skipped=0\n" \
            "========= ERROR SUMMARY: 0 errors\n"
    assert rr.sanitizer_tool_entry("synccheck", clean, 0, 1.0)["passed"]
    api_only = clean.replace("ERROR SUMMARY: 0 errors", "Program hit cudaErrorNotReady (error 600)\n"
                             "========= ERROR SUMMARY: 1 error")
    e = rr.sanitizer_tool_entry("memcheck", api_only, 0, 1.0)
    assert e["passed"] and e["api_errors"] == 1 and e["device_errors"] == 0
    died = "RELIABILITY-SCENARIO a\n"
    e = rr.sanitizer_tool_entry("initcheck", died, 124, 600.0)
    assert not e["passed"] and e["errors"] is None and "did not finish" in e["reason"]
    gvisor = "========= Error: Device not supported\n"
    assert "unavailable" in rr.sanitizer_tool_entry("memcheck", gvisor, 1, 1.0)["reason"]
    assert not rr.sanitizer_tool_entry("memcheck", None, None, None)["passed"]


def _fake_sanitizer(tmp_path, errors_for):
    """A stand-in compute-sanitizer: runs the workload's --list instead of the workload and prints a summary."""
    fake = tmp_path / "compute-sanitizer"
    fake.write_text(f"""#!/usr/bin/env bash
if [ "$1" = "--version" ]; then echo "fake sanitizer 1.0"; exit 0; fi
tool=memcheck; app=()
while [ $# -gt 0 ]; do case $1 in
  --tool) tool=$2; shift 2;; --kernel-name|--padding|--racecheck-report|--print-limit) shift 2;;
  *) app+=("$1"); shift;; esac; done
"${{app[0]}}" "${{app[1]}}" --list >/dev/null || exit 3
echo "RELIABILITY-SCENARIO variant/x"
n=0; [ "$tool" = "{errors_for}" ] && n=3
[ $n -gt 0 ] && echo "========= Invalid __global__ write of size 4 bytes" && \\
  echo "=========     at void flashseek::sm90::combine_splits_kernel<X>(FwdParams)+0x10"
echo "RELIABILITY-WORKLOAD scenarios=1 calls=1 failed=0 skipped=0"
echo "========= ERROR SUMMARY: $n errors"
""")
    fake.chmod(0o755)
    return fake


@pytest.mark.skipif(shutil.which("bash") is None, reason="bash is not installed")
def test_run_sanitizers_driver_with_a_stand_in_sanitizer(tmp_path):
    fake = _fake_sanitizer(tmp_path, errors_for="synccheck")
    out_dir, js = tmp_path / "san", tmp_path / "san.json"
    env = dict(os.environ, COMPUTE_SANITIZER=str(fake))
    proc = subprocess.run(["bash", str(SCRIPTS / "run_sanitizers.sh"), "--out", str(out_dir), "--json", str(js),
                           "--timeout", "60"], capture_output=True, text=True, env=env, timeout=300)
    assert proc.returncode == 1, proc.stdout + proc.stderr  # synccheck reported errors
    summary = json.loads(js.read_text())
    assert set(summary) == set(rr.SANITIZER_TOOLS)
    for tool, e in summary.items():
        assert e["scenarios"] == 1 and e["version"] == "fake sanitizer 1.0" and e["exit_code"] == 0
        assert e["passed"] == (tool != "synccheck"), (tool, e)
    assert summary["synccheck"]["errors"] == 3 and summary["synccheck"]["flashseek_findings"] == 1
    assert (out_dir / "memcheck.log").exists() and (out_dir / "status.txt").read_text().count("\n") == 4


@pytest.mark.skipif(shutil.which("bash") is None, reason="bash is not installed")
def test_run_sanitizers_driver_without_a_sanitizer(tmp_path):
    env = dict(os.environ, COMPUTE_SANITIZER="", PATH="/usr/bin:/bin")
    js = tmp_path / "s.json"
    proc = subprocess.run(["bash", str(SCRIPTS / "run_sanitizers.sh"), "--out", str(tmp_path / "s"), "--json", str(js),
                           "--tools", "memcheck"], capture_output=True, text=True, env=env, timeout=300)
    if "compute-sanitizer not found" not in proc.stdout + proc.stderr:
        pytest.skip("a compute-sanitizer is installed in /usr/bin or /usr/local/cuda/bin here")
    e = json.loads(js.read_text())["memcheck"]
    assert not e["passed"] and "unavailable" in e["reason"]


# ---- pytest results, metrics, the report --------------------------------------------------------------------------

JUNIT = """<?xml version="1.0" encoding="utf-8"?><testsuites><testsuite name="pytest" errors="1" failures="1"
skipped="1" tests="5" time="3.5"><testcase classname="tests.reliability.test_fuzz" name="test_fuzz_case[7]"
time="0.1"/><testcase classname="tests.reliability.test_fuzz" name="test_fuzz_case[8]" time="0.1"><failure
message="AssertionError: fuzz/8/...: FAIL FA3 rule">trace</failure></testcase><testcase classname="x"
name="test_b" time="0.1"><error message="fixture broke">trace</error></testcase><testcase classname="x"
name="test_c" time="0"><skipped message="no GPU">s</skipped></testcase><testcase classname="x" name="test_d"
time="0.2"/></testsuite></testsuites>"""


def test_parse_junit_and_pytest_output():
    j = rr.parse_junit(JUNIT)
    assert (j["tests"], j["passed"], j["failed"], j["errors"], j["skipped"]) == (5, 2, 1, 1, 1)
    assert j["seconds"] == 3.5 and j["skip_reasons"] == ["no GPU"]
    assert j["failures"][0]["test"].endswith("test_fuzz_case[8]") and "FA3" in j["failures"][0]["message"]
    text = "....F\nFAILED tests/x.py::test_a - AssertionError: boom\n1 failed, 4 passed, 2 skipped in 9.25s\n"
    p = rr.parse_pytest_output(text)
    assert (p["tests"], p["passed"], p["failed"], p["skipped"], p["seconds"]) == (7, 4, 1, 2, 9.25)
    assert p["failures"] == [{"test": "tests/x.py::test_a", "outcome": "failed", "message": "AssertionError: boom"}]
    assert rr.parse_pytest_output("Segmentation fault")["tests"] == 0


def test_metrics_roundtrip_and_aggregates(tmp_path, monkeypatch):
    monkeypatch.setenv(rr.METRICS_ENV, str(tmp_path))
    rr.record("fuzz", kind="session", seed=42, cases=3)
    for i, ok in enumerate([True, False, True]):
        rr.record("fuzz", kind="case", case_seed=42 + i, name=f"c{i}", ok=ok, features=["bf16", "paged"],
                  reason=None if ok else "FAIL", replay=f"FLASHSEEK_FUZZ_SEED={42 + i} FLASHSEEK_FUZZ_CASES=1")
    with open(tmp_path / "fuzz.jsonl", "a") as f:
        f.write('{"kind": "case", "trunc')  # a line cut by a crash is skipped
    lines = rr.read_metrics(str(tmp_path), "fuzz")
    agg = rr.aggregate("fuzz", lines)
    assert agg["cases"] == 3 and agg["failures"] == 1 and agg["seed"] == 42 and agg["features"]["paged"] == 3
    assert agg["failed_cases"][0]["case_seed"] == 43
    monkeypatch.delenv(rr.METRICS_ENV)
    rr.record("fuzz", kind="case")  # no directory: nothing written, nothing raised
    g = rr.aggregate("graph_replay", [
        dict(kind="graph", name="mixed", main=True, replays=1000, mismatches=0, bitwise_mismatches=2,
             reference_checks=11, reference_failures=0, max_abs_diff=3e-7),
        dict(kind="graph", name="splits", main=False, replays=200, mismatches=1)])
    assert g["replays"] == 1000 and g["mismatches"] == 0 and g["bitwise_mismatches"] == 2
    assert g["configs"]["splits"]["mismatches"] == 1
    h = rr.aggregate("hostile", [dict(kind="case", name="a", ok=True, guards_ok=True, followup_ok=True),
                                 dict(kind="case", name="b", ok=False, crashed=True, reason="CUDA error"),
                                 dict(kind="checker", name="a", ok=True)])
    assert (h["cases"], h["failures"], h["crashes"], h["checker_cases"], h["checker_misses"]) == (2, 1, 1, 1, 0)
    d = rr.aggregate("determinism", [dict(kind="repeat", name="x", runs=100, ok=True, planned_splits=16),
                                     dict(kind="invariance", name="y", batches=12, mismatches=0, ok=True),
                                     dict(kind="layout", name="y", layouts=5, mismatches=1, ok=False)])
    assert d["runs_per_case"] == 100 and d["forced_split_cases"] == 1 and d["layout_invariance"]["mismatches"] == 1
    u = rr.aggregate("unused_slots", [dict(kind="garbage", ok=True), dict(kind="nan", ok=False, name="n")])
    assert u["cases"] == 1 and u["nan_propagation"] == {"cases": 1, "failures": 1}
    with pytest.raises(ValueError):
        rr.aggregate("nope", [])


def test_check_entries_and_report(tmp_path):
    ok_tests = dict(tests=3, passed=3, failed=0, errors=0, skipped=0, skip_reasons=[])
    good = rr.check_entry("graph_replay", ok_tests, dict(replays=1000, mismatches=0))
    assert good["passed"] and "reason" not in good
    assert not rr.check_entry("graph_replay", ok_tests, dict(replays=1000, mismatches=2))["passed"]
    skipped = rr.check_entry("fuzz", dict(tests=1, passed=0, failed=0, errors=0, skipped=1,
                                          skip_reasons=["no GPU"]), {})
    assert not skipped["passed"] and "no GPU" in skipped["reason"]
    crashed = rr.check_entry("hostile", None, {}, exit_code=-11, error="pytest exited with code -11")
    assert not crashed["passed"] and "-11" in crashed["reason"]
    inv = rr.check_entry("determinism", ok_tests, dict(batch_invariance={"mismatches": 1}))
    assert not inv["passed"]

    sanit = {"memcheck": {"passed": True, "scenarios": 40, "errors": 0}}
    rep = rr.build_report({"graph_replay": good, "sanitizers": sanit}, git_sha="abc", gpu="NVIDIA H200",
                          when="2026-12-01T00:00:00Z", extra={"seconds": float("inf")})
    assert rep["passed"] and rep["failed_checks"] == []
    bad = rr.build_report({"graph_replay": good, "sanitizers": {"racecheck": {"passed": False}}}, git_sha="abc",
                          gpu="g", when="w")
    assert not bad["passed"] and bad["failed_checks"] == ["sanitizers (racecheck)"]
    assert not rr.build_report({}, git_sha="a", gpu="g", when="w")["passed"]
    path = tmp_path / "sub" / "reliability.json"
    rr.write_report(str(path), rep)
    back = json.loads(path.read_text())  # strict JSON: inf became a string
    assert back["seconds"] == "inf" and back["checks"]["graph_replay"]["replays"] == 1000
    for key in ("git_sha", "gpu", "when", "checks", "passed"):
        assert key in back
    assert "graph_replay" in rr.summary_table(back) and "memcheck" in rr.summary_table(back)


def test_run_all_collects_a_check_and_merges_reports(tmp_path):
    import run_all
    (tmp_path / "m").mkdir()
    junit = tmp_path / "fuzz.xml"
    junit.write_text(JUNIT)
    with open(tmp_path / "m" / "fuzz.jsonl", "w") as f:
        f.write(json.dumps(dict(kind="session", seed=9)) + "\n")
        f.write(json.dumps(dict(kind="case", case_seed=9, ok=True, features=["fp16"])) + "\n")
    e = run_all.collect_check("fuzz", str(junit), "", str(tmp_path / "m"), 1, 3.0)
    assert not e["passed"] and e["seed"] == 9 and e["cases"] == 1 and e["tests"]["failed"] == 1
    died = run_all.collect_check("fuzz", str(tmp_path / "missing.xml"), "..F\nFatal Python error",
                                 str(tmp_path / "m"), -6, 2.0)
    assert not died["passed"] and "code -6" in died["reason"]
    timed = run_all.collect_check("fuzz", str(tmp_path / "missing.xml"), "", str(tmp_path / "m"), None, 600.0)
    assert "timed out" in timed["reason"]

    ok_tests = dict(tests=1, passed=1, failed=0, errors=0, skipped=0)
    a = rr.build_report({"fuzz": rr.check_entry("fuzz", ok_tests, dict(cases=500, failures=0, seed=1))},
                        git_sha="s", gpu="NVIDIA H200", when="2026-12-01T00:00:00Z")
    b = rr.build_report({"sanitizers": {"memcheck": {"passed": True}, "initcheck": {"passed": True}}},
                        git_sha="s", gpu="NVIDIA H200", when="2026-12-01T01:00:00Z")
    for name, rep in (("a", a), ("b", b)):
        rr.write_report(str(tmp_path / f"{name}.json"), rep)
    out = tmp_path / "merged.json"
    rc = run_all.main(["--merge-from", str(tmp_path / "a.json"), str(tmp_path / "b.json"), "--out", str(out)])
    merged = json.loads(out.read_text())
    assert rc == 0 and merged["passed"] and set(merged["checks"]) == {"fuzz", "sanitizers"}
    assert merged["when"] == "2026-12-01T01:00:00Z" and merged["checks"]["fuzz"]["cases"] == 500
