"""scripts/bench_decode.py's sweep (perf-log entry 115): the scenarios a HEADS:BATCHES:LENGTHS spec names, and the
fit time = t0 + bytes / rate that separates a fixed cost from a streaming rate."""

import importlib.util
import sys
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "bench_decode.py"


@pytest.fixture(scope="module")
def bench():
    spec = importlib.util.spec_from_file_location("bench_decode", SCRIPT)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_sweep_names_each_batch_and_length(bench):
    got = bench.sweep_scenarios("L8:1,4:8k,128k")
    assert [s.name for s in got] == ["decode-splitkv/L8/q1s8k/p16/sweep", "decode-splitkv/L8/q1s128k/p16/sweep",
                                     "decode-splitkv/L8/4q1s8k/p16/sweep", "decode-splitkv/L8/4q1s128k/p16/sweep"]
    four = got[3]
    assert four.seqs == ((1, 131072),) * 4 and four.num_splits == 0 and four.num_heads_kv == 8
    # K and V of every key of every KV head, 16-bit: 4 x 128k x 8 x (128 + 128) x 2 bytes
    assert bench.kv_bytes(four) == 4 * 131072 * 8 * 256 * 2
    assert [bench.batch_of(s.name) for s in got] == [1, 1, 4, 4]


def test_sweep_rejects_a_malformed_spec(bench):
    with pytest.raises(SystemExit, match="HEADS:BATCHES:LENGTHS"):
        bench.sweep_scenarios("L8:1")


def test_fit_recovers_a_fixed_cost_and_a_rate(bench):
    # 20 us + bytes at 4000 GB/s (4 MB per us)
    points = [(b, 20.0 + b / 4e6) for b in (1e8, 3e8, 5e8)]
    t0, rate = bench.linear_fit(points)
    assert t0 == pytest.approx(20.0) and rate == pytest.approx(4000.0)
    assert bench.linear_fit(points[:1]) is None
    assert bench.linear_fit([(1e8, 30.0), (1e8, 31.0)]) is None


def test_fits_print_per_batch(bench, capsys):
    recs = {f"decode-splitkv/L8/{b}q1s{k}k/p16/sweep": {
        "name": f"decode-splitkv/L8/{b}q1s{k}k/p16/sweep", "bytes": n * k * 1e6,
        "us": 50.0 + n * k * 1e6 / 3e6, "cudnn_us": 10.0 + n * k * 1e6 / 4e6} for b, n in (("", 1), ("4", 4))
        for k in (8, 32)}
    bench.print_fits({"default": recs}, ["default"])
    out = capsys.readouterr().out.splitlines()
    assert out[1].split() == ["batch", "1:", "cuDNN", "t0", "10.0", "rate", "4000", "|", "default", "t0", "50.0",
                              "rate", "3000"]
    assert out[2].startswith("  batch   4:")


if __name__ == "__main__":
    sys.exit(pytest.main([__file__, "-q"]))
