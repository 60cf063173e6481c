"""scripts/ab_compare.py: B's time over A's per scenario from the geometric means of their rounds, per family and
overall; scenarios a round did not run correctly are left out."""

import json
import math
import subprocess
import sys
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "ab_compare.py"


def write(path, times, wrong=()):
    scenarios = [{"name": n, "family": n.split("/")[0], "correct": n not in wrong, "us": us} for n, us in times.items()]
    path.write_text(json.dumps({"scenarios": scenarios}))
    return str(path)


def test_ratios_from_the_geometric_mean_of_rounds(tmp_path):
    a1 = write(tmp_path / "a1.json", {"fam/x": 100.0, "fam/y": 10.0, "other/z": 50.0})
    a2 = write(tmp_path / "a2.json", {"fam/x": 121.0, "fam/y": 10.0, "other/z": 50.0})
    b1 = write(tmp_path / "b1.json", {"fam/x": 88.0, "fam/y": 12.0, "other/z": 1.0}, wrong={"other/z"})
    b2 = write(tmp_path / "b2.json", {"fam/x": 88.0, "fam/y": 12.0, "other/z": 1.0})
    out = subprocess.run([sys.executable, str(SCRIPT), "--a", a1, a2, "--b", b1, b2], capture_output=True,
                         text=True, check=True).stdout
    # x: A = sqrt(100 * 121) = 110, B = 88: 0.8; y: 1.2; z left out (wrong in one round of B)
    assert "over 2 scenarios" in out
    assert f"geomean {math.sqrt(0.8 * 1.2):.4f}" in out
    assert "0.800  fam/x" in out and "1.200  fam/y" in out
    assert "other/z" not in out
    assert f"mean |log ratio| {abs(math.log(100 / 121)) / 2:.4f}" in out
