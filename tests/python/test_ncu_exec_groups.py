"""scripts/ncu_exec_groups.py (perf-log entry 71): a synthetic ncu source page grouped by execution count; the
totals, the HGMMA groups and the ranking follow the rows by hand, and predicates and ncu's preamble are skipped."""

import gzip
import importlib.util
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "ncu_exec_groups.py"
_spec = importlib.util.spec_from_file_location("ncu_exec_groups", SCRIPT)
groups = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(groups)

HEADER = '"Address","Source","Warp Stall Sampling (All Samples)","Instructions Executed"'


def _page(tmp_path, rows, name="k.source.csv.gz"):
    text = "\n".join(['==PROF== a preamble line', HEADER] +
                     [f'"0x{0x100 + 16 * i:x}","{src}","0","{n}"' for i, (src, n) in enumerate(rows)])
    path = tmp_path / name
    with gzip.open(path, "wt") as f:
        f.write(text)
    return str(path)


ROWS = [("HGMMA.64x128x16.F32.BF16 R24, gdesc[UR4], RZ", 100),   # the once-a-tile group: 3 instructions x 100
        ("@P0 FMUL R1, R2, R3", 100),
        ("ISETP.GE.AND P0, PT, R1, R2, PT", 100),
        ("HGMMA.64x128x16.F32.BF16 R24, gdesc[UR4], R24", 150),  # the loop: 2 x 150
        ("MUFU.EX2 R5, R6", 150),
        ("IMAD R7, R8, R9, RZ", 400),                            # a store loop: 4 x 400
        ("@!P1 IMAD.WIDE R2, R3, 0x4, R4", 400),
        ("STG.E.128 desc[UR4][R2.64], R8", 400),
        ("LDS.128 R8, [R10]", 400),
        ("EXIT", 0)]


def test_rows_skip_the_preamble_and_predicates(tmp_path):
    rows = groups.read_rows(_page(tmp_path, ROWS))
    assert len(rows) == len(ROWS)
    assert rows[1] == ("FMUL", 100) and rows[6] == ("IMAD", 400)


def test_groups_totals_and_ranking(tmp_path):
    path = _page(tmp_path, ROWS)
    by = groups.groups(groups.read_rows(path))
    assert sorted(by) == [100, 150, 400]
    assert sorted(by[400]) == ["IMAD", "IMAD", "LDS", "STG"]
    total, lines = groups.summarize(path, top=2)
    assert total == 3 * 100 + 2 * 150 + 4 * 400
    assert "HGMMA group:     3 instructions run 100 times each" in lines[1]
    assert "HGMMA group:     2 instructions run 150 times each" in lines[2]
    assert lines[3].split()[:4] == ["400", "x", "4", "="]  # the largest group first
    assert len(lines) == 5
