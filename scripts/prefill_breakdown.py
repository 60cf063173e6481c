#!/usr/bin/env python3
"""Stage-skip matrix of the bf16 d128 prefill kernel (docs/perf-log.md entry 9): times the kernel with one stage
left out at a time (FLASHSEEK_EXPERIMENT = LoopFlags value; one subprocess per value, the library reads the
variable once per process) and prints us, TFLOP/s and the difference to the full (default) kernel per case.
d128, 32 query / 8 KV heads, 2 x 8192 tokens (varlen, dense K/V), causal and non-causal. CUDA events, cold L2
(a 256 MB buffer zeroed before each repetition, outside the timed region), median of --reps.

  python3 scripts/prefill_breakdown.py                 # the whole matrix and the candidate fixes
  python3 scripts/prefill_breakdown.py cpasync 3 515   # chosen values ("default" = variable unset)
  options: --reps N (20), --ref (cuDNN too), --cases full,causal
  under ncu: --ncu VALUE [--case full|causal]: no subprocesses; sets the variable, warms up, then one launch
             between cudaProfilerStart/Stop (ncu --profile-from-start off --launch-count 1).

Values (FLASHSEEK_EXPERIMENT; numbers are LoopFlags bits, every one keeps the base bits 1539 = 1 overlap +
2 skip rescale + 512 precomputed descriptors + 1024 4-chain row max unless it says otherwise):
  stage-skip (timing only, outputs wrong): 1543 no softmax, 1547 no P*V, 1555 no QK^T, 1563 no GEMMs, 1571 the
  cp.async producer copying only the first kStages blocks, 1575 no softmax + no copies, 1599 barriers only,
  1603 no pingpong, 1667 one consumer warpgroup (64 of 128 rows: its FLOP count is half; the table's TFLOP/s
  counts the rows it does)
  exact (max |out - default| printed, expect 0): cpasync (every K/V block by cp.async: the producer before
  entry 13), 3 (no precomputed descriptors, 1-chain row max), 515, 1027, 3587 (persistent CTAs, entry 14),
  1539 (the default without the warpgroup index broadcast from lane 0, entry 19; the stage-skip values are
  relative to 1539, so compare them with it, not with the default 5635)

Correctness (values in EXACT, not timed): besides the timed shape, every such child runs a small varlen batch
whose sequences end in partial key blocks (the cp.async path of the TMA producer), causal and not, and must
reproduce the default's output bitwise on all of it.
"""
import argparse
import json
import os
import subprocess
import sys

MATRIX = ["default", "1543", "1547", "1555", "1563", "1571", "1575", "1599", "1603", "1667",
          "cpasync", "3", "515", "1027", "3587"]
EXACT = {"default", "cpasync", "3", "515", "1027", "3587", "1539"}
APPROX = set()
# The correctness batch: sequence lengths with partial last blocks (and one-block ones).
CHECK_SEQLENS = [1000, 77, 160, 161, 319, 2085, 128, 129]
MEANING = {
    "default": "full kernel",
    "1543": "- softmax (mask/max/exp/sum/rescale)",
    "1547": "- P*V GEMM",
    "1555": "- QK^T GEMM",
    "1563": "- both GEMMs",
    "1571": "cp.async producer, copies after kStages",
    "1575": "- softmax - copies (GEMMs+sync)",
    "1599": "barriers only",
    "1603": "- pingpong",
    "1667": "one consumer WG (half rows)",
    "cpasync": "cp.async producer (before entry 13)",
    "3": "- desc bases - 4-chain max",
    "515": "- 4-chain max",
    "1027": "- desc bases",
    "3587": "persistent CTAs (entry 14)",
    "1539": "- warpgroup index broadcast (entry 19)",
}
BATCH, SEQLEN, HQ, HKV, D = 2, 8192, 32, 8, 128


def case_list(names):
    return [c for c in ("full", "causal") if c in names]


def flops(causal, value):
    f = 4 * BATCH * HQ * SEQLEN * SEQLEN * D * (0.5 if causal else 1.0)
    return f / 2 if value == "1667" else f  # one consumer: 64 of each CTA's 128 rows


def time_cold(torch, fn, flush, reps):
    """Median and quartiles (us) of `reps` launches, each after zeroing a 256 MB buffer (cold L2), CUDA events."""
    times = []
    for _ in range(reps):
        flush.zero_()
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record()
        fn()
        e.record()
        e.synchronize()
        times.append(s.elapsed_time(e) * 1e3)
    times.sort()
    return {"us": times[len(times) // 2], "q1": times[len(times) // 4], "q3": times[3 * len(times) // 4]}


def check_outputs(flashseek, torch, causal):
    """The correctness batch (CHECK_SEQLENS): (sha1 of the bf16 output, max |out - fp32 reference|)."""
    import hashlib
    dev = "cuda"
    g = torch.Generator(device=dev).manual_seed(4321)
    total = sum(CHECK_SEQLENS)
    q = torch.randn(total, HQ, D, device=dev, dtype=torch.bfloat16, generator=g)
    k = torch.randn(total, HKV, D, device=dev, dtype=torch.bfloat16, generator=g)
    v = torch.randn(total, HKV, D, device=dev, dtype=torch.bfloat16, generator=g)
    cu_list = [0]
    for n in CHECK_SEQLENS:
        cu_list.append(cu_list[-1] + n)
    cu = torch.tensor(cu_list, device=dev, dtype=torch.int32)
    out = flashseek.flash_attn_varlen_func(q, k, v, max(CHECK_SEQLENS), cu, max(CHECK_SEQLENS), cu_seqlens_k=cu,
                                           causal=causal)
    torch.cuda.synchronize()
    err = 0.0
    for i, n in enumerate(CHECK_SEQLENS):
        s, e = cu_list[i], cu_list[i + 1]
        qs = q[s:e].float()
        ks = k[s:e].float().repeat_interleave(HQ // HKV, dim=1)
        vs = v[s:e].float().repeat_interleave(HQ // HKV, dim=1)
        sc = torch.einsum("qhd,khd->hqk", qs, ks) * D ** -0.5
        if causal:
            sc.masked_fill_(torch.ones(n, n, device=dev, dtype=torch.bool).triu(1), float("-inf"))
        ref = torch.einsum("hqk,khd->qhd", sc.softmax(-1), vs)
        err = max(err, (out[s:e].float() - ref).abs().nan_to_num(float("inf")).max().item())
    return hashlib.sha1(out.view(torch.int16).cpu().numpy().tobytes()).hexdigest(), err


def child(args):
    import torch

    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
    import flashseek
    reason = flashseek.unavailable_reason()
    if reason:
        print(json.dumps({"error": reason}))
        return
    dev = "cuda"
    total = BATCH * SEQLEN
    g = torch.Generator(device=dev).manual_seed(1234)
    q = torch.randn(total, HQ, D, device=dev, dtype=torch.bfloat16, generator=g)
    k = torch.randn(total, HKV, D, device=dev, dtype=torch.bfloat16, generator=g)
    v = torch.randn(total, HKV, D, device=dev, dtype=torch.bfloat16, generator=g)
    cu = torch.arange(0, total + 1, SEQLEN, device=dev, dtype=torch.int32)
    out = torch.empty_like(q)
    flush = torch.empty(256 * 1024 * 1024, dtype=torch.uint8, device=dev)

    def make_fn(causal):
        return lambda: flashseek.flash_attn_varlen_func(q, k, v, SEQLEN, cu, SEQLEN, cu_seqlens_k=cu, causal=causal,
                                                        out=out)

    if args.ncu is not None:
        import torch.cuda.profiler as profiler
        fn = make_fn(args.case == "causal")
        for _ in range(3):
            fn()
        torch.cuda.synchronize()
        flush.zero_()
        profiler.start()
        fn()
        torch.cuda.synchronize()
        profiler.stop()
        print(json.dumps({"ncu": os.environ.get("FLASHSEEK_EXPERIMENT", "default"), "case": args.case}))
        return

    results = {}
    for case in case_list(args.cases):
        fn = make_fn(case == "causal")
        for _ in range(3):
            fn()
        torch.cuda.synchronize()
        digest = out.float()
        results[case] = time_cold(torch, fn, flush, args.reps)
        if args.tag in EXACT or args.tag in APPROX:
            # Fingerprint of the whole output (bitwise) and every 97th token row for a max-difference readout.
            import hashlib
            path = os.path.join(args.tmp, f"out_{args.tag}_{case}.pt")
            torch.save(digest[::97].cpu(), path)
            results[case]["out"] = path
            results[case]["sha1"] = hashlib.sha1(out.view(torch.int16).cpu().numpy().tobytes()).hexdigest()
            results[case]["check_sha1"], results[case]["check_err"] = check_outputs(flashseek, torch,
                                                                                    case == "causal")
    print(json.dumps(results))


def cudnn_child(args):
    import torch
    import torch.nn.functional as F
    from torch.nn.attention import SDPBackend, sdpa_kernel

    dev = "cuda"
    g = torch.Generator(device=dev).manual_seed(1234)
    q = torch.randn(BATCH, HQ, SEQLEN, D, device=dev, dtype=torch.bfloat16, generator=g)
    k = torch.randn(BATCH, HKV, SEQLEN, D, device=dev, dtype=torch.bfloat16, generator=g).repeat_interleave(HQ // HKV, 1)
    v = torch.randn(BATCH, HKV, SEQLEN, D, device=dev, dtype=torch.bfloat16, generator=g).repeat_interleave(HQ // HKV, 1)
    flush = torch.empty(256 * 1024 * 1024, dtype=torch.uint8, device=dev)
    results = {}
    for case in case_list(args.cases):
        def fn():
            with sdpa_kernel(SDPBackend.CUDNN_ATTENTION):
                return F.scaled_dot_product_attention(q, k, v, is_causal=case == "causal")
        for _ in range(3):
            fn()
        results[case] = time_cold(torch, fn, flush, args.reps)
    print(json.dumps(results))


def run_child(value, args, role="ours"):
    env = dict(os.environ)
    env.pop("FLASHSEEK_EXPERIMENT", None)
    if value != "default":
        env["FLASHSEEK_EXPERIMENT"] = value
    cmd = [sys.executable, os.path.abspath(__file__), "--child", role, "--reps", str(args.reps), "--cases",
           args.cases, "--tmp", args.tmp, "--tag", value]
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=180)
    except subprocess.TimeoutExpired:
        print(f"[{value}] timed out (a hang in a variant: deadlock?)", file=sys.stderr)
        return None
    lines = [l for l in r.stdout.splitlines() if l.startswith("{")]
    if r.stderr.strip():
        print(f"[{value}] stderr: {r.stderr.strip()[-600:]}", file=sys.stderr)
    if r.returncode != 0 or not lines:
        print(f"[{value}] failed (rc {r.returncode}):\n{r.stdout[-1500:]}", file=sys.stderr)
        return None
    data = json.loads(lines[-1])
    if "error" in data:
        print(f"[{value}] {data['error']}", file=sys.stderr)
        return None
    return data


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("values", nargs="*")
    ap.add_argument("--reps", type=int, default=20)
    ap.add_argument("--ref", action="store_true")
    ap.add_argument("--cases", default="full,causal")
    ap.add_argument("--ncu", default=None, help="one launch of this value for ncu (no subprocess)")
    ap.add_argument("--case", default="full", choices=["full", "causal"])
    ap.add_argument("--child", choices=["ours", "cudnn"], dest="role")
    ap.add_argument("--tmp", default=None)
    ap.add_argument("--tag", default="")
    args = ap.parse_args()
    if args.ncu is not None:
        if args.ncu != "default":
            os.environ["FLASHSEEK_EXPERIMENT"] = args.ncu
        else:
            os.environ.pop("FLASHSEEK_EXPERIMENT", None)
        child(args)
        return
    if args.role == "ours":
        child(args)
        return
    if args.role == "cudnn":
        cudnn_child(args)
        return

    import tempfile
    import time
    args.tmp = tempfile.mkdtemp(prefix="flashseek_breakdown_")
    values = args.values or MATRIX
    if "default" not in values:
        values = ["default"] + values
    t0 = time.time()
    columns = {}
    for value in values:
        columns[value] = run_child(value, args)
    ref = run_child("default", args, role="cudnn") if args.ref else None
    cases = case_list(args.cases)

    # Exactness of the fix variants against the default's output (bit-identical expected, on the timed shape and
    # on the correctness batch); the block_n 160 variants against the fp32 reference (within 2x the default's).
    import torch
    errs = {}
    bad = []
    base_col = columns.get("default")
    for value in values:
        col = columns.get(value)
        if col is None or value == "default" or base_col is None or (value not in EXACT and value not in APPROX):
            continue
        sampled = max((torch.load(col[c]["out"]) - torch.load(base_col[c]["out"]))
                      .abs().nan_to_num(float("inf")).max().item() for c in cases)
        if value in EXACT:
            if all(col[c]["sha1"] == base_col[c]["sha1"] and col[c]["check_sha1"] == base_col[c]["check_sha1"]
                   for c in cases):
                errs[value] = "identical"
            else:  # differs somewhere: the largest difference on the sampled rows (may be 0 if it missed them)
                errs[value] = f"{sampled:.1e}" if sampled > 0 else "differs"
                bad.append(value)
        else:
            ok = all(col[c]["check_err"] <= 2 * base_col[c]["check_err"] + 1e-6 for c in cases)
            errs[value] = f"{'~' if ok else 'BAD '}{sampled:.1e}"
            if not ok:
                bad.append(value)
            print(f"[{value}] max |out - fp32 ref| on the check batch: "
                  + ", ".join(f"{c} {col[c]['check_err']:.2e} (default {base_col[c]['check_err']:.2e})"
                              for c in cases) + f"; max |out - default| on the timed shape's sampled rows {sampled:.2e}")

    for case in cases:
        base = columns.get("default")
        base_us = base[case]["us"] if base else None
        print(f"\n== d128 {HQ}/{HKV} heads, {BATCH} x {SEQLEN} tokens, {case}"
              + (f"; cuDNN {ref[case]['us']:.0f} us = {flops(case == 'causal', 'default') / ref[case]['us'] / 1e6:.0f}"
                 f" TFLOP/s" if ref else ""))
        print(f"{'value':>7s} {'variant':38s} {'us':>8s} {'+-iqr/2':>8s} {'TFLOP/s':>8s} {'d us':>8s} {'d %':>7s}"
              f" {'exact':>9s}")
        for value in values:
            col = columns.get(value)
            if col is None:
                print(f"{value:>7s} {MEANING.get(value, ''):38s} {'failed':>8s}")
                continue
            us = col[case]["us"]
            spread = (col[case]["q3"] - col[case]["q1"]) / 2
            tf = flops(case == "causal", value) / us / 1e6
            d = us - base_us if base_us else float("nan")
            pct = 100 * d / base_us if base_us else float("nan")
            ex = errs.get(value, "")
            print(f"{value:>7s} {MEANING.get(value, ''):38s} {us:8.1f} {spread:8.1f} {tf:8.1f} {d:+8.1f} {pct:+6.1f}%"
                  f" {ex:>9s}")
    print(f"\n(differences: variant - full kernel; negative = the stage left out cost that much.) "
          f"{time.time() - t0:.0f} s")
    if bad:
        print("NOT CORRECT (exact variants that differ from the default, block_n 160 ones off the reference): "
              + ", ".join(bad))


if __name__ == "__main__":
    main()
