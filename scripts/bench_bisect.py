# Focused timing for a bisect: python bench.py <label>; flashseek from PYTHONPATH.
import sys, torch, flashseek
torch.manual_seed(0)
dev = "cuda"
flush = torch.empty(256 << 20, dtype=torch.int8, device=dev)
def timeit(fn, reps=25):
    for _ in range(3): fn()
    ts = []
    for _ in range(reps):
        flush.zero_()
        a = torch.cuda.Event(enable_timing=True); b = torch.cuda.Event(enable_timing=True)
        a.record(); fn(); b.record(); torch.cuda.synchronize(); ts.append(a.elapsed_time(b) * 1e3)
    ts.sort(); return ts[len(ts) // 2]
def prefill(B, S, hq, hkv, d, causal):
    q = torch.randn(B * S, hq, d, device=dev, dtype=torch.bfloat16)
    k = torch.randn(B * S, hkv, d, device=dev, dtype=torch.bfloat16)
    v = torch.randn_like(k)
    cu = torch.arange(0, B + 1, device=dev, dtype=torch.int32) * S
    return lambda: flashseek.flash_attn_varlen_func(q, k, v, S, cu, S, cu_seqlens_k=cu, causal=causal)
def decode(B, L, hq, hkv, d, page=16, splits=0):
    nb = B * ((L + page - 1) // page)
    kc = torch.randn(nb, page, hkv, d, device=dev, dtype=torch.bfloat16); vc = torch.randn_like(kc)
    bt = torch.randperm(nb, device=dev, dtype=torch.int32).view(B, -1)
    q = torch.randn(B, hq, d, device=dev, dtype=torch.bfloat16)
    cu = torch.arange(0, B + 1, device=dev, dtype=torch.int32)
    su = torch.full((B,), L, device=dev, dtype=torch.int32)
    return lambda: flashseek.flash_attn_varlen_func(q, kc, vc, 1, cu, L, seqused_k=su, block_table=bt, causal=True, num_splits=splits)
cases = [("prefill 2x8k d128 32/8 causal", prefill(2, 8192, 32, 8, 128, True)),
         ("prefill 16x512 d128 32/8 causal", prefill(16, 512, 32, 8, 128, True)),
         ("decode 4x64k L8 p16", decode(4, 65536, 32, 8, 128)),
         ("decode 512x2k L8 p16", decode(512, 2048, 32, 8, 128)),
         ("decode 1x128k L70t8 p16", decode(1, 131072, 8, 1, 128))]
for name, fn in cases:
    print(f"{sys.argv[1]:10s} {name:34s} {timeit(fn):9.1f} us", flush=True)
