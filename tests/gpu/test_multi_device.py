"""One process, two devices: every kernel family's first launch on a second device (after the same kernels ran on
the first) is correct. The kernels' shared-memory limit is state of a device's context; set once per process, the
second device's first launch failed with "invalid argument" (src/host/per_device.h). Skips on a one-GPU machine."""

from gpu_support import assert_passes, require_kernels, session_seed

require_kernels()

import pytest  # noqa: E402
import torch  # noqa: E402

from flashseek.testing.grid import make_scenario  # noqa: E402
from flashseek.testing.inputs import make_inputs  # noqa: E402
from flashseek.testing.run import check_call, prepare_call  # noqa: E402

if torch.cuda.device_count() < 2:
    pytest.skip(f"needs two GPUs in one process; this machine shows {torch.cuda.device_count()}",
                allow_module_level=True)

_lse = dict(out_given=False, return_lse=True)
# One of each launcher: the one-tile prefill, the persistent kernel, a split decode and its combine, the
# keys-as-M decode tile, the MLA decode kernel.
CASES = [
    make_scenario("prefill-dense", "L8", "q2k", **_lse),
    make_scenario("prefill-varlen", "L8", "16q512", kv_layout="varlen", **_lse),
    make_scenario("decode-splitkv", "L8", "2q1s16k", suffix=["p16"], **_lse),
    make_scenario("decode-paged", "L70t8", "64q1s2k", suffix=["p16"], **_lse),
    make_scenario("mla", "MLAd16", "8q1s2k", suffix=["p64"], page_size=64, q_v=True, out_given=False),
]


@pytest.mark.parametrize("scenario", CASES, ids=[s.name for s in CASES])
def test_second_device_after_the_first(scenario):
    seed = session_seed()
    for device in ("cuda:0", "cuda:1"):
        with torch.cuda.device(torch.device(device)):
            inputs = make_inputs(scenario, device, seed=seed)
            out, lse = prepare_call(scenario, inputs)()
            torch.cuda.synchronize()
            assert out.device == torch.device(device)
            assert_passes(scenario, check_call(scenario, inputs, out, lse), seed)
