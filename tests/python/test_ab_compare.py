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


def test_of_compares_a_baselines_times_and_leaves_out_scenarios_without_it(tmp_path):
    def doc(path, rows):
        path.write_text(json.dumps({"scenarios": [
            {"name": n, "family": n.split("/")[0], "correct": True, "us": us, "baselines": b} for n, us, b in rows]}))
        return str(path)

    a = doc(tmp_path / "a.json", [("fam/x", 100.0, {"vllm": 80.0}), ("fam/y", 10.0, {"vllm": {"us": 20.0}}),
                                  ("fam/z", 10.0, {})])
    b = doc(tmp_path / "b.json", [("fam/x", 50.0, {"vllm": 88.0}), ("fam/y", 10.0, {"vllm": {"us": 18.0}}),
                                  ("fam/z", 10.0, {})])
    out = subprocess.run([sys.executable, str(SCRIPT), "--a", a, "--b", b, "--of", "vllm"], capture_output=True,
                         text=True, check=True).stdout
    # FA3's times: x 80 -> 88 (1.1), y 20 -> 18 (0.9); z has no FA3 time; ours (0.5 on x) does not enter
    assert "time of vllm over 2 scenarios" in out
    assert f"geomean {math.sqrt(1.1 * 0.9):.4f}" in out
    assert "1.100  fam/x" in out and "0.900  fam/y" in out and "fam/z" not in out
