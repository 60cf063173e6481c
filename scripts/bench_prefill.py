#!/usr/bin/env python3
"""Prefill A/B timing: d64/d128/d256 x causal/full at 2x8k, 8x2k and 2x1k tokens, once per FLASHSEEK_EXPERIMENT
value given on the command line (one subprocess each: the library reads the variable once), plus cuDNN (PyTorch
SDPA) once as the reference. CUDA events, warm-up, median of --reps launches. Prints TFLOP/s per case and value,
and each variant's max |out - cuDNN| as a sanity check (bf16; expect ~1e-2 or below).

  python3 scripts/bench_prefill.py 0 1 2 3        # experiment values; "default" = variable unset
  options: --reps N (20), --quick (2x8k only), --no-ref (skip cuDNN)
Values (docs/perf-log.md, entry 4): bit 1 = P*V/softmax overlap, bit 2 = skip the O rescale when no max
changed; unset = the default (3).
"""
import argparse
import json
import os
import subprocess
import sys

D_HEADS = {64: (32, 32), 128: (32, 8), 256: (16, 16)}  # d -> (query heads, KV heads)
SHAPES = [(2, 8192), (8, 2048), (2, 1024)]


def cases(quick):
    for batch, seqlen in (SHAPES[:1] if quick else SHAPES):
        for d in (64, 128, 256):
            for causal in (False, True):
                yield batch, seqlen, d, causal


def case_name(batch, seqlen, d, causal):
    hq, hkv = D_HEADS[d]
    return f"{batch}x{seqlen} d{d} {hq}/{hkv} {'causal' if causal else 'full'}"


def child(args):
    import torch
    import torch.nn.functional as F

    torch.manual_seed(0)
    dev = "cuda"
    results = {}
    if args.role == "ours":
        sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
        import flashseek
        reason = flashseek.unavailable_reason()
        if reason:
            print(json.dumps({"error": reason}))
            return
    else:
        from torch.nn.attention import SDPBackend, sdpa_kernel

    def time_it(fn):
        for _ in range(5):
            fn()
        starts = [torch.cuda.Event(enable_timing=True) for _ in range(args.reps)]
        ends = [torch.cuda.Event(enable_timing=True) for _ in range(args.reps)]
        for s, e in zip(starts, ends):
            s.record()
            fn()
            e.record()
        torch.cuda.synchronize()
        times = sorted(s.elapsed_time(e) for s, e in zip(starts, ends))
        return times[len(times) // 2]  # ms

    for batch, seqlen, d, causal in cases(args.quick):
        hq, hkv = D_HEADS[d]
        total = batch * seqlen
        g = torch.Generator(device=dev).manual_seed(1234 + d + seqlen)
        q = torch.randn(total, hq, d, device=dev, dtype=torch.bfloat16, generator=g)
        k = torch.randn(total, hkv, d, device=dev, dtype=torch.bfloat16, generator=g)
        v = torch.randn(total, hkv, d, device=dev, dtype=torch.bfloat16, generator=g)
        flops = 4 * batch * hq * seqlen * seqlen * d * (0.5 if causal else 1.0)
        qd = q.view(batch, seqlen, hq, d).transpose(1, 2)
        kd = k.view(batch, seqlen, hkv, d).transpose(1, 2).repeat_interleave(hq // hkv, 1)
        vd = v.view(batch, seqlen, hkv, d).transpose(1, 2).repeat_interleave(hq // hkv, 1)
        if args.role == "ours":
            cu = torch.arange(0, total + 1, seqlen, device=dev, dtype=torch.int32)
            out = torch.empty_like(q)
            fn = lambda: flashseek.flash_attn_varlen_func(q, k, v, seqlen, cu, seqlen, cu_seqlens_k=cu,
                                                         causal=causal, out=out)
            fn()
            # Reference for the sanity check: SDPA (math on fp32 for the small case, else whatever it picks).
            ref = F.scaled_dot_product_attention(qd, kd, vd, is_causal=causal)
            err = (out.view(batch, seqlen, hq, d).transpose(1, 2).float() - ref.float()).abs().max().item()
        else:
            def fn():
                with sdpa_kernel(SDPBackend.CUDNN_ATTENTION):
                    return F.scaled_dot_product_attention(qd, kd, vd, is_causal=causal)
            err = 0.0
        ms = time_it(fn)
        results[case_name(batch, seqlen, d, causal)] = {"tflops": flops / ms / 1e9, "ms": ms, "err": err}
        del q, k, v, qd, kd, vd
    print(json.dumps(results))


def run_child(role, value, args):
    env = dict(os.environ)
    env.pop("FLASHSEEK_EXPERIMENT", None)
    if value != "default":
        env["FLASHSEEK_EXPERIMENT"] = value
    cmd = [sys.executable, os.path.abspath(__file__), "--child", role, "--reps", str(args.reps)]
    if args.quick:
        cmd.append("--quick")
    r = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=300)
    lines = [l for l in r.stdout.splitlines() if l.startswith("{")]
    if r.returncode != 0 or not lines:
        print(f"[{role} {value}] failed (rc {r.returncode}):\n{r.stdout[-2000:]}\n{r.stderr[-3000:]}", file=sys.stderr)
        return None
    data = json.loads(lines[-1])
    if "error" in data:
        print(f"[{role} {value}] {data['error']}", file=sys.stderr)
        return None
    return data


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("values", nargs="*", default=["default"])
    ap.add_argument("--reps", type=int, default=20)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--no-ref", action="store_true")
    ap.add_argument("--child", choices=["ours", "cudnn"], dest="role")
    args = ap.parse_args()
    if args.role:
        child(args)
        return

    columns = {}
    if not args.no_ref:
        columns["cudnn"] = run_child("cudnn", "default", args)
    for value in args.values:
        columns[f"x={value}"] = run_child("ours", value, args)
    columns = {k: v for k, v in columns.items() if v}
    if not columns:
        sys.exit("no results")
    names = [case_name(*c) for c in cases(args.quick)]
    head = f"{'case (TFLOP/s)':34s}" + "".join(f"{k:>10s}" for k in columns)
    ours = [k for k in columns if k != "cudnn"]
    if "cudnn" in columns and ours:
        head += "".join(f"{'/cudnn ' + k[2:]:>12s}" for k in ours)
    print(head)
    for n in names:
        row = f"{n:34s}" + "".join(f"{columns[k][n]['tflops']:10.1f}" for k in columns)
        if "cudnn" in columns:
            row += "".join(f"{columns[k][n]['tflops'] / columns['cudnn'][n]['tflops']:12.3f}" for k in ours)
        print(row)
    print("max |out - sdpa| per value: " +
          ", ".join(f"{k}: {max(columns[k][n]['err'] for n in names):.2e}" for k in ours))
    if len(ours) > 1:
        base = ours[0]
        for k in ours[1:]:
            import math
            gm = math.exp(sum(math.log(columns[k][n]["tflops"] / columns[base][n]["tflops"]) for n in names) /
                          len(names))
            print(f"geomean {k} / {base}: {gm:.3f}")


if __name__ == "__main__":
    main()
