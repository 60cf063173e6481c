"""scripts/check_sass.py's local-memory rule: no forward kernel may touch local memory except the measured ones its
allowance names, each within its bound."""

import importlib.util
from pathlib import Path

_spec = importlib.util.spec_from_file_location(
    "check_sass", Path(__file__).resolve().parents[2] / "scripts" / "check_sass.py")
check_sass = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(check_sass)

PERSISTENT_192 = ("_ZN9flashseek4sm9031attention_fwd_persistent_kernelINS0_15FwdKernelTraitsI13__nv_bfloat16Li64ELi64"
                  "ELi192ELb0ELi0EEELi3587EEEvNS_9FwdParamsENS_12KvTensorMapsEii")
PERSISTENT_128 = PERSISTENT_192.replace("Li192E", "Li128E")
ONE_TILE_192 = ("_ZN9flashseek4sm9020attention_fwd_kernelINS0_15FwdKernelTraitsI13__nv_bfloat16Li64ELi64ELi192ELb0ELi0EEE"
                "Li5635EEEvNS_9FwdParamsENS_12KvTensorMapsE")


def counts(ldl, stl):
    return {"LDL": ldl, "STL": stl}


def test_the_allowance_names_one_kernel_and_bounds_it():
    assert check_sass.local_memory_ok(PERSISTENT_192, counts(9, 9))
    assert not check_sass.local_memory_ok(PERSISTENT_192, counts(10, 9))
    assert not check_sass.local_memory_ok(PERSISTENT_192, counts(0, 10))


def test_other_kernels_may_not_touch_local_memory():
    assert check_sass.local_memory_ok(PERSISTENT_128, counts(0, 0))
    assert not check_sass.local_memory_ok(PERSISTENT_128, counts(1, 0))
    assert not check_sass.local_memory_ok(ONE_TILE_192, counts(0, 1))
    assert not check_sass.local_memory_ok(PERSISTENT_192.replace("13__nv_bfloat16", "6__half"), counts(1, 1))
