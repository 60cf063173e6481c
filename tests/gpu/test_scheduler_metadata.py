"""Precomputed scheduler metadata (get_scheduler_metadata, as vLLM passes it) must not change the result: the
output and LSE with metadata are bitwise equal to those without, for the heuristic split count and a fixed one."""

from gpu_support import require_kernels, session_seed

require_kernels()

import pytest  # noqa: E402
import torch  # noqa: E402

import flashseek  # noqa: E402
from flashseek.testing.grid import make_scenario  # noqa: E402
from flashseek.testing.inputs import make_inputs  # noqa: E402

_common = dict(out_given=False, return_lse=True, use_scheduler_metadata=True)
CASES = [
    make_scenario(f, heads, batch, suffix=["p16", f"splits{n}"], num_splits=n, **_common, **extra)
    for n in (0, 32)
    for f, heads, batch, extra in [
        ("decode-paged", "L8", "64q1s2k", {}),
        ("decode-splitkv", "L70t8", "q1s64k_q1s100", {}),
        ("spec-decode", "L8", "16q4s4k", {}),
        ("mixed", "L70t4", "q1ks3k_32q1s2k", {}),
        ("sinks", "OSSt8", "8q1s8k", {"sinks": True, "window": (127, 0)}),
    ]
]


@pytest.mark.parametrize("scenario", CASES, ids=[s.name for s in CASES])
def test_metadata_gives_bitwise_equal_output(scenario):
    inputs = make_inputs(scenario, "cuda", seed=session_seed())
    kw = dict(inputs.kwargs)
    out_plain, lse_plain = flashseek.flash_attn_varlen_func(**kw)
    md = flashseek.get_scheduler_metadata(**inputs.metadata_kwargs)
    out_md, lse_md = flashseek.flash_attn_varlen_func(**kw, scheduler_metadata=md)
    assert torch.equal(out_plain.view(torch.int16), out_md.view(torch.int16)), (
        f"{scenario.name}: output differs with scheduler metadata (max diff "
        f"{(out_plain.float() - out_md.float()).abs().max().item():.3g})")
    assert torch.equal(lse_plain, lse_md), f"{scenario.name}: LSE differs with scheduler metadata"
