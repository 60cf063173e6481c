"""scripts/launch_order_model.py (perf-log entry 66): lpt's order is a permutation of the old one, the two agree for a
single pair and for a section of one pair, the makespan follows hand-counted schedules, and the model's MLAp16 q4k
tail is what entry 66 quotes."""

import importlib.util
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "launch_order_model.py"
_spec = importlib.util.spec_from_file_location("launch_order_model", SCRIPT)
model = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(model)


def test_key_blocks_of_a_square_causal_tile():
    g = model.CausalGrid("t", 1, 4, 512, 128, 128)  # 128-row tiles hold 32 tokens of 4 heads
    assert g.m_blocks == 16
    assert [g.key_blocks(m) for m in (0, 3, 4, 15)] == [1, 1, 2, 4]


def test_lpt_reorders_the_same_tiles():
    g = model.CausalGrid("t", 6, 1, 1000, 128, 128, batch=2)
    before, after = g.pair_after_pair(), g.lpt(1 << 20)  # 500 KB a pair: sections of 2 pairs
    assert sorted(before) == sorted(after)
    assert after[:2] == [8, 8] and before[:2] == [8, 7]


def test_one_pair_or_sections_of_one_keep_the_order():
    single = model.CausalGrid("t", 1, 1, 4096, 128, 128)
    assert single.lpt(1 << 40) == single.pair_after_pair()
    many = model.CausalGrid("t", 8, 1, 4096, 128, 128)
    assert many.lpt(1) == many.pair_after_pair()


def test_makespan_by_hand():
    assert model.makespan([4, 1, 1, 1, 1], sms=2, overhead=0.0) == 4.0
    assert model.makespan([1, 1, 1, 1, 4], sms=2, overhead=0.0) == 6.0
    assert model.makespan([2, 2], sms=1, overhead=0.5) == 5.0


def test_mla_prefill_tail_as_quoted():
    g = model.GRIDS[0]
    assert g.name == "MLAp16 q4k"
    before = g.pair_after_pair()
    bound = model.balanced_bound(before, 132, 1.0)
    assert abs(model.makespan(before, 132, 1.0) / bound - 1.267) < 0.002
    assert abs(model.makespan(g.lpt(40 << 20), 132, 1.0) / bound - 1.017) < 0.002
