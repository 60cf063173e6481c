"""cluster-combine (docs/perf-log.md entry 120): a split decode on a keys-as-M tile combines its 2 to 8 splits in a
thread-block cluster, through distributed shared memory, instead of the combine kernel. Run under the token (this
module reruns itself in a child process under it): split decodes of each keys-as-M tile, with empty splits, sinks,
windows, LSE and scheduler metadata, pass the reference's rules (and an fp16 one, which keeps the combine kernel:
the keys-as-M tiles are bf16); and the planner does split them in 2 to 8 (so that the cases reach the cluster
path). Under the default the same cases pass through the combine kernel."""

from gpu_support import assert_passes, require_kernels, rerun_module_under, running_under, session_seed

require_kernels()

import pytest  # noqa: E402
import torch  # noqa: E402

import flashseek  # noqa: E402
from flashseek.testing.grid import make_scenario  # noqa: E402
from flashseek.testing.run import check_scenario  # noqa: E402

TOKEN = "cluster-combine"
_lse = dict(out_given=False, return_lse=True)
CASES = [
    make_scenario("decode-paged", "L70t8", "8q1s1k", suffix=["p16", "cluster"], **_lse),      # tile 5, 8 splits
    make_scenario("decode-paged", "OSSt8", "8q1s1k", suffix=["p16", "cluster"], **_lse),      # tile 6, d64
    make_scenario("decode-paged", "L70t8", "32q1s2k", suffix=["p16", "cluster"]),             # 4 splits, no LSE
    make_scenario("decode-splitkv", "L8", "4q1s64k", suffix=["p16", "cluster"], **_lse),      # tile 7, 2 CTAs a SM
    # ragged lengths: splits with no key block (max -inf, sum 0) beside full ones
    make_scenario("decode-paged", "L70t8", "q1s1000_q1s1_q1s64_q1s65_q1s129_q1s3000", suffix=["p16", "cluster"],
                  **_lse),
    make_scenario("sinks", "OSSt8", "8q1s1k", suffix=["p16", "sinks", "cluster"], sinks=True, **_lse),
    make_scenario("sliding-window", "OSSt8", "8q1s8k", suffix=["p16", "w1024", "cluster"], window=(1023, 0),
                  **_lse),
    # fp16: the table's tile and the combine kernel under the token too (keys as M is bf16 only)
    make_scenario("decode-paged", "L70t8", "8q1s1k", suffix=["p16", "fp16", "cluster"], dtype="fp16", **_lse),
    make_scenario("decode-paged", "L70t8", "8q1s1k", suffix=["p16", "md", "cluster"], use_scheduler_metadata=True,
                  num_splits=8, **_lse),
    make_scenario("small-decode", "L8", "q1s1k", suffix=["p16", "cluster"], **_lse),
]


@pytest.mark.skipif(running_under([TOKEN]), reason="the child process runs the cases")
def test_module_under_the_token():
    rerun_module_under(__file__, TOKEN)


@pytest.mark.parametrize("scenario", CASES, ids=[s.name for s in CASES])
def test_split_decode_passes(scenario):
    seed = session_seed()
    assert_passes(scenario, check_scenario(scenario, "cuda", seed), seed)


@pytest.mark.parametrize("heads_q,heads_kv,d,batch,seqlen", [(8, 1, 128, 8, 1024), (8, 1, 64, 8, 1024),
                                                             (32, 8, 128, 4, 65536)])
def test_planner_splits_these_decodes_in_two_to_eight(heads_q, heads_kv, d, batch, seqlen):
    """The cases above reach the cluster path only where the plan splits them in 2 to 8 on a keys-as-M tile."""
    seqlens = torch.full((batch,), seqlen, dtype=torch.int32, device="cuda")
    md = flashseek.get_scheduler_metadata(batch, 1, seqlen, heads_q, heads_kv, d, seqlens, qkv_dtype=torch.bfloat16,
                                          page_size=16)
    header = md[:8].tolist()
    assert 2 <= header[1] <= 8 and header[2] == 64, header
