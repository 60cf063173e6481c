"""scripts/plan_diff.py with the plan_probe executable (bench/host/plan_probe.cpp): every call of the grid passes
the host's validation as the probe builds it, and the tool reports the plans a token changes."""
import importlib.util
import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PROBE = ROOT / os.environ.get("FLASHSEEK_BUILD_DIR", "build/test") / "plan_probe"

pytestmark = pytest.mark.skipif(not PROBE.exists(), reason=f"{PROBE} not built (scripts/test.sh builds it)")

_SPEC = importlib.util.spec_from_file_location("plan_diff", ROOT / "scripts" / "plan_diff.py")
plan_diff = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(plan_diff)


def _run(capsys, *argv):
    assert plan_diff.main([*argv, "--probe", str(PROBE)]) == 0
    return capsys.readouterr().out.splitlines()


def test_every_grid_call_plans_without_error(capsys):
    out = _run(capsys, "default", "default", "--all")
    assert out[-1].startswith("0 of ") and "calls plan differently" in out[-1], out[-1]
    calls = int(out[-1].split()[2])
    assert calls > 250, out[-1]  # the whole grid, a cascade as its two passes
    errors = [line for line in out[:-1] if " error " in line]
    assert not errors, errors[:5]
    assert all(" tile=" in line for line in out[:-1])


def test_a_token_shows_the_plans_it_changes(capsys):
    out = _run(capsys, "default", "no-kam2-splits", "--family", "decode-splitkv,sliding-window")
    text = "\n".join(out)
    i = next(n for n, line in enumerate(out) if "decode-splitkv/L8/q1s128k/p16/splits0" in line)
    # the default's plan, then the token's on the next line (entry 118: tile 7 in twice tile 5's splits)
    assert "tile=7 splits=32 " in out[i] and "block_n=64 " in out[i], out[i]
    assert "tile=5 splits=16 " in out[i + 1] and "block_n=128 " in out[i + 1], out[i + 1]
    assert "w4096" not in text  # a window counts its own key blocks: the same plan either way
    assert out[-1].endswith("than under 'default'") and not out[-1].startswith("0 of"), out[-1]


def test_cluster_combine_shows_the_calls_run_combines_in_clusters(capsys):
    """run()'s choice after the plan (cluster=S): the keys-as-M split decodes of 2-8 splits, not those of more."""
    out = _run(capsys, "default", "cluster-combine", "--family", "decode-paged,decode-splitkv,small-decode")
    i = next(n for n, line in enumerate(out) if "decode-paged/OSSt8/8q1s1k/p16 " in line)
    assert out[i].rstrip().endswith("cluster=0") and out[i + 1].rstrip().endswith("cluster=8"), out[i:i + 2]
    assert not any("L8/q1s128k" in line for line in out), "32 splits stay on the combine kernel"
