"""The grids of grid.md as data: counts per family, unique stable names, the batch notation, selection."""

import pytest

from flashseek.testing import grid as g

EXPECTED_PERF = {
    "prefill-dense": 24, "prefill-varlen": 10, "decode-paged": 35, "decode-splitkv": 16, "spec-decode": 8,
    "mixed": 16, "sliding-window": 14, "softcap": 8, "sinks": 10, "kvcache": 8, "fp8": 14, "mla": 16, "lse": 8,
    "edge": 12, "small-decode": 1,
}


def test_performance_grid_counts_per_family():
    perf = g.performance_grid()
    assert g.count_by_family(perf) == EXPECTED_PERF
    assert len(perf) == 200


def test_operator_grid_groups():
    ops = g.operator_grid()
    assert len(ops) == 54
    groups = {}
    for s in ops:
        groups[s.name.split("/")[1]] = groups.get(s.name.split("/")[1], 0) + 1
    assert groups == {"core": 20, "sliding256": 10, "softcap50": 6, "fp8": 8, "breadth": 4, "decode": 4,
                      "cascade": 2}
    assert all(s.family == g.OPERATOR_FAMILY and s.block_table_repeats for s in ops)
    assert sum(s.out_given for s in ops) == 27  # out given in half the cases
    assert {s.num_blocks for s in ops} == {32768, 2048}
    assert all(s.num_blocks == 2048 for s in ops if "/sliding256/" in s.name or "/cascade/" in s.name)
    assert sum(1 for s in ops if s.softcap == 50.0 and s.window != (-1, -1)) == 2
    assert all(s.use_scheduler_metadata for s in ops if "/decode/" in s.name)


def test_operator_grid_sequences_match_vllm_tests():
    ops = {s.name: s for s in g.operator_grid()}
    s1 = next(s for n, s in ops.items() if "/core/S1/4-4-d40/" in n)
    assert s1.seqs == ((1, 1328), (5, 18), (129, 463)) and s1.causal and s1.page_size == 16
    c400 = next(s for n, s in ops.items() if "/cascade/C400/" in n)
    assert len(c400.seqs) == 400 and c400.cascade_prefix == 512 and c400.head_dim == 192 and c400.softcap == 50
    sw = next(s for n, s in ops.items() if "/sliding256/" in n)
    assert sw.window == (255, 0)


def test_names_unique_and_stable():
    every = g.performance_grid() + g.operator_grid()
    names = [s.name for s in every]
    assert len(names) == len(set(names))
    assert "decode-paged/L8/128q1s8k/p16" in names
    assert names == [s.name for s in g.performance_grid() + g.operator_grid()]  # same on a second build


def test_unsupported_cases_are_recorded_not_dropped():
    perf = g.performance_grid()
    fp8 = [s for s in perf if s.family == "fp8"]
    assert len(fp8) == 14 and all(s.unsupported_reason is None and s.is_fp8 and s.has_fp8 for s in fp8)
    mla = [s for s in perf if s.family == "mla"]
    assert all(s.unsupported_reason is None for s in mla)  # MLA prefill, decode (q_v) and context parallel run
    assert sum(1 for s in mla if s.q_v) == 11
    assert sum(1 for s in mla if s.cp_world_size > 1) == 3
    ops = g.operator_grid()
    ops_fp8 = [s for s in ops if s.dtype == "e4m3"]
    assert len(ops_fp8) == 8 and all(s.unsupported_reason is None and s.descale == "ones" for s in ops_fp8)
    assert not any(s.unsupported_reason == g.UNSUPPORTED_FP8 for s in perf + ops)


@pytest.mark.parametrize("notation,expected", [
    ("q1k", ((1024, 1024),)),
    ("8q2k", ((2048, 2048),) * 8),
    ("q1s2k", ((1, 2048),)),
    ("q2k_32q1s2k", ((2048, 2048),) + ((1, 2048),) * 32),
    ("q257_q1k_q63_q4093", ((257, 257), (1024, 1024), (63, 63), (4093, 4093))),
    ("4q512s8k_128q1s2k", ((512, 8192),) * 4 + ((1, 2048),) * 128),
    ("q0s0_q3s0", ((0, 0), (3, 0))),
])
def test_parse_batch(notation, expected):
    assert g.parse_batch(notation) == expected


@pytest.mark.parametrize("bad", ["", "x1k", "q", "2q1s", "q1kk", "q1_"])
def test_parse_batch_rejects(bad):
    with pytest.raises(ValueError):
        g.parse_batch(bad)


def test_heads_table():
    assert (g.HEADS["L8"].num_heads_q, g.HEADS["L8"].num_heads_kv, g.HEADS["L8"].head_dim) == (32, 8, 128)
    assert (g.HEADS["OSS"].num_heads_q, g.HEADS["OSS"].num_heads_kv, g.HEADS["OSS"].head_dim) == (64, 8, 64)
    assert g.HEADS["G27"].softmax_scale == pytest.approx(1 / 12)
    assert (g.HEADS["MLAp128"].head_dim, g.HEADS["MLAp128"].head_dim_v) == (192, 128)
    assert (g.HEADS["MLAd16"].num_heads_kv, g.HEADS["MLAd16"].head_dim, g.HEADS["MLAd16"].head_dim_v) == (1, 64, 512)
    for h in g.HEADS.values():
        assert h.num_heads_q % h.num_heads_kv == 0


def test_scenario_fields_are_consistent():
    for s in g.performance_grid() + g.operator_grid():
        assert s.kv_layout in g.KV_LAYOUTS and s.entry in g.ENTRIES and s.dtype in g.DTYPES, s.name
        assert s.timing in ("graph", "eager"), s.name
        assert s.num_heads_q % s.num_heads_kv == 0, s.name
        if s.entry == "cascade":
            assert s.cascade_prefix % s.page_size == 0 and all(k > s.cascade_prefix for k in s.k_lens), s.name
        if s.entry == "kvcache":
            assert len(set(s.q_lens)) == 1, s.name
        if s.rotary:
            assert s.append_new and s.rotary_dim % 2 == 0 and s.rotary_dim <= s.head_dim, s.name
        if s.kv_layout == "varlen":
            assert not s.use_scheduler_metadata, s.name


def test_timing_modes():
    perf = {s.name: s for s in g.performance_grid()}
    assert perf["decode-paged/L8/128q1s8k/p16"].timing == "graph"
    assert perf["mixed/L8/q2k_32q1s2k/p16"].timing == "graph"
    assert perf["prefill-dense/L8/q8k"].timing == "eager"
    assert perf["sinks/OSS/64q1s8k/p16/sinks"].timing == "graph"  # a decode member of another family
    assert perf["sinks/OSS/q8k/p16/sinks"].timing == "eager"


def test_effective_window_and_scale():
    s = g.make_scenario("x", "L8", "q4s9", window=(3, 5), causal=True)
    assert s.effective_window == (3, 0)
    assert s.scale == pytest.approx(128 ** -0.5)
    assert g.make_scenario("x", "L8", "q4s9", window=(3, 5), causal=False).effective_window == (3, 5)


def test_select():
    every = g.grid("all")
    assert len(g.select(every, families=["edge"])) == 12
    assert len(g.select(every, name_filter="decode-paged/L8/")) == 7
    assert len(g.select(every, name_filter=r"^decode-paged/L70t8/.*s1k")) == 2  # regex when not a substring
    assert g.select(every, families=["operator-grid"], name_filter="/cascade/")[0].entry == "cascade"
    with pytest.raises(ValueError, match="valid families: prefill-dense"):
        g.select(every, families=["decode"])
    with pytest.raises(ValueError):
        g.grid("both")


def test_quick_subset_names_exist():
    every = g.grid("all")
    names = {s.name for s in every}
    missing = [n for n in g.QUICK_NAMES if n not in names]
    assert not missing
    quick = g.quick_subset(every)
    assert 20 <= len(quick) <= 60
    assert {s.family for s in quick} >= set(g.FAMILIES)
