"""Under CUDA graphs the host integers are frozen at capture and each step's work must come from device tensors
(semantics.md). Capture one call, then change the device data in place as the engine does between steps (new q,
shorter seqused_k, fresh scheduler metadata in the same buffer) and replay: the replay must match the reference
for the new data."""

from gpu_support import require_kernels, session_seed

require_kernels()

import pytest  # noqa: E402
import torch  # noqa: E402

import flashseek  # noqa: E402
from flashseek.testing.grid import make_scenario  # noqa: E402
from flashseek.testing.inputs import make_inputs  # noqa: E402
from flashseek.testing.run import check_call  # noqa: E402

CASES = [
    make_scenario("decode-paged", "L8", "32q1s2k", suffix=["p16", "md"], use_scheduler_metadata=True),
    make_scenario("decode-splitkv", "L70t8", "2q1s32k", suffix=["p16", "splits32-md"], num_splits=32,
                  use_scheduler_metadata=True, return_lse=True),
    make_scenario("spec-decode", "L8", "16q4s2k", suffix=["p16"], return_lse=True),
    make_scenario("mixed", "L70t4", "q500s2k_32q1s2k", suffix=["p16", "md"], use_scheduler_metadata=True),
    make_scenario("sinks", "OSSt8", "16q1s4k", suffix=["p16", "sinks"], sinks=True),
]


def _capture(fn):
    stream = torch.cuda.Stream()
    stream.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(stream):
        fn()  # warm-up outside capture (lazy initialisation must not happen inside it)
    torch.cuda.current_stream().wait_stream(stream)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        result = fn()
    return graph, result


@pytest.mark.parametrize("scenario", CASES, ids=[s.name for s in CASES])
def test_graph_replay_follows_device_data(scenario):
    seed = session_seed()
    inputs = make_inputs(scenario, "cuda", seed=seed)
    kw = dict(inputs.kwargs)
    md = None
    if inputs.metadata_kwargs is not None:
        md = flashseek.get_scheduler_metadata(**inputs.metadata_kwargs)
        kw["scheduler_metadata"] = md

    def step():
        res = flashseek.flash_attn_varlen_func(**kw)
        return res if scenario.return_lse else (res, None)

    graph, (out, lse) = _capture(step)
    graph.replay()
    torch.cuda.synchronize()
    res = check_call(scenario, inputs, out, lse)
    assert res.correct, f"{scenario.name} first replay (seed {seed}): {res.summary()}"

    # the next step: new queries, every sequence one key shorter or cut to a third (kept >= its q length)
    gen = torch.Generator(device="cuda").manual_seed(seed + 1)
    inputs.ref_q.copy_(torch.randn(inputs.ref_q.shape, generator=gen, device="cuda").to(inputs.ref_q.dtype))
    new_lens = [max(q, k // 3 if i % 2 else k - 1) for i, (q, k) in enumerate(zip(inputs.q_lens, inputs.k_lens))]
    kw["seqused_k"].copy_(torch.tensor(new_lens, dtype=torch.int32))
    if md is not None:
        md.copy_(flashseek.get_scheduler_metadata(**inputs.metadata_kwargs))  # cache_seqlens is seqused_k
    inputs.k_lens = new_lens
    inputs._seq_k = [k[:n] for k, n in zip(inputs._seq_k, new_lens)]
    inputs._seq_v = [v[:n] for v, n in zip(inputs._seq_v, new_lens)]
    graph.replay()
    torch.cuda.synchronize()
    res = check_call(scenario, inputs, out, lse)
    assert res.correct, f"{scenario.name} replay after new device data (seed {seed}): {res.summary()}"
