// CPU tests of the launch planning: tile table, head-dim padding, split heuristic, launch order, fast division.
#include <gtest/gtest.h>

#include <random>
#include <set>
#include <string>
#include <vector>

#include "../../bench/host/dense_view.h"
#include "../../src/sm90/fwd_experiments.h"
#include "../../src/sm90/fwd_params.h"
#include "../../src/sm90/key_origin.h"
#include "../../src/sm90/launch_order.h"
#include "../../src/sm90/mask_bits.h"
#include "../../src/sm90/prims/smem_tile.h"
#include "../../src/sm90/widen_map.h"
#include "flashseek/flashseek.h"
#include "experiment.h"
#include "l2_policy.h"
#include "split_heuristic.h"
#include "tile_loop.h"
#include "tile_table.h"

namespace flashseek {
namespace {

TEST(TileTable, EveryTileFitsSharedMemoryAndWgmmaShapes) {
  for (const TileShape& t : kTileShapes) {
    // Plus the producer's row-offset buffers (2 x 2 x block_n int64) and the barriers.
    EXPECT_LE(tile_smem_bytes(t) + 32 * t.block_n + 128, 232448) << t.head_dim << "x" << t.head_dim_v;
    EXPECT_EQ(t.block_n % 16, 0);
    // Whole 64-column blocks, or the d96 tiles' three 32-column blocks (the 64-byte swizzle)
    EXPECT_TRUE(t.head_dim % 64 == 0 || t.head_dim == 96) << t.head_dim;
    EXPECT_TRUE(t.head_dim_v % 64 == 0 || t.head_dim_v == 96) << t.head_dim_v;
    EXPECT_LE(t.block_n, 256);
  }
}

TEST(TileTable, EveryTileHasAnFp8Twin) {
  // Every 16-bit tile has an fp8-cache tile of the same head dims and block_m (the kernels are instantiated for
  // both), whose e4m3 staging can also hold an e4m3 Q tile; the 192-row d64 tile and the d96 tiles are 16-bit only.
  for (const TileShape& t : kTileShapes) {
    if (t.block_m == 192 || t.head_dim == 96) continue;  // 16-bit only: e4m3 has no 96-byte-row tile
    const TileShape f = find_tile_shape(t.head_dim, t.head_dim_v, t.block_m, !t.fp8_kv);
    EXPECT_EQ(f.block_m, t.block_m) << t.head_dim << "x" << t.head_dim_v << " m" << t.block_m;
    if (t.fp8_kv) {
      EXPECT_GE(t.raw_stages, 1);
      EXPECT_GE(t.raw_stages * t.block_n * (t.head_dim + t.head_dim_v), t.block_m * t.head_dim);
    } else {
      EXPECT_EQ(t.raw_stages, 0);
    }
  }
}

TEST(TileTable, DecodeAndPrefillTilesShareBlockN) {
  // A token's result must not depend on whether the 64-row (decode), 128-row or 192-row (prefill) kernel ran
  // it: all visit the same key blocks with the same online-softmax steps.
  for (const TileShape& t : kTileShapes) {
    const TileShape other = find_tile_shape(t.head_dim, t.head_dim_v, t.block_m == 64 ? 128 : 64, t.fp8_kv);
    EXPECT_EQ(other.block_n, t.block_n) << t.head_dim << "x" << t.head_dim_v << (t.fp8_kv ? " fp8" : "");
  }
  EXPECT_EQ(find_tile_shape(64, 64, 192, false).block_n, find_tile_shape(64, 64, 128, false).block_n);
}

// The d96 tiles (FLASHSEEK_EXPERIMENT=d96): 16-bit head dims 65-96 pad to 96; e4m3 keeps 128.
TEST(TileTable, Tiles96TakeHeadDimsUpTo96) {
  EXPECT_EQ(pad_head_dims(72, 72, true).head_dim, 96);
  EXPECT_EQ(pad_head_dims(80, 80, true).head_dim_v, 96);
  EXPECT_EQ(pad_head_dims(96, 96, true).head_dim, 96);
  EXPECT_EQ(pad_head_dims(64, 64, true).head_dim, 64);
  EXPECT_EQ(pad_head_dims(112, 112, true).head_dim, 128);
  EXPECT_EQ(pad_head_dims(96, 96).head_dim, 128);
  EXPECT_EQ(find_tile_shape(96, 96, 128).block_n, find_tile_shape(128, 128, 128).block_n);  // the same bits
  EXPECT_EQ(find_tile_shape(96, 96, 64).block_n, find_tile_shape(128, 128, 64).block_n);
  EXPECT_EQ(find_tile_shape(96, 96, 128, true).block_m, 0);
  EXPECT_TRUE(Experiment::parse("d96").d96_tiles);
  EXPECT_FALSE(Experiment::parse(nullptr).d96_tiles);
}

TEST(TileTable, HeadDimsPadToTheSmallestTileThatHoldsThem) {
  struct Case { int d, dv, pd, pdv; };
  const Case cases[] = {{40, 40, 64, 64},    {64, 64, 64, 64},     {72, 72, 128, 128}, {80, 80, 128, 128},
                        {96, 96, 128, 128},  {128, 128, 128, 128}, {160, 160, 192, 192},
                        {192, 192, 192, 192}, {192, 128, 192, 128}, {256, 256, 256, 256}, {8, 8, 64, 64}};
  for (const Case& c : cases) {
    const PaddedHeadDims p = pad_head_dims(c.d, c.dv);
    EXPECT_EQ(p.head_dim, c.pd) << c.d;
    EXPECT_EQ(p.head_dim_v, c.pdv) << c.d;
    EXPECT_NE(find_tile_shape(p.head_dim, p.head_dim_v).block_m, 0) << c.d;
  }
  EXPECT_EQ(pad_head_dims(264, 264).head_dim, 0);
  EXPECT_EQ(pad_head_dims(128, 64).head_dim, 0);
}

TEST(MlaDecodePlan, TileAndWorkspaceOfTheMlaKernel) {
  SchedulerArgs s;
  s.batch_size = 4;
  s.max_seqlen_q = 1;
  s.max_seqlen_k = 32768;
  s.num_heads_q = 128;
  s.num_heads_kv = 1;
  s.headdim = 64;
  s.headdim_v = 512;
  const LaunchPlan plan = make_plan(s, DeviceInfo{});
  EXPECT_STREQ(plan.kernel_name, "mla_decode_sm90");
  EXPECT_EQ(plan.block_m, 64);
  EXPECT_EQ(plan.block_n, 64);
  EXPECT_EQ(plan.head_dim_v_padded, 512);
  EXPECT_EQ(plan.num_m_blocks, 2);  // 128 heads x 1 token in 64-row tiles
  EXPECT_GT(plan.num_splits, 1);    // 8 CTAs on 132 SMs: split the 32k keys
}

SplitInputs decode(int batch, int hkv, int seqlen_k, int requested) {
  return SplitInputs{batch, hkv, 1, seqlen_k, 128, requested, 132, 1};
}

TEST(SplitHeuristic, NoSplitWhenAsked) { EXPECT_EQ(choose_num_splits(decode(1, 8, 131072, 1)), 1); }

TEST(SplitHeuristic, NoSplitWhenTheGridFillsTheChip) {
  EXPECT_EQ(choose_num_splits(decode(128, 8, 8192, 0)), 1);
  EXPECT_EQ(choose_num_splits(decode(16, 8, 8192, 0)), 1);  // 128 CTAs >= 0.8 x 132
}

TEST(SplitHeuristic, SmallBatchLongContextSplitsToFillTheChip) {
  const int s = choose_num_splits(decode(1, 8, 32768, 0));
  EXPECT_GE(s, 8);
  EXPECT_LE(s * 8, 2 * 132);
}

TEST(SplitHeuristic, UpperBoundAndOneBlockPerSplitHold) {
  for (int requested : {0, 2, 7, 32, 256}) {
    for (int seqlen_k : {1, 100, 129, 1024, 4096, 131072}) {
      const int s = choose_num_splits(decode(1, 1, seqlen_k, requested));
      const int n_blocks = (seqlen_k + 127) / 128;
      EXPECT_GE(s, 1);
      EXPECT_LE(s, std::max(1, n_blocks)) << seqlen_k;
      if (requested > 1) EXPECT_LE(s, requested);
      EXPECT_LE(s, kMaxSplits);
    }
  }
}

TEST(SplitHeuristic, OneLongSequenceUsesAboutOneCtaPerSm) {
  // L70t8 q1s128k: one KV head; a CTA streams ~30-50 GB/s, so the chip's bandwidth needs ~100+ CTAs.
  SplitInputs in = decode(1, 1, 131072, 0);
  in.combine_rows = 8;
  const int s = choose_num_splits(in);
  EXPECT_GE(s, 100);
  EXPECT_LE(s, 132);
  // The model prefers it clearly over a few splits and over none.
  EXPECT_LT(estimate_split_time_us(in, s), 0.5 * estimate_split_time_us(in, 16));
}

// The choices scripts/split_sweep.py measured best on the H200 (docs/perf-log.md entry 30).
TEST(SplitHeuristic, ShortWorkWithManyCombineRowsStaysUnsplit) {
  SplitInputs cp_gqa = decode(64, 1, 2048, 0);  // 64 sequences x 64 query heads on one KV head, 2k keys
  cp_gqa.combine_rows = 64 * 64;                // split 2: 44.5 us, unsplit 34.8
  EXPECT_EQ(choose_num_splits(cp_gqa), 1);
  SplitInputs l8 = decode(8, 8, 1024, 0);  // L8 8q1s1k: split 2 24.0 us, unsplit 22.7
  l8.combine_rows = 8 * 32;
  EXPECT_EQ(choose_num_splits(l8), 1);
  l8.model_v1 = true;  // the model before the refit split it in two
  EXPECT_EQ(choose_num_splits(l8), 2);
}

TEST(SplitHeuristic, LongSequencesFillTheSms) {
  SplitInputs l8 = decode(1, 8, 131072, 0);  // L8 q1s128k: 16 splits (128 CTAs) 148.7 us, 8 splits 173.7
  l8.combine_rows = 32;
  EXPECT_EQ(choose_num_splits(l8), 16);
  SplitInputs oss = decode(64, 1, 4096, 0);  // OSSt8 64q1s4k, d64 blocks: split 2 37.0 us, unsplit 41.8
  oss.kv_block_bytes = 128 * 128 * 2;
  oss.head_dim_v = 64;
  oss.combine_rows = 64 * 8;
  EXPECT_EQ(choose_num_splits(oss), 2);
}

// The refitted model decides the 64-row decode tiles it was measured on; 128-row tiles keep the model before it.
TEST(Plan, SplitModelByTileRows) {
  SchedulerArgs decode_step;  // L8 8q1s1k: unsplit since the refit (entry 30)
  decode_step.batch_size = 8;
  decode_step.max_seqlen_q = 1;
  decode_step.max_seqlen_k = 1024;
  decode_step.num_heads_q = 32;
  decode_step.num_heads_kv = 8;
  decode_step.headdim = decode_step.headdim_v = 128;
  EXPECT_EQ(make_plan(decode_step, DeviceInfo{}).num_splits, 1);
  SchedulerArgs varlen = decode_step;  // operator S1: a 1328-key sequence beside a 129-query prefill
  varlen.batch_size = 3;
  varlen.max_seqlen_q = 129;
  varlen.max_seqlen_k = 1328;
  varlen.num_heads_q = 8;
  varlen.num_heads_kv = 2;
  varlen.causal = true;
  const LaunchPlan plan = make_plan(varlen, DeviceInfo{});
  EXPECT_EQ(plan.block_m, 128);
  EXPECT_GT(plan.num_splits, 1);  // split 3: 22 us; unsplit 29.5 us (entry 30)
}

TEST(SplitHeuristic, ForcedCountKeepsEverySplitNonEmptyAndTheCallersBound) {
  SplitInputs in = decode(8, 1, 1024, 0);  // 8 key blocks
  in.forced = 6;                           // 2 blocks per split: 4 splits hold them all
  EXPECT_EQ(choose_num_splits(in), 4);
  in.forced = 3;  // 3 blocks per split: 3 splits
  EXPECT_EQ(choose_num_splits(in), 3);
  in.forced = 100;  // one block per split at most
  EXPECT_EQ(choose_num_splits(in), 8);
  in.requested = 2;  // the caller's bound
  EXPECT_EQ(choose_num_splits(in), 2);
  in.requested = 1;
  EXPECT_EQ(choose_num_splits(in), 1);
  // A grid of more than 0.8 waves, which the model leaves whole, still takes the forced count.
  SplitInputs full = decode(256, 8, 1024, 0);
  EXPECT_EQ(choose_num_splits(full), 1);
  full.forced = 2;
  EXPECT_EQ(choose_num_splits(full), 2);
}

TEST(SplitHeuristic, CapAndFlashAttentionRuleAreHonoured) {
  SplitInputs in = decode(1, 1, 131072, 0);
  in.cap = 32;
  EXPECT_LE(choose_num_splits(in), 32);
  in.cap = 0;
  in.requested = 32;  // the call's bound (num_splits 32 with scheduler metadata)
  EXPECT_EQ(choose_num_splits(in), 32);
  in.requested = 0;
  in.fa_rule = true;
  const int s = choose_num_splits(in);  // the wave-efficiency rule: within 85% of the best efficiency
  EXPECT_GE(s * 1.0 / 132, 0.8);
}

TEST(SplitHeuristic, ShortWorkDoesNotSplitFinerThanItPays) {
  // 8 sequences of 1k keys, one KV head: 8 blocks each; every split keeps at least one block.
  SplitInputs in = decode(8, 1, 1024, 0);
  in.combine_rows = 64;
  const int s = choose_num_splits(in);
  EXPECT_GE(s, 2);
  EXPECT_LE(s, 8);
  // More partials than splits can use cost combine traffic the model sees.
  EXPECT_LT(estimate_split_time_us(in, 8), estimate_split_time_us(in, 1));
}

TEST(Experiment, ParsesTokens) {
  const Experiment none = Experiment::parse(nullptr);
  EXPECT_FALSE(none.combine_warp || none.split_fa);
  EXPECT_TRUE(none.pdl);  // the default since entry 29
  EXPECT_FALSE(Experiment::parse("no-pdl").pdl);
  EXPECT_TRUE(none.pdl_trigger && none.combine_prefetch);  // the defaults since entry 53
  EXPECT_FALSE(none.fwd_pdl);
  EXPECT_TRUE(none.row_prefetch);  // entry 54
  EXPECT_FALSE(Experiment::parse("no-row-prefetch").row_prefetch);
  const Experiment old = Experiment::parse("no-pdl-trigger,fwd-pdl,no-combine-prefetch");
  EXPECT_TRUE(!old.pdl_trigger && old.fwd_pdl && !old.combine_prefetch);
  EXPECT_EQ(none.split_force, 0);
  EXPECT_EQ(Experiment::parse("splits=6").split_force, 6);
  EXPECT_TRUE(Experiment::parse("split-model-v1").split_model_v1);
  EXPECT_EQ(none.host_stop, 0);
  EXPECT_EQ(Experiment::parse("host-stop-run").host_stop, 1);
  EXPECT_EQ(Experiment::parse("host-stop-launch").host_stop, 2);
  EXPECT_EQ(none.loop_flags, -1);
  EXPECT_TRUE(none.fp8_persist);  // entry 99
  EXPECT_FALSE(Experiment::parse("no-fp8-persist").fp8_persist);
  EXPECT_TRUE(none.window_origin);  // entry 102
  EXPECT_FALSE(Experiment::parse("no-window-origin").window_origin);
  EXPECT_TRUE(none.d64_window_tile);  // entry 103
  EXPECT_FALSE(Experiment::parse("no-d64-window-tile").d64_window_tile);
  EXPECT_EQ(none.combine_warp_rows, 2048);  // entry 99
  EXPECT_EQ(Experiment::parse("combine-warp-rows=0").combine_warp_rows, 0);
  const Experiment e = Experiment::parse("combine-warp,pdl,split-fa,splitcap=48,rate=31,unknown");
  EXPECT_TRUE(e.combine_warp && e.pdl && e.split_fa);
  EXPECT_EQ(e.split_cap, 48);
  EXPECT_EQ(e.cta_rate_gbps, 31);
  EXPECT_EQ(Experiment::parse("3").loop_flags, 3);
  EXPECT_EQ(Experiment::parse("split-fa,loop=1").loop_flags, 1);
  EXPECT_TRUE(none.fp8_copy16);  // the default since entry 11
  EXPECT_FALSE(none.fp8_skip_convert || none.fp8_skip_copy || none.cp_async_kv || none.fp8_keyed_transpose);
  EXPECT_EQ(none.tma_issue_warps, 0);  // per tile: 4 on the native e4m3 tiles, 2 elsewhere (run.cpp)
  EXPECT_EQ(Experiment::parse("tma-warps=2").tma_issue_warps, 2);
  EXPECT_EQ(Experiment::parse("tma-one-warp").tma_issue_warps, 1);
  EXPECT_EQ(Experiment::parse("tma-warps=4").tma_issue_warps, 4);
  const Experiment f = Experiment::parse("fp8-cp8,fp8-nocvt,fp8-nocopy,cpasync,fp8n-keyed-transpose");
  EXPECT_TRUE(!f.fp8_copy16 && f.fp8_skip_convert && f.fp8_skip_copy && f.cp_async_kv && f.fp8_keyed_transpose);
  EXPECT_EQ(f.loop_flags, -1);
}

// Entry 51: no L2 promotion past the box's row (the 256-byte promotion cost large paged decodes 5.5%).
TEST(L2Policy, PromotionIsTheBoxRow) {
  const Experiment none = Experiment::parse(nullptr);
  EXPECT_EQ(kv_l2_promotion_bytes(none.l2_promotion, false), 128);
  EXPECT_EQ(kv_l2_promotion_bytes(none.l2_promotion, true), 64);
  EXPECT_EQ(kv_l2_promotion_bytes(Experiment::parse("l2promo=256").l2_promotion, false), 256);
  EXPECT_EQ(kv_l2_promotion_bytes(Experiment::parse("l2promo=0").l2_promotion, true), 0);
}

TEST(Experiment, ParsesDecodeTileTokens) {
  EXPECT_EQ(Experiment::parse(nullptr).decode_tile, 0);
  EXPECT_EQ(Experiment::parse("cta2").decode_tile, 1);
  EXPECT_EQ(Experiment::parse("bn64s6").decode_tile, 2);
  EXPECT_EQ(Experiment::parse("pdl,tile=2").decode_tile, 2);
  EXPECT_EQ(Experiment::parse("cta2,splitcap=64").split_cap, 64);
  EXPECT_EQ(Experiment::parse("cta2").loop_flags, -1);
  EXPECT_TRUE(Experiment::parse(nullptr).auto_two_ctas);
  EXPECT_FALSE(Experiment::parse("no-cta2").auto_two_ctas);
}

TEST(TileTable, DecodeVariantTilesFitTheirCtasPerSm) {
  for (int v = 1; v <= kNumDecodeVariants; ++v) {
    const TileShape t = decode_variant_tile(v);
    const TileShape base = find_tile_shape(t.head_dim, t.head_dim_v, t.block_m, t.fp8_kv);
    EXPECT_EQ(base.block_m, 64) << v;  // replaces a decode tile of the table
    EXPECT_FALSE(t.fp8_kv);
    EXPECT_EQ(t.block_n % 16, 0);
    EXPECT_GE(t.stages, 2);
    // Per CTA: tiles + row offsets + barriers, and 1 KB reserved; 228 KB per SM.
    const int per_cta = tile_smem_bytes(t) + 32 * t.block_n + 8 * (1 + 4 * t.stages) + 1024;
    EXPECT_LE(t.ctas_per_sm * per_cta, 233472) << v;
  }
  EXPECT_EQ(decode_variant_tile(0).block_m, 0);
  EXPECT_EQ(decode_variant_tile(kNumDecodeVariants + 1).block_m, 0);
}

// Decode tile 4: two consumer warpgroups on the same 64 rows taking alternate key blocks. The stage ring is a
// multiple of the key split, longer than it (each stage holds one warpgroup's blocks, so a full-barrier wait names
// that warpgroup's fill; entry 89), and the split model counts the CTA's two consumer chains: a one-sequence decode
// is split less than on the table's tile, never more.
TEST(TileTable, KeySplitDecodeTile) {
  const TileShape t = decode_variant_tile(4);
  EXPECT_EQ(t.key_split, 2);
  EXPECT_GT(t.stages, t.key_split);
  EXPECT_EQ(t.stages % t.key_split, 0);
  // block k of the CTA is on stage k % stages and belongs to warpgroup k % key_split: one warpgroup a stage
  for (int k = 0; k < 4 * t.stages; ++k) {
    EXPECT_EQ((k % t.stages) % t.key_split, k % t.key_split) << k;
  }
  for (int v = 1; v <= 3; ++v) EXPECT_EQ(decode_variant_tile(v).key_split, 1) << v;
  for (const TileShape& table : kTileShapes) EXPECT_EQ(table.key_split, 1);
  SplitInputs in = decode(1, 8, 1024, 0);
  in.kv_block_bytes = 128 * 256 * 2;
  in.combine_rows = 32;
  const int one = choose_num_splits(in);
  in.key_split = 2;
  EXPECT_LE(choose_num_splits(in), one);
  EXPECT_LT(estimate_split_time_us(in, 1), [&] {
    SplitInputs base = in;
    base.key_split = 1;
    return estimate_split_time_us(base, 1);
  }());
}

TEST(TileTable, TmaBoxRowsStartOnSwizzleAtomsAndNeverStraddlePages) {
  EXPECT_EQ(kv_tma_box_rows(false, 1, 128), 128);  // dense: whole blocks
  EXPECT_EQ(kv_tma_box_rows(false, 1, 80), 80);
  EXPECT_EQ(kv_tma_box_rows(true, 16, 128), 16);
  EXPECT_EQ(kv_tma_box_rows(true, 256, 128), 128);
  EXPECT_EQ(kv_tma_box_rows(true, 64, 80), 16);
  EXPECT_EQ(kv_tma_box_rows(true, 64, 112), 16);
  EXPECT_EQ(kv_tma_box_rows(true, 8, 112), 8);
  EXPECT_EQ(kv_tma_box_rows(true, 1, 128), 0);  // below one atom: cp.async
  EXPECT_EQ(kv_tma_box_rows(true, 4, 128), 0);
  EXPECT_EQ(kv_tma_box_rows(true, 12, 128), 0);
  EXPECT_EQ(kv_tma_box_rows(true, 0, 128), 0);
  for (const TileShape& t : kTileShapes) {
    for (int page = 1; page <= 1024; ++page) {
      const int r = kv_tma_box_rows(true, page, t.block_n);
      if (r == 0) continue;
      EXPECT_EQ(r % 8, 0);
      EXPECT_EQ(page % r, 0) << page;         // a box inside one page
      EXPECT_EQ(t.block_n % r, 0) << page;    // whole boxes per block
      EXPECT_LE(t.block_n / r, 32) << page;  // one lane of the producer warp per box
    }
  }
}

// The native e4m3 tiles (perf-log entry 17): the converting d128 tiles' block_n (splits and a token's result
// agree between prefill and decode tiles and with the converting path's key blocks), 128-byte e4m3 rows.
TEST(TileTable, Fp8NativeTilesMatchTheConvertingTilesKeyBlocks) {
  for (const TileShape& t : kFp8NativeTiles) {
    EXPECT_TRUE(t.fp8_native && t.fp8_kv);
    // d192 / 128 keeps block_n 128 (whole 128-byte V^T rows) where its converting tiles take 96; the plan counts
    // e4m3 q/k/v calls in the native block_n (Plan.Fp8D192PlansInTheNativeBlockN). Its 64- and 128-row tiles agree.
    if (t.head_dim == 192) {
      EXPECT_EQ(t.block_n, fp8_native_tile(192, 128, t.block_m == 64 ? 128 : 64).block_n);
    } else if (t.block_m == 192) {  // the 192-row d64 tile (fp8-m192): the 128-row tile's key blocks
      EXPECT_EQ(t.block_n, fp8_native_tile(t.head_dim, t.head_dim_v, 128).block_n);
    } else {
      EXPECT_EQ(t.block_n, find_tile_shape(t.head_dim, t.head_dim_v, t.block_m, true).block_n);
    }
    // 128-byte rows, or 64-byte column blocks on the 64-byte swizzle (Q, K and raw V at d64, Q and K at d192; V^T at
    // block_n 64)
    EXPECT_TRUE(t.head_dim == 128 || t.head_dim == 64 || t.head_dim == 256 || t.head_dim == 192);
    EXPECT_TRUE(t.block_n == 128 || t.block_n == 64);  // V^T rows are keys
    EXPECT_GE(t.raw_stages, 2);
    // Q (e4m3) + stages x (K + V^T) + raw V stages + row offsets + the 16-bit O staging tile + barriers.
    const int smem = t.block_m * t.head_dim + t.stages * t.block_n * (t.head_dim + t.head_dim_v) +
                     t.raw_stages * t.block_n * t.head_dim_v + 32 * t.block_n + 1024 +
                     t.block_m * t.head_dim_v * 2 + 8 * (1 + 4 * t.stages + 2 * t.raw_stages);
    EXPECT_LE(smem, 232448) << t.block_m;
  }
  EXPECT_EQ(fp8_native_tile(128, 128, 128).block_m, 128);
  EXPECT_EQ(fp8_native_tile(128, 128, 64).block_m, 64);
  EXPECT_EQ(fp8_native_tile(256, 256, 64).block_m, 64);
  EXPECT_EQ(fp8_native_tile(192, 192, 64).block_m, 0);
  EXPECT_EQ(fp8_native_tile(64, 64, 128).block_m, 128);
  EXPECT_EQ(fp8_native_tile(64, 64, 64).block_m, 64);
  // Calls no TMA box fits go by copies only where every tile of the head dims has the copy path: d256's 128-row
  // tile has none, so there both block_m take the converting tiles (the same token, the same arithmetic).
  EXPECT_TRUE(fp8_native_copies_of(128, 128));
  EXPECT_TRUE(fp8_native_copies_of(64, 64));
  EXPECT_TRUE(fp8_native_copies_of(192, 128));
  EXPECT_FALSE(fp8_native_copies_of(256, 256));
  EXPECT_FALSE(fp8_native_copies_of(192, 192));  // no native tile
  EXPECT_TRUE(Experiment::parse("fp8-native").fp8_native);
  EXPECT_FALSE(Experiment::parse("fp8-native,fp8-convert").fp8_native);
  EXPECT_FALSE(Experiment::parse("fp8-convert").fp8_native);
  EXPECT_TRUE(Experiment::parse(nullptr).fp8_native);  // the default since perf-log entry 19
  EXPECT_FALSE(Experiment::parse(nullptr).fp8_native_one_p);
  // The measured defaults that are switches: on by default, "no-<token>" turns each off, "<token>" keeps it on.
  struct Switch {
    const char* token;
    bool Experiment::*field;
  };
  for (const Switch& sw : {Switch{"persist", &Experiment::persistent}, Switch{"tile-fastdiv", &Experiment::tile_fastdiv},
                           Switch{"d96-m192", &Experiment::d96_m192}, Switch{"d96-persist", &Experiment::d96_persist},
                           Switch{"lean-tail", &Experiment::lean_tail},
                           Switch{"tma-warps-few", &Experiment::tma_warps_few_ctas},
                           Switch{"fp8-f16pv", &Experiment::fp8_f16_pv}}) {
    const std::string off = std::string("no-") + sw.token;
    EXPECT_TRUE(Experiment::parse(nullptr).*sw.field) << sw.token;
    EXPECT_FALSE(Experiment::parse(off.c_str()).*sw.field) << off;
    if (std::string(sw.token) != "persist") EXPECT_TRUE(Experiment::parse(sw.token).*sw.field) << sw.token;
  }
  EXPECT_EQ(Experiment::parse(nullptr).lpt_mode, 1);  // entry 66: where lpt_pays
  EXPECT_EQ(Experiment::parse(nullptr).lpt_l2_mb, 40);
  EXPECT_EQ(Experiment::parse("lpt").lpt_mode, 2);
  EXPECT_EQ(Experiment::parse("lpt").lpt_l2_mb, 40);
  EXPECT_EQ(Experiment::parse("lpt=24").lpt_mode, 2);
  EXPECT_EQ(Experiment::parse("lpt=24").lpt_l2_mb, 24);
  EXPECT_EQ(Experiment::parse("no-lpt").lpt_mode, 0);
  EXPECT_EQ(Experiment::parse(nullptr).q_tma_mode, 1);  // entry 69: where q_boxes_pay
  EXPECT_EQ(Experiment::parse("q-tma").q_tma_mode, 2);
  EXPECT_EQ(Experiment::parse("no-q-tma").q_tma_mode, 0);
  EXPECT_FALSE(Experiment::parse(nullptr).kv_coords_early);  // entry 76
  EXPECT_TRUE(Experiment::parse(nullptr).fp8_f16_pv_d128);  // the default since entry 79's A/B
  EXPECT_TRUE(Experiment::parse("fp8-f16pv-d128").fp8_f16_pv_d128);
  EXPECT_FALSE(Experiment::parse("no-fp8-f16pv-d128").fp8_f16_pv_d128);
  EXPECT_FALSE(Experiment::parse(nullptr).combine_carveout);  // entry 80, measured neutral
  EXPECT_TRUE(Experiment::parse("combine-carveout").combine_carveout);
  EXPECT_FALSE(Experiment::parse(nullptr).m192_turns);  // entry 81, measured neutral
  EXPECT_TRUE(Experiment::parse("m192-turns").m192_turns);
  EXPECT_FALSE(Experiment::parse(nullptr).decode_persist);  // every grid: entry 86, d64 slower on one wave
  EXPECT_TRUE(Experiment::parse("decode-persist").decode_persist);
  EXPECT_TRUE(Experiment::parse(nullptr).decode_persist_waves);  // entry 86
  EXPECT_FALSE(Experiment::parse("no-decode-persist").decode_persist_waves);
  EXPECT_TRUE(Experiment::parse("kv-coords-early").kv_coords_early);
}

// The mask's row bits (sm90/mask_bits.h, entry 75) against the element-wise limits they replace: element (j, e) of
// a thread whose first column is col0 is masked iff col0 + 8 j + e > hi or < lo. Every lo / hi around the
// fragment, unbounded ones (+-2^30) and the block widths of the tile table.
template <int kN>
void expect_row_bits_match_compares() {
  constexpr int kUnbounded = 1 << 30;
  std::vector<int> cols;
  for (int block : {0, 1, 7, 1000}) {
    for (int quad = 0; quad < 4; ++quad) cols.push_back(block * kN + 2 * quad);
  }
  for (int col0 : cols) {
    std::vector<int> limits = {-kUnbounded, kUnbounded, col0 - 1000, col0 + 1000};
    for (int d = -12; d <= kN + 12; ++d) limits.push_back(col0 + d);
    for (int lo : limits) {
      for (int hi : limits) {
        for (int e = 0; e < 2; ++e) {
          const uint32_t bits = row_column_bits<kN>(lo, hi, col0, e);
          for (int j = 0; j < kN / 8; ++j) {
            const long long col = static_cast<long long>(col0) + 8 * j + e;
            const bool visible = col <= hi && col >= lo;
            ASSERT_EQ(((bits >> j) & 1u) != 0, visible)
                << "kN " << kN << " col0 " << col0 << " lo " << lo << " hi " << hi << " j " << j << " e " << e;
          }
          ASSERT_EQ(bits >> (kN / 8), 0u) << "no bits past the fragment";
        }
      }
    }
  }
}

// The unmasked blocks' range (mask_bits.h, entry 109) against block_needs_mask's per-block test (sm90/mask.h) it
// replaces under mask-range: a block is in [lo, hi) exactly when no key of it is past seqlen_k, past the right
// limit or before the left one; negative limits included.
TEST(MaskBits, UnmaskedBlockRangeMatchesThePerBlockTest) {
  uint32_t state = 12345u;
  auto next = [&](int m) {
    state = state * 1664525u + 1013904223u;
    return static_cast<int>((state >> 8) % static_cast<uint32_t>(m));
  };
  int checked = 0;
  for (int trial = 0; trial < 20000; ++trial) {
    const int block_n = (trial % 3 == 0) ? 64 : (trial % 3 == 1) ? 128 : 176;
    const int seqlen_k = next(3000);
    const bool rb = next(2) == 1, lb = next(2) == 1;
    const int right_last = next(3400) - 300, left_first = next(3400) - 300;
    int lo = -1, hi = -1;
    unmasked_block_range(block_n, seqlen_k, rb, right_last, lb, left_first, lo, hi);
    for (int n = 0; n * block_n < seqlen_k + 2 * block_n; ++n) {
      const int first = n * block_n, last = first + block_n - 1;
      const bool needs = last >= seqlen_k || (rb && last > right_last) || (lb && first < left_first);
      ASSERT_EQ(!needs, n >= lo && n < hi) << trial << " n " << n << " bn " << block_n << " sk " << seqlen_k
                                           << " r " << rb << ":" << right_last << " l " << lb << ":" << left_first;
      ++checked;
    }
  }
  EXPECT_GT(checked, 100000);
}

// Under mask-range (entry 109) the one-tile values of the long prefill tiles gain the bit; persistent values, decode
// tiles and e4m3 tiles keep theirs.
TEST(TileLoop, MaskRangeReachesTheOneTileValuesThatListIt) {
  const Experiment e = Experiment::parse("mask-range");
  const int lean = sm90::kDefaultLoopFlags | sm90::kLeanTailLoopBit;
  const int bit = sm90::kMaskRangeLoopBit;
  EXPECT_EQ(tile_loop_flags(e, TileLoopKey{64, 64, 192, 0, true, false, false, 500, 132}, -1),
            sm90::kOneTileLoopFlags | bit);
  EXPECT_EQ(tile_loop_flags(e, TileLoopKey{128, 128, 128, 0, true, false, false, 500, 132}, lean), lean | bit);
  const int persistent = sm90::kPersistentLoopFlags | sm90::kTileFastDivLoopBit;
  EXPECT_EQ(tile_loop_flags(e, TileLoopKey{128, 128, 128, 0, true, false, false, 500, 132}, persistent), persistent);
  EXPECT_EQ(tile_loop_flags(e, TileLoopKey{128, 128, 64, 0, true, false, false, 500, 132}, -1), -1);
  // the default carries mask-range-d64 (entry 112); no-mask-range-d64 turns it off
  EXPECT_EQ(tile_loop_flags(Experiment::parse(nullptr), TileLoopKey{64, 64, 192, 0, true, false, false, 500, 132}, -1),
            sm90::kOneTileLoopFlags | bit);
  EXPECT_EQ(tile_loop_flags(Experiment::parse(nullptr), TileLoopKey{128, 128, 128, 0, true, false, false, 500, 132},
                            lean),
            lean);
  EXPECT_EQ(tile_loop_flags(Experiment::parse("no-mask-range-d64"),
                            TileLoopKey{64, 64, 192, 0, true, false, false, 500, 132}, -1),
            -1);
  // tma-no-fence (entry 110) rides on mask-range's values
  const Experiment both = Experiment::parse("mask-range,tma-no-fence");
  EXPECT_EQ(tile_loop_flags(both, TileLoopKey{64, 64, 192, 0, true, false, false, 500, 132}, -1),
            sm90::kOneTileLoopFlags | bit | sm90::kTmaNoFenceLoopBit);
  EXPECT_EQ(tile_loop_flags(both, TileLoopKey{128, 128, 128, 0, true, false, false, 500, 132}, lean),
            lean | bit | sm90::kTmaNoFenceLoopBit);
  // mask-range-d64 (entry 112): the d64 192-row tile's value only
  const Experiment d64 = Experiment::parse("mask-range-d64");
  EXPECT_EQ(tile_loop_flags(d64, TileLoopKey{64, 64, 192, 0, true, false, false, 500, 132}, -1),
            sm90::kOneTileLoopFlags | bit);
  EXPECT_EQ(tile_loop_flags(d64, TileLoopKey{128, 128, 128, 0, true, false, false, 500, 132}, lean), lean);
  EXPECT_EQ(tile_loop_flags(d64, TileLoopKey{64, 64, 192, 0, true, false, false, 500, 132}, persistent), persistent);
}

TEST(MaskBits, RowBitsMatchTheElementCompares) {
  expect_row_bits_match_compares<176>();  // the one-block windowed d64 tile (entry 103)
  expect_row_bits_match_compares<128>();
  expect_row_bits_match_compares<112>();
  expect_row_bits_match_compares<96>();
  expect_row_bits_match_compares<80>();
  expect_row_bits_match_compares<64>();
}

// Entry 102: a windowed tile's key blocks from its first visible key (key_origin.h), counted as the device's
// block_range counts them (mask.h): the same keys, never more blocks than from key 0 when the origin's rows divide
// block_n, and a 24-token tile under a 128-key window (151 keys) in exactly two blocks of 128 at page 16.
TEST(KeyOrigin, WindowedBlocksFromTheFirstVisibleKey) {
  auto blocks = [](int key_begin, int key_end, int block_n) {  // block_range's [n_begin, n_end) count
    const int n_end = key_end <= 0 ? 0 : (key_end + block_n - 1) / block_n;
    const int n_begin = key_begin <= 0 ? 0 : key_begin / block_n;
    return n_end > n_begin ? n_end - n_begin : 0;
  };
  for (const int rows : {1, 8, 16, 64}) {
    for (const int block_n : {64, 128, 176}) {
      for (const int seqlen_k : {1, 100, 1000, 8192}) {
        for (int first = -200; first < seqlen_k + 50; first += 7) {
          for (const int span : {1, 64, 143, 151, 300}) {
            const int origin = window_key_origin(first, seqlen_k, rows);
            ASSERT_GE(origin, 0);
            ASSERT_LE(origin, std::max(0, first));
            ASSERT_LE(origin, seqlen_k);
            ASSERT_EQ(origin % rows == 0 || origin == seqlen_k, true) << origin << " rows " << rows;
            const int key_begin = std::max(0, first), key_end = std::min(seqlen_k, first + span);
            if (key_end <= key_begin) continue;
            const int shifted = blocks(key_begin - origin, key_end - origin, block_n);
            // The shifted blocks cover the tile's keys: from key origin, shifted x block_n keys reach key_end.
            ASSERT_LE(key_begin - origin, block_n - 1) << "the first block holds the first visible key";
            ASSERT_GE(origin + shifted * block_n, key_end);
            if (block_n % rows == 0) {
              ASSERT_LE(shifted, blocks(key_begin, key_end, block_n)) << "first " << first << " span " << span;
            }
          }
        }
      }
    }
  }
  for (int first = 1; first < 4096; ++first) {
    const int origin = window_key_origin(first, 8192, 16);
    EXPECT_EQ(blocks(first - origin, first + 151 - origin, 128), 2) << first;
  }
  EXPECT_EQ(window_key_origin(500, 8192, 0), 0);  // rows 0: blocks from key 0
}

// A call's origin rows (key_origin.h window_origin_rows_of): a paged cache's TMA box rows, any row elsewhere, and
// none where the caller fixes the split count (num_splits = 1, the batch-invariant mode: a request's bits must not
// depend on its batch's tile height or on the cache's boxes), under context parallelism, without a window, or off.
TEST(WindowKeyOrigin, OriginRowsOfACall) {
  EXPECT_EQ(window_origin_rows_of(true, 127, 1, 0, true, 16), 16);
  EXPECT_EQ(window_origin_rows_of(true, 127, 1, 0, true, 128), 128);
  EXPECT_EQ(window_origin_rows_of(true, 127, 1, 0, true, 0), 1);  // copying producer (pages of 1, 4, 48)
  EXPECT_EQ(window_origin_rows_of(true, 127, 1, 0, false, 128), 1);  // varlen and batched rows
  EXPECT_EQ(window_origin_rows_of(true, 127, 1, 1, true, 16), 0);  // num_splits = 1
  EXPECT_EQ(window_origin_rows_of(true, 127, 1, 4, true, 16), 0);  // the caller's split count
  EXPECT_EQ(window_origin_rows_of(true, 127, 2, 0, true, 16), 0);  // context parallelism
  EXPECT_EQ(window_origin_rows_of(true, -1, 1, 0, true, 16), 0);  // no left side
  EXPECT_EQ(window_origin_rows_of(false, 127, 1, 0, true, 16), 0);  // no-window-origin
}

// lpt's launch order (launch_order.h, entry 66): every (tile, pair) exactly once; a section of one pair is the old
// order (each pair's tiles after the previous pair's); within a section the heaviest tiles of all its pairs first.
TEST(LaunchOrder, LptVisitsEveryTileOnceHeaviestFirstInEachSection) {
  struct Grid { int x, y, z, section; };
  for (const Grid g : {Grid{32, 16, 1, 16}, Grid{32, 16, 1, 12}, Grid{7, 3, 5, 4}, Grid{9, 4, 2, 1}, Grid{5, 6, 1, 64},
                       Grid{1, 8, 3, 5}}) {
    const int pairs = g.y * g.z;
    std::vector<int> seen(static_cast<size_t>(g.x) * pairs, 0);
    int last_section = -1, last_heaviness = 0;
    for (int linear = 0; linear < g.x * pairs; ++linear) {
      const LaunchTile t = lpt_tile_of(linear, g.x, g.y, g.z, g.section);
      ASSERT_GE(t.heaviness, 0);
      ASSERT_LT(t.heaviness, g.x);
      ASSERT_GE(t.y, 0);
      ASSERT_LT(t.y, g.y);
      ASSERT_GE(t.z, 0);
      ASSERT_LT(t.z, g.z);
      const int pair = t.y + g.y * t.z;
      ++seen[static_cast<size_t>(pair) * g.x + t.heaviness];
      const int section = pair / g.section;
      ASSERT_GE(section, last_section) << "sections run one after another";
      if (section == last_section) ASSERT_GE(t.heaviness, last_heaviness) << "heaviest first in a section";
      last_section = section;
      last_heaviness = t.heaviness;
      if (g.section == 1) {
        EXPECT_EQ(pair, linear / g.x);
        EXPECT_EQ(t.heaviness, linear % g.x);
      }
    }
    for (const int n : seen) ASSERT_EQ(n, 1) << g.x << "x" << g.y << "x" << g.z << " sections of " << g.section;
  }
  // 16 pairs in one section: the first 16 CTAs are every pair's heaviest tile.
  for (int linear = 0; linear < 16; ++linear) EXPECT_EQ(lpt_tile_of(linear, 32, 16, 1, 16).heaviness, 0);
}

// Entry 66's rule on the H200's 132 SMs: the measured winners take lpt, the grids it did not move keep the old order.
TEST(LaunchOrder, LptOnlyOnGridsWhoseTailMatters) {
  const int sms = 132;
  EXPECT_TRUE(lpt_pays(16LL * 32, sms));       // MLAp16 q4k: 16 heads x 32 m blocks (-13%)
  EXPECT_TRUE(lpt_pays(2LL * 8 * 64, sms));    // G9 2q4k: 2 sequences x 8 KV heads x 64 packed m blocks (-7%)
  EXPECT_TRUE(lpt_pays(4LL * 16 * 16, sms));   // MLAp16 4q2k (-5%)
  EXPECT_FALSE(lpt_pays(16LL * 128, sms));     // G27 q8k: 16 KV heads x 128 packed m blocks (+3%)
  EXPECT_FALSE(lpt_pays(128LL * 32, sms));     // MLAp128 q4k (+1.5%)
  EXPECT_TRUE(lpt_pays(10LL * sms, sms));
  EXPECT_FALSE(lpt_pays(10LL * sms + 1, sms));
}

// Entry 69's rule: Q by boxes where the sequences average a box of tokens. The measured winners take the boxes, the
// mixed batches of decodes that lost 4-10% keep the copies.
TEST(TileTable, QBoxesWhereSequencesFillThem) {
  EXPECT_TRUE(q_boxes_pay(16LL * 512, 16, 128 / 4));          // L8 16q512 (G 4: 32-token boxes; -3%, -7% with lean-tail)
  EXPECT_TRUE(q_boxes_pay(16LL * 512, 16, 128 / 8));          // L70 16q512
  EXPECT_TRUE(q_boxes_pay(257 + 1024 + 63 + 4093, 4, 32));    // L8 q257_q1k_q63_q4093
  EXPECT_TRUE(q_boxes_pay(2 * 4096 + 32, 34, 32));            // mixed L8 2q4k_32q1s1k (-2.9%)
  EXPECT_FALSE(q_boxes_pay(1024 + 1024, 1025, 32));           // mixed L8 q1k_1024q1s1k (+9.5% with boxes)
  EXPECT_FALSE(q_boxes_pay(1024 + 64, 65, 32));               // mixed L8 q1ks8k_64q1s4k (+4.4%)
  EXPECT_FALSE(q_boxes_pay(4 * 512 + 128, 132, 32));          // mixed L8 4q512s8k_128q1s2k (+3.8%)
  EXPECT_FALSE(q_boxes_pay(1024 + 64, 65, 64));               // mixed L70t4 q1ks8k_64q1s4k (G 2)
  EXPECT_TRUE(q_boxes_pay(32, 1, 32));
  EXPECT_FALSE(q_boxes_pay(31, 1, 32));
}

// Entry 70's rule on the H200's 132 SMs: four box-issuing warps on grids of at most 66 CTAs.
TEST(TileTable, FourIssuersOnFewCtas) {
  EXPECT_TRUE(four_issuers_pay(32, 132));       // splits32-md q1s128k, one KV head group (-5.6%)
  EXPECT_TRUE(four_issuers_pay(8 * 8, 132));    // L8 8q1s1k: 8 sequences x 8 KV heads (-3.7%)
  EXPECT_TRUE(four_issuers_pay(66, 132));
  EXPECT_FALSE(four_issuers_pay(67, 132));
  EXPECT_FALSE(four_issuers_pay(128LL * 8, 132));  // L70t8 128q1s1k keeps two
}

TEST(FastDiv, MatchesIntegerDivision) {
  std::mt19937 rng(7);
  for (uint32_t d : {1u, 2u, 3u, 4u, 7u, 8u, 16u, 48u, 64u, 96u, 100u, 128u, 255u, 4096u, 65537u}) {
    const FastDiv f = FastDiv::make(d);
    for (int i = 0; i < 20000; ++i) {
      const int n = (i < 5000) ? i : static_cast<int>(rng() & 0x7fffffff);
      ASSERT_EQ(f.div_host(n), n / static_cast<int>(d)) << n << " / " << d;
    }
  }
}

TensorView tensor(DType dtype, std::initializer_list<int64_t> shape) { return dense_view(dtype, shape); }

TEST(Plan, SchedulerMetadataAndTheCallAgreeOnSplits) {
  DeviceInfo h200;
  for (int batch : {1, 4, 16, 128}) {
    for (int seqlen_k : {1024, 8192, 65536}) {
      AttentionArgs a;
      a.q = tensor(DType::kBFloat16, {batch, 32, 128});
      a.k = tensor(DType::kBFloat16, {4096, 16, 8, 128});
      a.v = tensor(DType::kBFloat16, {4096, 16, 8, 128});
      a.out = tensor(DType::kBFloat16, {batch, 32, 128});
      a.cu_seqlens_q = tensor(DType::kInt32, {batch + 1});
      a.seqused_k = tensor(DType::kInt32, {batch});
      a.block_table = tensor(DType::kInt32, {batch, 4096});
      a.max_seqlen_q = 1;
      a.max_seqlen_k = seqlen_k;
      a.causal = true;
      validate(a);
      SchedulerArgs s;
      s.batch_size = batch;
      s.max_seqlen_q = 1;
      s.max_seqlen_k = seqlen_k;
      s.num_heads_q = 32;
      s.num_heads_kv = 8;
      s.headdim = s.headdim_v = 128;
      s.cache_seqlens = tensor(DType::kInt32, {batch});
      s.page_size = 16;
      s.causal = true;
      const LaunchPlan call = make_plan(a, h200);
      const LaunchPlan meta = make_plan(s, h200);
      EXPECT_EQ(call.num_splits, meta.num_splits) << batch << " " << seqlen_k;
      EXPECT_EQ(call.block_n, meta.block_n);
      EXPECT_EQ(call.num_m_blocks, 1);
      if (call.num_splits > 1) {
        EXPECT_EQ(call.workspace_bytes, static_cast<size_t>(call.num_splits) * batch * 32 * 129 * 4);
      } else {
        EXPECT_EQ(call.workspace_bytes, 0u);
      }
    }
  }
}

// Whether the plan's e4m3 keys-as-M rule is on (variant 208's tile needs the native tiles with fp16 P*V at d128).
bool fp8_keys_as_m_on() {
  const Experiment& e = Experiment::get();
  return e.fp8_keys_as_m && e.fp8_native && !e.fp8_native_one_p && e.fp8_f16_pv && e.fp8_f16_pv_d128;
}

// A one-token decode of `batch` sequences, page 16, on the H200's SM count.
LaunchPlan decode_plan(DType dtype, int batch, int num_heads_q, int num_heads_kv, int d, int seqlen_k,
                       int num_splits, int max_seqlen_q = 1, int page_size = 16) {
  SchedulerArgs s;
  s.batch_size = batch;
  s.max_seqlen_q = max_seqlen_q;
  s.max_seqlen_k = seqlen_k;
  s.num_heads_q = num_heads_q;
  s.num_heads_kv = num_heads_kv;
  s.headdim = s.headdim_v = d;
  s.cache_seqlens = tensor(DType::kInt32, {batch});
  s.page_size = page_size;
  s.causal = true;
  s.num_splits = num_splits;
  s.qkv_dtype = dtype;
  return make_plan(s, DeviceInfo{});
}

// A bf16 d128 causal varlen call against a paged cache (pages of `page_size` tokens), as run() plans it.
struct PagedVarlenCall {
  int num_heads_q, num_heads_kv, page_size, pages_per_seq;
  LaunchPlan operator()(int64_t total_q, int batch, int64_t max_q, int64_t max_k, int num_splits = 0) const {
    AttentionArgs a;
    a.q = tensor(DType::kBFloat16, {total_q, num_heads_q, 128});
    a.out = tensor(DType::kBFloat16, {total_q, num_heads_q, 128});
    a.k = tensor(DType::kBFloat16, {1024, page_size, num_heads_kv, 128});
    a.v = tensor(DType::kBFloat16, {1024, page_size, num_heads_kv, 128});
    a.cu_seqlens_q = tensor(DType::kInt32, {batch + 1});
    a.seqused_k = tensor(DType::kInt32, {batch});
    a.block_table = tensor(DType::kInt32, {batch, pages_per_seq});
    a.max_seqlen_q = max_q;
    a.max_seqlen_k = max_k;
    a.causal = true;
    a.num_splits = num_splits;
    validate(a);
    return make_plan(a, DeviceInfo{});
  }
};

// Entry 48: a varlen call counts its real tiles and rows. Operator S1 with 16 query heads on 2 KV heads: 54 tiles
// by the longest sequence, 22 real (q has 135 tokens, not 3 x 129); the real count splits the 1328-key sequence
// further than get_scheduler_metadata's bound does. A batch of equal sequences plans the same either way, and so
// does a call the bound leaves unsplit.
TEST(Plan, VarlenCallSplitsByItsRealTiles) {
  const PagedVarlenCall call{16, 2, 16, 128};
  const int bound = decode_plan(DType::kBFloat16, 3, 16, 2, 128, 1328, 0, 129).num_splits;  // get_scheduler_metadata's
  const LaunchPlan s1 = call(135, 3, 129, 1328);
  EXPECT_EQ(s1.num_m_blocks, 9);
  if (Experiment::get().split_real_tiles) {
    EXPECT_GT(s1.num_splits, bound);
    EXPECT_EQ(s1.num_splits, 4);  // 3 key blocks per split (11 blocks); 4 ran 16% faster than the bound's 2
  } else {
    EXPECT_EQ(s1.num_splits, bound);
  }
  EXPECT_EQ(call(3 * 129, 3, 129, 1328).num_splits, bound);  // three equal sequences: every tile is real
  // A call the bound leaves whole stays whole: a 257-query prefill beside 16 decodes (578 tiles counted, 68 real;
  // edge q257s1k_16q1s600 ran 1.79x slower in 2 splits).
  EXPECT_EQ(call(257 + 16, 17, 257, 1000).num_splits, 1);
}

// Short bf16 d128 prefills stay on the 128-row persistent kernel: the 64-row two-CTA tile lost there (entry 65:
// 16q512 +10%, q1k +15%).
TEST(Plan, ShortPrefillsKeep128RowsByDefault) {
  const LaunchPlan s16q512 = PagedVarlenCall{32, 8, 16, 512}(16 * 512, 16, 512, 512);
  EXPECT_EQ(s16q512.block_m, 128);
  EXPECT_TRUE(s16q512.persistent);
}

// 4 query heads per KV head.
LaunchPlan gqa4_decode_plan(DType dtype, int batch, int num_heads_kv, int d, int seqlen_k, int num_splits) {
  return decode_plan(dtype, batch, 4 * num_heads_kv, num_heads_kv, d, seqlen_k, num_splits);
}

// Decode tile 5 (keys as M, sm90/consumer_keys_as_m.h): the table's d128 decode tile's key blocks and stages (so the
// same splits), 8 query rows, shared memory for P^T and the column maxima beside the stages.
TEST(TileTable, KeysAsMDecodeTile) {
  const TileShape t = decode_variant_tile(5);
  const TileShape table = find_tile_shape(128, 128, 64, false);
  EXPECT_EQ(t.query_rows, 8);
  EXPECT_EQ(t.block_n, table.block_n);
  EXPECT_EQ(t.stages, table.stages);
  EXPECT_EQ(t.ctas_per_sm, 1);
  EXPECT_EQ(t.key_split, 1);
  // tiles + row offsets, P^T (8 x block_n 16-bit, 1 KB aligned), the maxima (2 x 4 x 8 floats), barriers, 1 KB
  const int per_cta = tile_smem_bytes(t) + 32 * t.block_n + 1024 + 8 * t.block_n * 2 + 256 + 8 * (1 + 4 * t.stages);
  EXPECT_LE(per_cta + 1024, 233472);
  for (int v = 1; v <= 4; ++v) EXPECT_EQ(decode_variant_tile(v).query_rows, 0) << v;
  for (const TileShape& s : kTileShapes) EXPECT_EQ(s.query_rows, 0);
  // d64's (tile 6): the table's d64 decode tile's block_n and stages
  const TileShape t64 = decode_variant_tile(kKeysAsMD64DecodeVariant);
  const TileShape table64 = find_tile_shape(64, 64, 64, false);
  EXPECT_EQ(t64.query_rows, 8);
  EXPECT_EQ(t64.head_dim, 64);
  EXPECT_EQ(t64.block_n, table64.block_n);
  EXPECT_EQ(t64.stages, table64.stages);
  EXPECT_EQ(keys_as_m_variant(128, 128), kKeysAsMDecodeVariant);
  EXPECT_EQ(keys_as_m_variant(64, 64), kKeysAsMD64DecodeVariant);
  EXPECT_EQ(keys_as_m_variant(256, 256), 0);
  EXPECT_EQ(keys_as_m_variant(192, 128), 0);
}

// Under tile=5 the plan takes the keys-as-M tile for bf16 d128 calls whose packed rows (max_seqlen_q x group) fit its
// 8 query rows, with the split count the table's tile gets; other calls keep the table's tile.
TEST(PlanUnderKeysAsM, DecodesWhoseRowsFitTakeTheKeysAsMTile) {
  if (Experiment::get().decode_tile != 5) GTEST_SKIP() << "runs under FLASHSEEK_EXPERIMENT=tile=5 (ctest plan_under_keys_as_m)";
  for (int seqlen_k : {1024, 32768, 131072}) {
    const LaunchPlan gqa8 = decode_plan(DType::kBFloat16, 1, 8, 1, 128, seqlen_k, 0);
    EXPECT_EQ(gqa8.tile_variant, 5) << seqlen_k;
    EXPECT_EQ(gqa8.block_m, 64);
    EXPECT_EQ(gqa8.block_n, 128);
    EXPECT_EQ(decode_plan(DType::kBFloat16, 1, 8, 1, 128, seqlen_k, 32).num_splits,
              std::min(32, (seqlen_k + 127) / 128));
  }
  EXPECT_EQ(decode_plan(DType::kBFloat16, 4, 28, 4, 128, 4096, 0).tile_variant, 5);       // group 7
  EXPECT_EQ(decode_plan(DType::kBFloat16, 4, 32, 8, 128, 4096, 0, 2).tile_variant, 5);    // 2 tokens x 4
  EXPECT_EQ(decode_plan(DType::kBFloat16, 4, 8, 1, 128, 4096, 0, 2).tile_variant, 0);     // 16 rows
  EXPECT_EQ(decode_plan(DType::kBFloat16, 4, 64, 4, 128, 4096, 0).tile_variant, 0);       // group 16
  EXPECT_EQ(decode_plan(DType::kFloat16, 4, 8, 1, 128, 4096, 0).tile_variant, 0);         // bf16 only
  // d64 takes its own keys-as-M tile by the default rule, which tile=5 leaves on
  EXPECT_EQ(decode_plan(DType::kBFloat16, 4, 8, 1, 64, 4096, 0).tile_variant,
            Experiment::get().keys_as_m ? kKeysAsMD64DecodeVariant : 0);
  // e4m3 takes its own keys-as-M tile by its own rule (variant 208), which tile=5 leaves on
  EXPECT_EQ(decode_plan(DType::kFloat8E4M3, 4, 8, 1, 128, 4096, 0).tile_variant,
            fp8_keys_as_m_on() ? kFp8NativeKeysAsMVariant : 0);
}

// Since entry 95 (default; entry 94 built it) e4m3 d128 decodes whose packed rows fit 8 take the native keys-as-M
// tile (variant 208) where the native 64-row tile would run, with its split count; not the two-CTA grids, not
// num_splits = 1, not 16 rows or d64; bf16 keeps its own rule.
TEST(Plan, E4m3DecodesWhoseRowsFitTakeTheNativeKeysAsMTile) {
  if (!fp8_keys_as_m_on()) GTEST_SKIP() << "FLASHSEEK_EXPERIMENT turns the native e4m3 keys-as-M tile off";
  const LaunchPlan one = decode_plan(DType::kFloat8E4M3, 1, 8, 1, 128, 32768, 32);
  EXPECT_EQ(one.tile_variant, kFp8NativeKeysAsMVariant);
  EXPECT_EQ(one.num_splits, 32);
  EXPECT_EQ(one.block_n, 128);
  EXPECT_EQ(decode_plan(DType::kFloat8E4M3, 4, 32, 8, 128, 4096, 0, 2).tile_variant, kFp8NativeKeysAsMVariant);
  EXPECT_EQ(decode_plan(DType::kFloat8E4M3, 1, 8, 1, 128, 32768, 1).tile_variant, 0);
  EXPECT_EQ(decode_plan(DType::kFloat8E4M3, 4, 8, 1, 128, 4096, 0, 2).tile_variant, 0);   // 16 rows
  EXPECT_EQ(decode_plan(DType::kFloat8E4M3, 4, 8, 1, 64, 4096, 0).tile_variant, 0);        // d128 only
  EXPECT_EQ(decode_plan(DType::kFloat8E4M3, 512, 32, 8, 128, 2048, 0).tile_variant,
            Experiment::get().fp8_keys_as_m_two_ctas ? kFp8NativeKeysAsMTwoCtaVariant : kFp8NativeTwoCtaVariant);
  EXPECT_EQ(decode_plan(DType::kBFloat16, 1, 8, 1, 128, 32768, 32).tile_variant,
            Experiment::get().keys_as_m ? kKeysAsMDecodeVariant : 0);  // bf16: its own rule
  // the split count is chosen before the rule, from the native 64-row tile's shape: the same as a group of 16 on that
  // tile gets here (16 rows: no keys-as-M tile; its larger combine does not move these counts)
  for (int seqlen_k : {2048, 32768, 131072}) {
    const LaunchPlan p = decode_plan(DType::kFloat8E4M3, 1, 8, 1, 128, seqlen_k, 0);
    ASSERT_EQ(p.tile_variant, kFp8NativeKeysAsMVariant);
    const LaunchPlan g16 = decode_plan(DType::kFloat8E4M3, 1, 16, 1, 128, seqlen_k, 0);
    ASSERT_EQ(g16.tile_variant, 0);
    EXPECT_EQ(p.num_splits, g16.num_splits) << seqlen_k;
  }
}

// By default (entry 105; no-kam2 turns it off, ctest plan_under_no_kam2) the bf16 decodes that take a two-CTA tile (1 at d128, 3 at d64) take
// the keys-as-M consumer on that tile's stages (7, 8) where the packed rows fit 8; not where the caller fixes
// num_splits = 1 (tile 3 keeps the table's bits there), not 16 rows, not fp16 (the two-CTA tiles are bf16's).
TEST(Plan, TwoCtaDecodesWhoseRowsFitTakeKeysAsM) {
  if (!Experiment::get().keys_as_m_two_ctas) GTEST_SKIP() << "FLASHSEEK_EXPERIMENT has no-kam2";
  const LaunchPlan d64 = decode_plan(DType::kBFloat16, 512, 8, 1, 64, 2048, 0);
  const bool kam4 = Experiment::get().keys_as_m_four_ctas;  // tile 9 in tile 8's place (entry 111)
  EXPECT_EQ(d64.tile_variant, kam4 ? kKeysAsMFourCtaD64DecodeVariant : kKeysAsMTwoCtaD64DecodeVariant);
  EXPECT_EQ(d64.block_n, kam4 ? 64 : 128);
  EXPECT_EQ(d64.num_splits, 1);
  const LaunchPlan d128 = decode_plan(DType::kBFloat16, 512, 8, 1, 128, 2048, 0);
  EXPECT_EQ(d128.tile_variant, kKeysAsMTwoCtaDecodeVariant);
  EXPECT_EQ(d128.block_n, 64);
  EXPECT_EQ(decode_plan(DType::kBFloat16, 128, 28, 4, 128, 1024, 0).tile_variant, kKeysAsMTwoCtaDecodeVariant);  // 7
  EXPECT_EQ(decode_plan(DType::kBFloat16, 512, 8, 1, 64, 2048, 1).tile_variant, 3);       // the caller's 1 split
  EXPECT_EQ(decode_plan(DType::kBFloat16, 512, 8, 1, 128, 2048, 0, 2).tile_variant, 1);   // 16 rows
  EXPECT_EQ(decode_plan(DType::kBFloat16, 512, 64, 4, 128, 2048, 0).tile_variant, 1);     // group 16
  EXPECT_NE(decode_plan(DType::kBFloat16, 4, 8, 1, 64, 4096, 0).tile_variant, kKeysAsMTwoCtaD64DecodeVariant);  // 4 CTAs
  for (int v : {kKeysAsMTwoCtaDecodeVariant, kKeysAsMTwoCtaD64DecodeVariant}) {
    EXPECT_EQ(decode_variant_tile(v).ctas_per_sm, 2);
    EXPECT_EQ(decode_variant_tile(v).query_rows, 8);
  }
  EXPECT_TRUE(Experiment::parse("kam2").keys_as_m_two_ctas);
  EXPECT_EQ(keys_as_m_variant(128, 128, 2), kKeysAsMTwoCtaDecodeVariant);
  EXPECT_EQ(keys_as_m_variant(64, 64, 2), kKeysAsMTwoCtaD64DecodeVariant);
  EXPECT_EQ(keys_as_m_variant(256, 256, 2), 0);
}

// By default (entry 107; no-fp8-kam2 turns it off, ctest plan_under_no_fp8_kam2) e4m3 d128 decodes that take the
// native two-CTA tile take its keys-as-M form (variant 209) where the packed rows fit 8; 16 rows keep the two-CTA tile,
// one-wave grids variant 208.
TEST(Plan, E4m3TwoCtaDecodesWhoseRowsFitTakeKeysAsM) {
  if (!Experiment::get().fp8_keys_as_m_two_ctas) GTEST_SKIP() << "FLASHSEEK_EXPERIMENT has no-fp8-kam2";
  const LaunchPlan p = decode_plan(DType::kFloat8E4M3, 128, 32, 8, 128, 8192, 0);  // 1024 CTAs, group 4
  EXPECT_EQ(p.tile_variant, kFp8NativeKeysAsMTwoCtaVariant);
  EXPECT_EQ(p.block_n, 64);
  EXPECT_EQ(p.num_splits, 1);
  EXPECT_EQ(decode_plan(DType::kFloat8E4M3, 512, 32, 8, 128, 2048, 0, 4).tile_variant, kFp8NativeTwoCtaVariant);
  EXPECT_EQ(decode_plan(DType::kFloat8E4M3, 512, 32, 8, 128, 2048, 1).tile_variant, 0);  // the caller's 1 split
  EXPECT_EQ(decode_plan(DType::kFloat8E4M3, 4, 8, 1, 128, 4096, 0).tile_variant,
            fp8_keys_as_m_on() ? kFp8NativeKeysAsMVariant : 0);
  EXPECT_EQ(kFp8NativeKeysAsMTwoCtaTile.ctas_per_sm, 2);
  EXPECT_EQ(kFp8NativeKeysAsMTwoCtaTile.block_n, kFp8NativeTwoCtaTile.block_n);
  EXPECT_TRUE(Experiment::parse("fp8-kam2").fp8_keys_as_m_two_ctas);
  EXPECT_FALSE(Experiment::parse("no-fp8-kam2").fp8_keys_as_m_two_ctas);
}

// Under no-fp8-kam2 (ctest plan_under_no_fp8_kam2) e4m3 decodes of 1.5 waves keep the native two-CTA tile.
TEST(PlanUnderNoFp8Kam2, E4m3TwoCtaDecodesKeepTheNativeTwoCtaTile) {
  if (Experiment::get().fp8_keys_as_m_two_ctas) GTEST_SKIP() << "runs under FLASHSEEK_EXPERIMENT=no-fp8-kam2 (ctest)";
  EXPECT_EQ(decode_plan(DType::kFloat8E4M3, 128, 32, 8, 128, 8192, 0).tile_variant, kFp8NativeTwoCtaVariant);
  EXPECT_EQ(decode_plan(DType::kFloat8E4M3, 512, 32, 8, 128, 2048, 0).tile_variant, kFp8NativeTwoCtaVariant);
}

// Under kam2-split2 (ctest plan_under_kam2_split2; entry 108) one-wave bf16 decodes of 4k keys and more whose rows fit
// 8 run in two splits on the two-CTA keys-as-M tiles; shorter keys, 1.5 waves, a caller's split count keep theirs.
TEST(PlanUnderKam2Split2, OneWaveLongDecodesTakeTwoSplitsOnTwoCtas) {
  if (!Experiment::get().keys_as_m_two_ctas_split2) GTEST_SKIP() << "runs under FLASHSEEK_EXPERIMENT=kam2-split2";
  const LaunchPlan d128 = decode_plan(DType::kBFloat16, 128, 8, 1, 128, 8192, 0);  // 128 CTAs
  EXPECT_EQ(d128.tile_variant, kKeysAsMTwoCtaDecodeVariant);
  EXPECT_EQ(d128.num_splits, 2);
  EXPECT_EQ(d128.block_n, 64);
  EXPECT_GT(d128.workspace_bytes, 0u);
  const LaunchPlan d64 = decode_plan(DType::kBFloat16, 128, 8, 1, 64, 8192, 0);
  EXPECT_EQ(d64.tile_variant, kKeysAsMTwoCtaD64DecodeVariant);
  EXPECT_EQ(d64.num_splits, 2);
  EXPECT_EQ(decode_plan(DType::kBFloat16, 128, 8, 1, 128, 2048, 0).num_splits, 1);       // short keys
  EXPECT_EQ(decode_plan(DType::kBFloat16, 128, 8, 1, 128, 8192, 1).tile_variant, 0);     // the caller's 1 split
  EXPECT_EQ(decode_plan(DType::kBFloat16, 256, 8, 1, 128, 8192, 0).num_splits, 1);       // 1.5 waves: kam2 alone
  EXPECT_EQ(decode_plan(DType::kBFloat16, 128, 16, 1, 128, 8192, 0).tile_variant, 0);    // 16 rows
}

// By default (kam2-splits, entries 115 and 118) the split bf16 decodes that tile 5 / 6 would run take tile 7 / 8 in
// twice the splits, within the caller's bound; unsplit decodes and a caller's 1 split keep theirs.
TEST(Plan, SplitDecodesTakeTwoCtasInTwiceTheSplits) {
  if (!Experiment::get().keys_as_m_two_ctas_splits || !Experiment::get().keys_as_m || Experiment::get().decode_tile)
    GTEST_SKIP() << "FLASHSEEK_EXPERIMENT changes the decode tile rules";
  const LaunchPlan l8 = decode_plan(DType::kBFloat16, 1, 32, 8, 128, 131072, 0);  // tile 5 in 16 splits by default
  EXPECT_EQ(l8.tile_variant, kKeysAsMTwoCtaDecodeVariant);
  EXPECT_EQ(l8.num_splits, 32);
  EXPECT_EQ(l8.block_n, 64);
  EXPECT_GT(l8.workspace_bytes, 0u);
  const LaunchPlan d64 = decode_plan(DType::kBFloat16, 4, 8, 1, 64, 65536, 0);  // tile 6 in 27 splits by default
  EXPECT_EQ(d64.tile_variant, kKeysAsMTwoCtaD64DecodeVariant);
  EXPECT_EQ(d64.num_splits, 52);
  // A bound that keeps the count from doubling keeps tile 5 (L70t8 q1s128k: 114 splits by default, 32 bound)
  const LaunchPlan bounded = decode_plan(DType::kBFloat16, 1, 8, 1, 128, 131072, 32);
  EXPECT_EQ(bounded.tile_variant, kKeysAsMDecodeVariant);
  EXPECT_EQ(bounded.num_splits, 32);
  // and so do short splits: 1k keys (8 splits of one 128-key block), 32k keys at one KV head (86 splits of 3)
  EXPECT_EQ(decode_plan(DType::kBFloat16, 1, 32, 8, 128, 1024, 0).tile_variant, kKeysAsMDecodeVariant);
  EXPECT_EQ(decode_plan(DType::kBFloat16, 1, 8, 1, 128, 32768, 0).tile_variant, kKeysAsMDecodeVariant);
  EXPECT_EQ(decode_plan(DType::kBFloat16, 1, 32, 8, 128, 131072, 1).tile_variant, 0);  // the caller's 1 split
  EXPECT_EQ(decode_plan(DType::kBFloat16, 1, 32, 8, 128, 131072, 1).num_splits, 1);
  EXPECT_EQ(decode_plan(DType::kBFloat16, 128, 32, 8, 128, 8192, 0).num_splits, 1);  // unsplit: kam2's own rule
  EXPECT_EQ(decode_plan(DType::kBFloat16, 1, 128, 8, 128, 131072, 0).tile_variant, 0);  // 16 rows: no keys as M
  // a 4096-key window over 64k keys: the count would double, but each split would see one or two of the window's
  // 65 blocks
  SchedulerArgs windowed;
  windowed.batch_size = 4;
  windowed.max_seqlen_q = 1;
  windowed.max_seqlen_k = 65536;
  windowed.num_heads_q = 8;  // Llama-70B's heads at TP 8 (27 splits on tile 5, 54 on tile 7)
  windowed.num_heads_kv = 1;
  windowed.headdim = windowed.headdim_v = 128;
  windowed.cache_seqlens = tensor(DType::kInt32, {4});
  windowed.page_size = 16;
  windowed.causal = true;
  windowed.qkv_dtype = DType::kBFloat16;
  EXPECT_EQ(make_plan(windowed, DeviceInfo{}).tile_variant, kKeysAsMTwoCtaDecodeVariant);  // no window: 7
  windowed.window_left = 4096;
  const LaunchPlan window_plan = make_plan(windowed, DeviceInfo{});
  EXPECT_EQ(window_plan.tile_variant, kKeysAsMDecodeVariant);
  EXPECT_EQ(window_plan.block_n, 128);
  EXPECT_TRUE(Experiment::parse("kam2-splits").keys_as_m_two_ctas_splits);
  EXPECT_TRUE(Experiment::parse("").keys_as_m_two_ctas_splits);
  EXPECT_FALSE(Experiment::parse("no-kam2-splits").keys_as_m_two_ctas_splits);
}

// A token the parser does not know is kept by name (get() prints it on stderr), so that a misspelt token cannot pass
// for a neutral A/B; known tokens, key=value tokens and loop values are not.
TEST(Experiment, UnknownTokensAreKeptByName) {
  EXPECT_EQ(Experiment::parse("no-kam2-splits,no-kam2-split,tile=5").unknown_tokens, "no-kam2-split");
  EXPECT_EQ(Experiment::parse("bogus,,other").unknown_tokens, "bogus,other");
  EXPECT_EQ(Experiment::parse("3587,splits=4,keys-as-m-ctas=64,l2promo=256").unknown_tokens, "");
  EXPECT_EQ(Experiment::parse("").unknown_tokens, "");
  EXPECT_EQ(Experiment::parse(nullptr).unknown_tokens, "");
}

// Under no-kam2-splits (ctest plan_under_no_kam2_splits) the same long split decode runs on tile 5 in 16 splits
// (what kam2-splits doubles).
TEST(PlanUnderNoKam2Splits, LongSplitDecodeTakesTheOneCtaKeysAsMTile) {
  if (Experiment::get().keys_as_m_two_ctas_splits || !Experiment::get().keys_as_m || Experiment::get().decode_tile)
    GTEST_SKIP() << "runs under FLASHSEEK_EXPERIMENT=no-kam2-splits";
  const LaunchPlan l8 = decode_plan(DType::kBFloat16, 1, 32, 8, 128, 131072, 0);
  EXPECT_EQ(l8.tile_variant, kKeysAsMDecodeVariant);
  EXPECT_EQ(l8.num_splits, 16);
  EXPECT_EQ(l8.block_n, 128);
}

// Under splits=N (ctest plan_under_splits16: the split sweep's switch) the forced count is the count that runs: the
// kam2-splits rule does not double it onto tile 7 (it did, so scripts/split_sweep.py timed 2N and reported N);
// tile=7,splits=N names the two-CTA tile.
TEST(PlanUnderForcedSplits, ForcedCountIsTheCountThatRuns) {
  const int forced = Experiment::get().split_force;
  if (forced <= 0 || Experiment::get().decode_tile) GTEST_SKIP() << "runs under FLASHSEEK_EXPERIMENT=splits=16";
  const LaunchPlan l8 = decode_plan(DType::kBFloat16, 1, 32, 8, 128, 131072, 0);
  EXPECT_EQ(l8.num_splits, forced);
  EXPECT_EQ(l8.tile_variant, kKeysAsMDecodeVariant);
  EXPECT_EQ(l8.block_n, 128);
  const LaunchPlan l8_batch4 = decode_plan(DType::kBFloat16, 4, 32, 8, 128, 65536, 0);
  EXPECT_EQ(l8_batch4.num_splits, forced);
  EXPECT_EQ(l8_batch4.tile_variant, kKeysAsMDecodeVariant);
}

// By default (entry 111; no-kam4 turns it off, ctest plan_under_no_kam4) the d64 decodes that would take tile 8 take
// tile 9 (four CTAs per SM, block_n 64) instead; d128 keeps tile 7.
TEST(Plan, D64TwoCtaKeysAsMDecodesTakeFourCtasPerSm) {
  if (!Experiment::get().keys_as_m_four_ctas || !Experiment::get().keys_as_m_two_ctas)
    GTEST_SKIP() << "FLASHSEEK_EXPERIMENT has no-kam4 or no-kam2";
  const LaunchPlan d64 = decode_plan(DType::kBFloat16, 512, 8, 1, 64, 2048, 0);
  EXPECT_EQ(d64.tile_variant, kKeysAsMFourCtaD64DecodeVariant);
  EXPECT_EQ(d64.block_n, 64);
  EXPECT_EQ(d64.num_splits, 1);
  EXPECT_EQ(decode_plan(DType::kBFloat16, 512, 8, 1, 128, 2048, 0).tile_variant, kKeysAsMTwoCtaDecodeVariant);
  EXPECT_EQ(decode_plan(DType::kBFloat16, 512, 8, 1, 64, 2048, 1).tile_variant, 3);  // the caller's 1 split
  EXPECT_EQ(keys_as_m_variant(64, 64, 4), kKeysAsMFourCtaD64DecodeVariant);
  EXPECT_EQ(keys_as_m_variant(128, 128, 4), 0);
  EXPECT_EQ(decode_variant_tile(kKeysAsMFourCtaD64DecodeVariant).ctas_per_sm, 4);
  EXPECT_TRUE(Experiment::parse("kam4").keys_as_m_four_ctas);
  EXPECT_FALSE(Experiment::parse("no-kam4").keys_as_m_four_ctas);
}

// Under no-kam4 (ctest plan_under_no_kam4) the d64 two-CTA keys-as-M decodes stay on tile 8 (block_n 128).
TEST(PlanUnderNoKam4, D64TwoCtaKeysAsMDecodesKeepTwoCtasPerSm) {
  if (Experiment::get().keys_as_m_four_ctas) GTEST_SKIP() << "runs under FLASHSEEK_EXPERIMENT=no-kam4 (ctest)";
  const LaunchPlan d64 = decode_plan(DType::kBFloat16, 512, 8, 1, 64, 2048, 0);
  EXPECT_EQ(d64.tile_variant, kKeysAsMTwoCtaD64DecodeVariant);
  EXPECT_EQ(d64.block_n, 128);
}

// Under no-kam2 (ctest plan_under_no_kam2) the two-CTA tiles keep the 64-row consumer.
TEST(PlanUnderNoKam2, TwoCtaDecodesKeepThe64RowConsumer) {
  if (Experiment::get().keys_as_m_two_ctas) GTEST_SKIP() << "runs under FLASHSEEK_EXPERIMENT=no-kam2 (ctest)";
  EXPECT_EQ(decode_plan(DType::kBFloat16, 512, 8, 1, 64, 2048, 0).tile_variant, 3);
  EXPECT_EQ(decode_plan(DType::kBFloat16, 512, 8, 1, 128, 2048, 0).tile_variant, 1);
}

// Under no-fp8-keys-as-m (ctest plan_under_no_fp8_keys_as_m) e4m3 decodes keep the native 64-row tile; bf16's
// keys-as-M rule is its own.
TEST(PlanUnderNoFp8KeysAsM, E4m3DecodesKeepTheNative64RowTile) {
  if (Experiment::get().fp8_keys_as_m) GTEST_SKIP() << "runs under FLASHSEEK_EXPERIMENT=no-fp8-keys-as-m (ctest)";
  EXPECT_EQ(decode_plan(DType::kFloat8E4M3, 1, 8, 1, 128, 32768, 32).tile_variant, 0);
  EXPECT_EQ(decode_plan(DType::kFloat8E4M3, 4, 32, 8, 128, 4096, 0, 2).tile_variant, 0);
  EXPECT_EQ(decode_plan(DType::kBFloat16, 1, 8, 1, 128, 32768, 32).tile_variant, kKeysAsMDecodeVariant);
}

// Under keys-as-m-ctas=64 (ctest plan_under_keys_as_m_ctas, entry 95's lead): the keys-as-M tiles only on decode
// grids of fewer than 64 CTAs, splits counted; the stream-bound grids keep the table's tiles.
TEST(PlanUnderKeysAsMCtas, StreamBoundGridsKeepTheTableTiles) {
  if (Experiment::get().keys_as_m_max_ctas != 64) GTEST_SKIP() << "runs under FLASHSEEK_EXPERIMENT=keys-as-m-ctas=64";
  EXPECT_EQ(decode_plan(DType::kBFloat16, 128, 8, 1, 128, 8192, 0).tile_variant, 0);   // 128 CTAs
  EXPECT_EQ(decode_plan(DType::kBFloat16, 64, 8, 1, 128, 4096, 0).tile_variant, 0);    // 64
  for (int batch : {8, 32}) {  // the rule holds where the split model's count keeps the grid under 64
    const LaunchPlan p = decode_plan(DType::kBFloat16, batch, 8, 1, 128, 2048, 0);
    EXPECT_EQ(p.tile_variant, batch * p.num_splits < 64 ? kKeysAsMDecodeVariant : 0) << batch << " x " << p.num_splits;
  }
  EXPECT_EQ(decode_plan(DType::kBFloat16, 1, 8, 1, 128, 131072, 32).tile_variant, kKeysAsMDecodeVariant);  // 32
  EXPECT_EQ(decode_plan(DType::kBFloat16, 4, 8, 1, 128, 131072, 16).tile_variant, 0);  // 4 x 16 splits
  EXPECT_EQ(decode_plan(DType::kBFloat16, 128, 8, 1, 64, 8192, 0).tile_variant, 0);    // d64 too
  EXPECT_EQ(decode_plan(DType::kBFloat16, 1, 8, 1, 64, 32768, 32).tile_variant, kKeysAsMD64DecodeVariant);
  if (fp8_keys_as_m_on()) {
    EXPECT_EQ(decode_plan(DType::kFloat8E4M3, 128, 8, 1, 128, 8192, 0).tile_variant, 0);
    EXPECT_EQ(decode_plan(DType::kFloat8E4M3, 1, 8, 1, 128, 32768, 32).tile_variant, kFp8NativeKeysAsMVariant);
  }
}

// The two-CTA tiles a decode whose packed rows fit 8 gets: the keys-as-M consumer on them by default (entry 105),
// the 64-row consumer under no-kam2; at d64 on four CTAs per SM by default (tile 9, entry 111), tile 8 under no-kam4.
int two_cta_d128_fit8() { return Experiment::get().keys_as_m_two_ctas ? kKeysAsMTwoCtaDecodeVariant : 1; }
int two_cta_d64_fit8() {
  if (!Experiment::get().keys_as_m_two_ctas) return 3;
  return Experiment::get().keys_as_m_four_ctas ? kKeysAsMFourCtaD64DecodeVariant : kKeysAsMTwoCtaD64DecodeVariant;
}
int two_cta_d64_fit8_block_n() { return decode_variant_tile(two_cta_d64_fit8()).block_n; }
// The e4m3 d128 two-CTA tile a decode whose packed rows fit 8 gets: its keys-as-M form by default (entry 107).
int fp8_two_cta_fit8() {
  return Experiment::get().fp8_keys_as_m_two_ctas ? kFp8NativeKeysAsMTwoCtaVariant : kFp8NativeTwoCtaVariant;
}

// The two-CTA decode rule (plan.cpp): bf16 d128 decode grids of 1.5 waves and more without splits take decode tile
// variant 1 (block_n 64, two CTAs per SM); shorter grids, splits, fp16, other head dims and no-cta2 keep the table's.
TEST(Plan, DecodeGridsOfOneAndAHalfWavesTakeTwoCtasPerSm) {
  const auto plan = gqa4_decode_plan;
  const LaunchPlan big = plan(DType::kBFloat16, 128, 8, 128, 2048, 0);  // 1024 CTAs
  EXPECT_EQ(big.num_splits, 1);
  EXPECT_EQ(big.tile_variant, two_cta_d128_fit8());
  EXPECT_EQ(big.block_n, decode_variant_tile(1).block_n);
  EXPECT_EQ(plan(DType::kBFloat16, 25, 8, 128, 2048, 0).tile_variant, two_cta_d128_fit8());  // 200 >= 1.5 x 132
  EXPECT_EQ(decode_plan(DType::kBFloat16, 128, 64, 4, 128, 2048, 0).tile_variant, 1);  // group 16: 64-row consumer
  // 192 < 198: one CTA per SM, the keys-as-M tile where the table's would run (KeysAsMTileWhereTheTableTileWouldRun)
  EXPECT_NE(plan(DType::kBFloat16, 24, 8, 128, 2048, 0).tile_variant, 1);
  // num_splits = 1 from the caller (vLLM's batch-invariant mode) keeps one tile whatever the batch
  EXPECT_EQ(plan(DType::kBFloat16, 128, 8, 128, 2048, 1).tile_variant, 0);
  EXPECT_EQ(plan(DType::kBFloat16, 128, 1, 128, 8192, 1).tile_variant, 0);  // one wave
  EXPECT_EQ(plan(DType::kFloat16, 128, 8, 128, 2048, 0).tile_variant, 0);
  // d64 has its own two-CTA tile (3), on by default (D64DecodeGridsTakeTwoCtasPerSm)
  EXPECT_EQ(plan(DType::kBFloat16, 128, 8, 64, 2048, 0).tile_variant,
            Experiment::get().d64_two_ctas ? two_cta_d64_fit8() : 0);
  const LaunchPlan split = plan(DType::kBFloat16, 1, 8, 128, 131072, 0);
  EXPECT_GT(split.num_splits, 1);
  EXPECT_NE(split.tile_variant, 1);
}

// The keys-as-M rule (plan.cpp, entry 90): bf16 d128 decodes whose packed rows fit 8 columns take decode tile 5 where
// the table's one-CTA tile would run, with the table tile's split count; not grids the two-CTA tile takes, not a
// caller's num_splits = 1, not 16 rows, fp16, e4m3 or d64.
TEST(Plan, KeysAsMTileWhereTheTableTileWouldRun) {
  if (!Experiment::get().keys_as_m || Experiment::get().decode_tile != 0 ||
      Experiment::get().keys_as_m_two_ctas_splits)
    GTEST_SKIP() << "no-keys-as-m or tile=N set, or kam2-splits on (the default: ctest plan_under_no_kam2_splits "
                    "runs this test)";
  const LaunchPlan g8_split = decode_plan(DType::kBFloat16, 1, 8, 1, 128, 131072, 32);
  EXPECT_EQ(g8_split.tile_variant, kKeysAsMDecodeVariant);
  EXPECT_EQ(g8_split.num_splits, 32);
  EXPECT_EQ(g8_split.block_n, 128);
  EXPECT_EQ(decode_plan(DType::kBFloat16, 1, 8, 1, 128, 131072, 0).tile_variant, kKeysAsMDecodeVariant);
  EXPECT_EQ(gqa4_decode_plan(DType::kBFloat16, 8, 8, 128, 1024, 0).tile_variant, kKeysAsMDecodeVariant);  // 64 CTAs
  EXPECT_EQ(decode_plan(DType::kBFloat16, 8, 28, 4, 128, 1024, 0).tile_variant, kKeysAsMDecodeVariant);  // group 7
  EXPECT_EQ(decode_plan(DType::kBFloat16, 4, 32, 8, 128, 4096, 0, 2).tile_variant, kKeysAsMDecodeVariant);
  EXPECT_EQ(gqa4_decode_plan(DType::kBFloat16, 128, 8, 128, 2048, 0).tile_variant, two_cta_d128_fit8());  // 1024 CTAs
  EXPECT_EQ(decode_plan(DType::kBFloat16, 1, 8, 1, 128, 8192, 1).tile_variant, 0);        // batch-invariant mode
  EXPECT_EQ(decode_plan(DType::kBFloat16, 4, 8, 1, 128, 4096, 0, 2).tile_variant, 0);     // 16 rows
  EXPECT_EQ(decode_plan(DType::kFloat16, 4, 8, 1, 128, 4096, 0).tile_variant, 0);
  EXPECT_EQ(decode_plan(DType::kFloat8E4M3, 4, 8, 1, 128, 4096, 0).tile_variant,
            fp8_keys_as_m_on() ? kFp8NativeKeysAsMVariant : 0);  // e4m3's own tile (variant 208, entry 95)
  // d64: decode tile 6 (entry 91), on the same rule; not d96 / d192 / d256 (no keys-as-M tile)
  EXPECT_EQ(decode_plan(DType::kBFloat16, 4, 8, 1, 64, 4096, 0).tile_variant, kKeysAsMD64DecodeVariant);
  EXPECT_EQ(decode_plan(DType::kBFloat16, 4, 8, 1, 64, 4096, 1).tile_variant, 0);
  EXPECT_EQ(decode_plan(DType::kBFloat16, 512, 8, 1, 64, 2048, 0).tile_variant, two_cta_d64_fit8());
  EXPECT_EQ(decode_plan(DType::kBFloat16, 4, 8, 1, 256, 4096, 0).tile_variant, 0);
  // d72-96 decodes run padded to 128 (takes_d96_tiles keeps decodes there): tile 5
  EXPECT_EQ(decode_plan(DType::kBFloat16, 4, 8, 1, 96, 4096, 0).tile_variant, kKeysAsMDecodeVariant);
  // the split count is the table tile's (same key blocks, one CTA per SM), which fp16 keeps
  for (int seqlen_k : {2048, 32768, 131072}) {
    for (int batch : {1, 4, 16}) {
      for (int d : {128, 64}) {
        const LaunchPlan p = decode_plan(DType::kBFloat16, batch, 8, 1, d, seqlen_k, 0);
        ASSERT_EQ(p.tile_variant, d == 128 ? kKeysAsMDecodeVariant : kKeysAsMD64DecodeVariant);
        EXPECT_EQ(p.num_splits, decode_plan(DType::kFloat16, batch, 8, 1, d, seqlen_k, 0).num_splits)
            << batch << " x " << seqlen_k << " d" << d;
      }
    }
  }
}

// The native e4m3 two-CTA decode tile (plan.cpp, tile_table.h kFp8NativeTwoCtaTile): e4m3 q/k/v d128 decode grids
// of 1.5 waves and more without splits, the split count left to us; everything else keeps the one-CTA tiles.
TEST(Plan, Fp8DecodeGridsOfOneAndAHalfWavesTakeTheNativeTwoCtaTile) {
  if (!Experiment::get().fp8_two_ctas || !Experiment::get().fp8_native || Experiment::get().fp8_native_one_p ||
      Experiment::get().fp8_head_pack != 0) {
    GTEST_SKIP() << "FLASHSEEK_EXPERIMENT turns the native two-CTA tile off";
  }
  const auto plan = gqa4_decode_plan;
  const LaunchPlan big = plan(DType::kFloat8E4M3, 128, 8, 128, 8192, 0);  // 1024 CTAs
  EXPECT_EQ(big.num_splits, 1);
  EXPECT_EQ(big.tile_variant, fp8_two_cta_fit8());
  EXPECT_EQ(big.block_n, kFp8NativeTwoCtaTile.block_n);
  EXPECT_EQ(big.block_m, 64);
  EXPECT_EQ(plan(DType::kFloat8E4M3, 25, 8, 128, 2048, 0).tile_variant, fp8_two_cta_fit8());  // 200 CTAs
  // 192 < 198: one CTA per SM, the e4m3 keys-as-M tile where the native 64-row one would run (entry 95)
  const int one_cta = fp8_keys_as_m_on() ? kFp8NativeKeysAsMVariant : 0;
  EXPECT_EQ(plan(DType::kFloat8E4M3, 24, 8, 128, 2048, 0).tile_variant, one_cta);
  EXPECT_EQ(plan(DType::kFloat8E4M3, 128, 8, 128, 2048, 1).tile_variant, 0);  // the caller fixed one split
  EXPECT_EQ(plan(DType::kFloat8E4M3, 128, 8, 64, 2048, 0).tile_variant, 0);   // d128 only
  EXPECT_EQ(plan(DType::kFloat8E4M3, 128, 8, 256, 2048, 0).tile_variant, 0);
  const LaunchPlan split = plan(DType::kFloat8E4M3, 1, 8, 128, 131072, 0);
  EXPECT_GT(split.num_splits, 1);
  EXPECT_EQ(split.tile_variant, one_cta);
}

// Head-packed e4m3 decodes (plan.cpp, tile_table.h kFp8NativeHeadPackTiles): as many KV heads per CTA (8, 4, 2) as
// divide the KV heads and fit their query rows in 64; block_n counts keys (the tile's 128 rows over the heads), and
// the splits count the packed CTAs. Not where the caller fixed the split count, not bf16, not d256.
TEST(TileTable, KvHeadPackFitsTheQueryRowsIn64) {
  EXPECT_EQ(kv_head_pack_of(8, 4, 1), 8);
  EXPECT_EQ(kv_head_pack_of(8, 8, 1), 8);
  EXPECT_EQ(kv_head_pack_of(8, 16, 1), 4);
  EXPECT_EQ(kv_head_pack_of(4, 7, 1), 4);  // 28 rows
  EXPECT_EQ(kv_head_pack_of(6, 4, 1), 2);  // 6 heads: 2 divides, 4 does not
  EXPECT_EQ(kv_head_pack_of(8, 4, 2), 8);  // 64 rows
  EXPECT_EQ(kv_head_pack_of(8, 4, 4), 4);
  EXPECT_EQ(kv_head_pack_of(1, 8, 1), 1);
  EXPECT_EQ(kv_head_pack_of(5, 4, 1), 1);
  EXPECT_EQ(kv_head_pack_of(8, 64, 1), 1);
  for (const TileShape& t : kFp8NativeHeadPackTiles) {
    EXPECT_EQ(t.block_m, 64);
    EXPECT_EQ(t.block_n, 128);  // 128 / 8 = 16 keys a block: one page-16 box per operand
    EXPECT_FALSE(t.native_copies);
    EXPECT_EQ(t.head_dim, t.head_dim_v);
  }
}

// The default d96 rule (plan.cpp takes_d96_tiles): 16-bit d 72-96 on the d96 tiles for the 128-row prefills: long
// ones on the one-tile kernel (bf16 on 192 rows, entry 67), short bf16 ones on the d96 persistent kernel (entry 68);
// short fp16 ones, the decodes and e4m3 keep 128; no-d96 / d96 turn it off / on.
TEST(Plan, SixteenBitPrefillsOfHeadDim72To96TakeTheD96Tiles) {
  const Experiment& e = Experiment::get();
  if (e.d96_tiles || !e.d96_auto || !e.d96_m192 || !e.d96_persist) {
    GTEST_SKIP() << "the default plan; this process runs under an experiment";
  }
  const LaunchPlan long_prefill = decode_plan(DType::kBFloat16, 1, 32, 32, 96, 8192, 0, 8192);
  EXPECT_EQ(long_prefill.head_dim_padded, 96);
  EXPECT_EQ(long_prefill.block_m, 192);
  EXPECT_EQ(long_prefill.block_n, 96);
  EXPECT_EQ(long_prefill.num_m_blocks, 43);  // 8192 rows in 192-row tiles
  EXPECT_FALSE(long_prefill.persistent);
  // The caller's split count and fp16 keep 128 rows.
  EXPECT_EQ(decode_plan(DType::kBFloat16, 1, 32, 32, 96, 8192, 1, 8192).block_m, 128);
  EXPECT_EQ(decode_plan(DType::kFloat16, 1, 32, 32, 96, 8192, 0, 8192).block_m, 128);
  EXPECT_EQ(decode_plan(DType::kFloat16, 2, 16, 16, 80, 4096, 0, 4096).head_dim_padded, 96);
  EXPECT_EQ(decode_plan(DType::kBFloat16, 1, 16, 16, 72, 16384, 0, 16384).head_dim_v_padded, 96);
  const LaunchPlan short_prefill = decode_plan(DType::kBFloat16, 1, 32, 32, 96, 1024, 0, 1024);  // 4 key blocks
  EXPECT_EQ(short_prefill.head_dim_padded, 96);
  EXPECT_EQ(short_prefill.block_m, 128);
  EXPECT_TRUE(short_prefill.persistent);
  const LaunchPlan short_fp16 = decode_plan(DType::kFloat16, 1, 32, 32, 96, 1024, 0, 1024);
  EXPECT_EQ(short_fp16.head_dim_padded, 128);
  EXPECT_TRUE(short_fp16.persistent);
  EXPECT_EQ(decode_plan(DType::kBFloat16, 16, 32, 8, 80, 4096, 0).head_dim_padded, 128);  // decode
  EXPECT_EQ(decode_plan(DType::kFloat8E4M3, 1, 32, 32, 96, 8192, 0, 8192).head_dim_padded, 128);
  EXPECT_EQ(decode_plan(DType::kBFloat16, 1, 32, 32, 64, 8192, 0, 8192).head_dim_padded, 64);
  EXPECT_EQ(decode_plan(DType::kBFloat16, 1, 32, 32, 112, 8192, 0, 8192).head_dim_padded, 128);
  EXPECT_TRUE(Experiment::parse(nullptr).d96_auto);
  EXPECT_FALSE(Experiment::parse("no-d96").d96_auto);
  EXPECT_FALSE(Experiment::parse("no-d96").d96_tiles);
}

// The default since entry 42: bf16 d64 tiles the plan gives the persistent kernel take the 192-row tile and stay
// persistent; fp16, long tiles and other head dims are unchanged.
TEST(Plan, ShortBf16D64TilesTakeThe192RowPersistentKernel) {
  if (!Experiment::get().persist_m192 || !Experiment::get().d64_m192) {
    GTEST_SKIP() << "the default plan; this process runs under no-persist192 or no-m192";
  }
  const LaunchPlan oss_q1k = decode_plan(DType::kBFloat16, 1, 64, 8, 64, 1024, 0, 1024);
  EXPECT_EQ(oss_q1k.block_m, 192);
  EXPECT_TRUE(oss_q1k.persistent);
  EXPECT_EQ(oss_q1k.num_m_blocks, (1024 * 8 + 191) / 192);
  const LaunchPlan fp16 = decode_plan(DType::kFloat16, 1, 64, 8, 64, 1024, 0, 1024);
  EXPECT_EQ(fp16.block_m, 128);
  EXPECT_TRUE(fp16.persistent);
  const LaunchPlan long_tile = decode_plan(DType::kBFloat16, 1, 64, 8, 64, 32768, 0, 32768);
  EXPECT_EQ(long_tile.block_m, 192);
  EXPECT_FALSE(long_tile.persistent);
  // Entry 47: only where K/V stream by TMA. A page of 1 or 4 tokens (copies) keeps the 128-row tile; a grid under
  // 1.5 waves on TMA keeps the 192-row tile, whose one-tile kernel run() then takes (OSSt8 q1k: 43 tiles).
  if (Experiment::get().persist_m192_rule == 1) {
    EXPECT_EQ(decode_plan(DType::kBFloat16, 1, 64, 8, 64, 1024, 0, 1024, 1).block_m, 128);
    EXPECT_EQ(decode_plan(DType::kBFloat16, 1, 64, 8, 64, 1024, 0, 1024, 4).block_m, 128);
    EXPECT_EQ(decode_plan(DType::kBFloat16, 1, 64, 8, 64, 1024, 0, 1024, 8).block_m, 192);
    EXPECT_EQ(decode_plan(DType::kBFloat16, 1, 8, 1, 64, 1024, 0, 1024, 16).block_m, 192);
    EXPECT_EQ(decode_plan(DType::kBFloat16, 1, 64, 8, 64, 1024, 0, 1024, 0).block_m, 192);  // varlen K/V
  }
  const LaunchPlan d128 = decode_plan(DType::kBFloat16, 1, 32, 8, 128, 1024, 0, 1024);
  EXPECT_EQ(d128.block_m, 128);
  EXPECT_TRUE(d128.persistent);
  EXPECT_EQ(decode_plan(DType::kBFloat16, 16, 64, 8, 64, 4096, 0).block_m, 64);  // decode
}

// Under FLASHSEEK_EXPERIMENT=persist192-strict (ctest plan_under_persist192_strict, entry 44): the 192-row persistent
// tile only where run() will take the persistent kernel; pages too small for a TMA box and grids of at most two
// waves of 192-row tiles (entry 95; 1.5 before it) keep 128 rows (and the one-tile kernel, run() decides), and get_scheduler_metadata agrees.
TEST(PlanUnderPersist192Strict, The192RowPersistentTileOnlyWhereThePersistentKernelRuns) {
  if (Experiment::get().persist_m192_rule != 2 || !Experiment::get().persist_m192) {
    GTEST_SKIP() << "runs under FLASHSEEK_EXPERIMENT=persist192-strict (ctest)";
  }
  auto plan = [](int batch, int hq, int hkv, int seqlen, int page_size) {
    return decode_plan(DType::kBFloat16, batch, hq, hkv, 64, seqlen, 0, seqlen, page_size);
  };
  EXPECT_EQ(plan(1, 64, 8, 1024, 16).block_m, 192);  // 43 x 8 = 344 tiles >= 198
  EXPECT_TRUE(plan(1, 64, 8, 1024, 16).persistent);
  EXPECT_EQ(plan(1, 64, 8, 1024, 1).block_m, 128);   // page 1: no TMA box, no persistent kernel
  EXPECT_EQ(plan(1, 64, 8, 1024, 4).block_m, 128);   // page 4: boxes under 8 rows
  EXPECT_EQ(plan(1, 8, 1, 1024, 16).block_m, 128);   // OSSt8: 43 tiles
  EXPECT_EQ(plan(5, 8, 1, 1024, 16).block_m, 128);   // 215 tiles: under run()'s two waves (entry 95)
  EXPECT_EQ(plan(7, 8, 1, 1024, 16).block_m, 192);   // 301 tiles
  EXPECT_EQ(plan(1, 64, 8, 1024, 0).block_m, 192);   // varlen K/V: TMA
  // The call's plan agrees with the metadata's (page size from k's shape with a block table).
  AttentionArgs a;
  a.q = tensor(DType::kBFloat16, {1024, 64, 64});
  a.k = tensor(DType::kBFloat16, {1024, 1, 8, 64});
  a.v = tensor(DType::kBFloat16, {1024, 1, 8, 64});
  a.out = tensor(DType::kBFloat16, {1024, 64, 64});
  a.cu_seqlens_q = tensor(DType::kInt32, {2});
  a.seqused_k = tensor(DType::kInt32, {1});
  a.block_table = tensor(DType::kInt32, {1, 1024});
  a.max_seqlen_q = a.max_seqlen_k = 1024;
  a.causal = true;
  validate(a);
  EXPECT_EQ(make_plan(a, DeviceInfo{}).block_m, plan(1, 64, 8, 1024, 1).block_m);
}

// Under FLASHSEEK_EXPERIMENT=no-persist192 (ctest plan_under_no_persist192): the 128-row persistent kernel.
TEST(PlanUnderNoPersist192, ShortBf16D64TilesKeepThe128RowPersistentKernel) {
  if (Experiment::get().persist_m192) GTEST_SKIP() << "runs under FLASHSEEK_EXPERIMENT=no-persist192 (ctest)";
  const LaunchPlan oss_q1k = decode_plan(DType::kBFloat16, 1, 64, 8, 64, 1024, 0, 1024);
  EXPECT_EQ(oss_q1k.block_m, 128);
  EXPECT_TRUE(oss_q1k.persistent);
  EXPECT_TRUE(Experiment::parse(nullptr).persist_m192);
  EXPECT_TRUE(Experiment::parse("persist192").persist_m192);
  EXPECT_FALSE(Experiment::parse("no-persist192").persist_m192);
  EXPECT_EQ(Experiment::parse(nullptr).persist_m192_rule, 1);
  EXPECT_EQ(Experiment::parse("persist192-any").persist_m192_rule, 0);
  EXPECT_EQ(Experiment::parse("persist192-tma").persist_m192_rule, 1);
  EXPECT_EQ(Experiment::parse("persist192-strict").persist_m192_rule, 2);
  EXPECT_TRUE(Experiment::parse(nullptr).split_real_tiles);
  EXPECT_FALSE(Experiment::parse("split-rows-max").split_real_tiles);
}

// Under FLASHSEEK_EXPERIMENT=persist192-any (ctest plan_under_persist192_any): entry 42's rule, the 192-row tile
// for every short bf16 d64 tile, pages too small for a TMA box included.
TEST(PlanUnderPersist192Any, The192RowTileWhateverThePageSize) {
  if (Experiment::get().persist_m192_rule != 0 || !Experiment::get().persist_m192) {
    GTEST_SKIP() << "runs under FLASHSEEK_EXPERIMENT=persist192-any (ctest)";
  }
  EXPECT_EQ(decode_plan(DType::kBFloat16, 1, 64, 8, 64, 1024, 0, 1024, 1).block_m, 192);
  EXPECT_EQ(decode_plan(DType::kBFloat16, 1, 8, 1, 64, 1024, 0, 1024, 16).block_m, 192);
}

// Under FLASHSEEK_EXPERIMENT=d96 (ctest plan_under_d96): bf16 d80 plans on the d96 tile, e4m3 caches keep 128.
TEST(PlanUnderD96, SixteenBitHeadDimsUpTo96TakeTheD96Tiles) {
  if (!Experiment::get().d96_tiles) GTEST_SKIP() << "runs under FLASHSEEK_EXPERIMENT=d96 (ctest)";
  EXPECT_EQ(decode_plan(DType::kBFloat16, 16, 32, 8, 80, 4096, 0).head_dim_padded, 96);
  EXPECT_EQ(decode_plan(DType::kFloat16, 16, 32, 32, 96, 4096, 0, 512).head_dim_padded, 96);
  EXPECT_EQ(decode_plan(DType::kFloat16, 16, 32, 32, 96, 4096, 0, 512).block_m, 128);
  EXPECT_EQ(decode_plan(DType::kFloat8E4M3, 16, 32, 8, 80, 4096, 0).head_dim_padded, 128);
  EXPECT_EQ(decode_plan(DType::kBFloat16, 16, 32, 8, 128, 4096, 0).head_dim_padded, 128);
}

// Under FLASHSEEK_EXPERIMENT=no-d96-m192,no-d96-persist (ctest plan_under_no_d96_m192_persist): the d96 rule
// before entries 67 and 68: long prefills on the 128-row d96 tile, short ones padded to 128.
TEST(PlanUnderNoD96M192Persist, D96PrefillsAsBeforeEntries67And68) {
  const Experiment& e = Experiment::get();
  if (e.d96_m192 || e.d96_persist) GTEST_SKIP() << "runs under FLASHSEEK_EXPERIMENT=no-d96-m192,no-d96-persist";
  const LaunchPlan q8k = decode_plan(DType::kBFloat16, 1, 32, 32, 96, 8192, 0, 8192);
  EXPECT_EQ(q8k.head_dim_padded, 96);
  EXPECT_EQ(q8k.block_m, 128);
  EXPECT_FALSE(q8k.persistent);
  const LaunchPlan q1k = decode_plan(DType::kBFloat16, 1, 32, 32, 96, 1024, 0, 1024);
  EXPECT_EQ(q1k.head_dim_padded, 128);
  EXPECT_TRUE(q1k.persistent);
}

// Under FLASHSEEK_EXPERIMENT=fp8-headpack (ctest plan_under_fp8_headpack; off by default, entry 37).
TEST(PlanUnderFp8HeadPack, Fp8DecodesPackKvHeads) {
  const Experiment& e = Experiment::get();
  if (e.fp8_head_pack != 1 || !e.fp8_native || e.fp8_native_one_p) {
    GTEST_SKIP() << "runs under FLASHSEEK_EXPERIMENT=fp8-headpack (ctest)";
  }
  const LaunchPlan l8 = gqa4_decode_plan(DType::kFloat8E4M3, 128, 8, 128, 8192, 0);
  EXPECT_EQ(l8.tile_variant, kFp8NativeHeadPackVariant);
  EXPECT_EQ(l8.kv_head_pack, 8);
  EXPECT_EQ(l8.block_n, 16);
  EXPECT_EQ(l8.block_m, 64);
  EXPECT_EQ(l8.num_splits, 1);  // 128 CTAs
  const LaunchPlan oss = decode_plan(DType::kFloat8E4M3, 64, 64, 8, 64, 4096, 0);  // d64, 8 query heads per KV head
  EXPECT_EQ(oss.tile_variant, kFp8NativeHeadPackVariant);
  EXPECT_EQ(oss.kv_head_pack, 8);
  const LaunchPlan one = gqa4_decode_plan(DType::kFloat8E4M3, 1, 8, 128, 131072, 0);
  EXPECT_EQ(one.tile_variant, kFp8NativeHeadPackVariant);
  EXPECT_GT(one.num_splits, 1);  // one CTA: the splits fill the GPU
  EXPECT_EQ(gqa4_decode_plan(DType::kFloat8E4M3, 128, 8, 128, 8192, 1).kv_head_pack, 1);  // caller's split count
  EXPECT_EQ(gqa4_decode_plan(DType::kBFloat16, 128, 8, 128, 8192, 0).kv_head_pack, 1);
  EXPECT_EQ(gqa4_decode_plan(DType::kFloat8E4M3, 128, 8, 256, 8192, 0).kv_head_pack, 1);
  EXPECT_EQ(decode_plan(DType::kFloat8E4M3, 128, 8, 1, 128, 8192, 0).kv_head_pack, 1);  // one KV head
  // Speculative decoding: 4 tokens x 4 query heads x 4 heads = 64 rows.
  const LaunchPlan spec = decode_plan(DType::kFloat8E4M3, 16, 32, 8, 128, 4096, 0, 4);
  EXPECT_EQ(spec.kv_head_pack, 4);
  EXPECT_EQ(spec.block_n, 32);
}

// Under fp8-headpack2 (ctest plan_under_fp8_headpack2): the two-CTA form, up to 4 heads, d128 only.
TEST(PlanUnderFp8HeadPack2, Fp8DecodesPackKvHeadsOnTwoCtas) {
  if (Experiment::get().fp8_head_pack != 2) GTEST_SKIP() << "runs under FLASHSEEK_EXPERIMENT=fp8-headpack2 (ctest)";
  const LaunchPlan l8 = gqa4_decode_plan(DType::kFloat8E4M3, 128, 8, 128, 8192, 0);
  EXPECT_EQ(l8.tile_variant, kFp8NativeHeadPackTwoCtaVariant);
  EXPECT_EQ(l8.kv_head_pack, 4);
  EXPECT_EQ(l8.block_n, kFp8NativeHeadPackTwoCtaTile.block_n / 4);
  EXPECT_EQ(decode_plan(DType::kFloat8E4M3, 64, 64, 8, 64, 4096, 0).tile_variant, kFp8NativeHeadPackVariant);
}

TEST(Plan, NoHeadPackingByDefault) {
  if (Experiment::get().fp8_head_pack != 0) GTEST_SKIP() << "FLASHSEEK_EXPERIMENT turns head packing on";
  EXPECT_EQ(gqa4_decode_plan(DType::kFloat8E4M3, 128, 8, 128, 8192, 0).kv_head_pack, 1);
}

TEST(Experiment, ParsesFp8HeadPackToken) {
  EXPECT_EQ(Experiment::parse(nullptr).fp8_head_pack, 0);
  EXPECT_EQ(Experiment::parse("fp8-headpack").fp8_head_pack, 1);
  EXPECT_EQ(Experiment::parse("fp8-headpack2").fp8_head_pack, 2);
  EXPECT_EQ(Experiment::parse("fp8-headpack,no-fp8-headpack").fp8_head_pack, 0);
}

TEST(Experiment, ParsesFp8ProducerAheadToken) {
  EXPECT_TRUE(Experiment::parse(nullptr).fp8_producer_ahead);
  EXPECT_TRUE(Experiment::parse("fp8-producer-ahead").fp8_producer_ahead);
  EXPECT_FALSE(Experiment::parse("no-fp8-producer-ahead").fp8_producer_ahead);
}

// Its shared memory fits two CTAs per SM and its register split half the register file.
TEST(TileTable, Fp8NativeTwoCtaTileFitsTwoCtasPerSm) {
  const TileShape t = kFp8NativeTwoCtaTile;
  EXPECT_EQ(t.ctas_per_sm, 2);
  EXPECT_TRUE(t.fp8_native && t.fp8_kv);
  EXPECT_EQ(t.head_dim, 128);
  EXPECT_EQ(t.block_m, 64);
  EXPECT_EQ(t.block_n % 64, 0);  // V^T rows of block_n e4m3 keys: the 64-byte swizzle at 64
}

// e4m3 q/k/v at d192 / 128 plans in the native tiles' block_n (128), not the converting tile's (96): the splits and
// the TMA boxes count the blocks the kernel runs.
TEST(Plan, Fp8D192PlansInTheNativeBlockN) {
  if (!Experiment::get().fp8_native) GTEST_SKIP() << "FLASHSEEK_EXPERIMENT has fp8-convert";
  for (const int max_q : {1, 512}) {
    SchedulerArgs s;
    s.batch_size = 4;
    s.max_seqlen_q = max_q;
    s.max_seqlen_k = 4096;
    s.num_heads_q = s.num_heads_kv = 16;
    s.headdim = 192;
    s.headdim_v = 128;
    s.cache_seqlens = tensor(DType::kInt32, {4});
    s.page_size = 16;
    s.causal = true;
    s.qkv_dtype = DType::kFloat8E4M3;
    const LaunchPlan fp8 = make_plan(s, DeviceInfo{});
    EXPECT_EQ(fp8.block_n, fp8_native_tile(192, 128, fp8.block_m).block_n);
    EXPECT_EQ(fp8.block_n, 128);
  }
}

// Long e4m3 d64 prefill tiles: 192 rows by default (entry 36), 128 under FLASHSEEK_EXPERIMENT=no-fp8-m192 (ctest
// plan_under_no_fp8_m192); bf16 keeps its own rule, short tiles and decodes keep theirs.
LaunchPlan fp8_d64_prefill_plan(DType dtype, int seqlen) {
  SchedulerArgs s;
  s.batch_size = 1;
  s.max_seqlen_q = seqlen;
  s.max_seqlen_k = seqlen;
  s.num_heads_q = 64;
  s.num_heads_kv = 8;
  s.headdim = s.headdim_v = 64;
  s.cache_seqlens = tensor(DType::kInt32, {1});
  s.page_size = 16;
  s.causal = true;
  s.qkv_dtype = dtype;
  return make_plan(s, DeviceInfo{});
}

TEST(Plan, LongE4m3D64TilesTake192Rows) {
  if (!Experiment::get().fp8_m192) GTEST_SKIP() << "the default plan; this process runs under no-fp8-m192";
  const LaunchPlan long_fp8 = fp8_d64_prefill_plan(DType::kFloat8E4M3, 8192);
  EXPECT_EQ(long_fp8.block_m, 192);
  EXPECT_EQ(long_fp8.block_n, 128);
  EXPECT_EQ(long_fp8.num_m_blocks, (8192 * 8 + 191) / 192);
  // Short tiles too (entry 53): the native tiles have no persistent kernel to keep 128 rows for.
  EXPECT_EQ(fp8_d64_prefill_plan(DType::kFloat8E4M3, 512).block_m,
            Experiment::get().fp8_m192_short ? 192 : 128);
  EXPECT_EQ(decode_plan(DType::kFloat8E4M3, 512, 8, 1, 64, 2048, 0).block_m, 64);
}

TEST(PlanUnderNoFp8M192, LongE4m3D64TilesKeep128Rows) {
  if (Experiment::get().fp8_m192) GTEST_SKIP() << "runs under FLASHSEEK_EXPERIMENT=no-fp8-m192 (ctest)";
  const LaunchPlan long_fp8 = fp8_d64_prefill_plan(DType::kFloat8E4M3, 8192);
  EXPECT_EQ(long_fp8.block_m, 128);
  EXPECT_EQ(long_fp8.num_m_blocks, (8192 * 8 + 127) / 128);
}

TEST(Experiment, ParsesFp8M192Token) {
  EXPECT_TRUE(Experiment::parse(nullptr).fp8_m192);
  EXPECT_TRUE(Experiment::parse("fp8-m192").fp8_m192);
  EXPECT_FALSE(Experiment::parse("no-fp8-m192").fp8_m192);
  EXPECT_TRUE(Experiment::parse(nullptr).fp8_m192_short);
  EXPECT_FALSE(Experiment::parse("no-fp8-m192-short").fp8_m192_short);
}

TEST(Experiment, ParsesFp8CopiesToken) {
  EXPECT_FALSE(Experiment::parse(nullptr).fp8_native_copies);
  EXPECT_TRUE(Experiment::parse("fp8-cpasync").fp8_native_copies);
  EXPECT_TRUE(Experiment::parse("fp8-cpasync").fp8_native);
}

TEST(Experiment, ParsesFp8TwoCtaToken) {
  EXPECT_TRUE(Experiment::parse(nullptr).fp8_two_ctas);
  EXPECT_FALSE(Experiment::parse("no-fp8-cta2").fp8_two_ctas);
  EXPECT_TRUE(Experiment::parse("no-cta2").fp8_two_ctas);
}

// gpt-oss at tensor parallel 8: 8 q heads on one KV head, d 64.
LaunchPlan gpt_oss_decode_plan(DType dtype, int batch, int seqlen_k, int num_splits) {
  return decode_plan(dtype, batch, 8, 1, 64, seqlen_k, num_splits);
}

// d64 decode grids of 1.5 waves and more take decode tile 3 (two CTAs per SM, block_n 128 as the table's d64 tile,
// so also with the caller's num_splits = 1).
TEST(Plan, D64DecodeGridsTakeTwoCtasPerSm) {
  if (!Experiment::get().d64_two_ctas) GTEST_SKIP() << "FLASHSEEK_EXPERIMENT has no-d64-cta2";
  const LaunchPlan big = gpt_oss_decode_plan(DType::kBFloat16, 512, 2048, 0);
  EXPECT_EQ(big.num_splits, 1);
  EXPECT_EQ(big.tile_variant, two_cta_d64_fit8());
  EXPECT_EQ(big.block_n, two_cta_d64_fit8_block_n());
  // the caller's num_splits = 1: tile 3 (the table's bits), not the keys-as-M consumer
  EXPECT_EQ(gpt_oss_decode_plan(DType::kBFloat16, 512, 2048, 1).tile_variant, 3);
  EXPECT_EQ(gpt_oss_decode_plan(DType::kBFloat16, 198, 2048, 0).tile_variant, two_cta_d64_fit8());  // 1.5 x 132
  // one CTA per SM below 1.5 waves: the table's tile, or the keys-as-M one (KeysAsMTileWhereTheTableTileWouldRun)
  EXPECT_NE(gpt_oss_decode_plan(DType::kBFloat16, 197, 2048, 0).tile_variant, two_cta_d64_fit8());
  EXPECT_EQ(gpt_oss_decode_plan(DType::kFloat16, 512, 2048, 0).tile_variant, 0);  // built for bf16 only
  const LaunchPlan split = gpt_oss_decode_plan(DType::kBFloat16, 1, 131072, 0);
  EXPECT_GT(split.num_splits, 1);
  EXPECT_NE(split.tile_variant, two_cta_d64_fit8());
}

// Under FLASHSEEK_EXPERIMENT=no-d64-cta2 (ctest plan_under_no_d64_cta2) the table's tile stays.
TEST(PlanUnderExperiment, D64DecodeKeepsOneCtaUnderNoD64Cta2) {
  if (Experiment::get().d64_two_ctas) GTEST_SKIP() << "runs under FLASHSEEK_EXPERIMENT=no-d64-cta2 (ctest)";
  EXPECT_NE(gpt_oss_decode_plan(DType::kBFloat16, 512, 2048, 0).tile_variant, 3);  // one CTA per SM
}

TEST(Experiment, ParsesD64TwoCtaTokens) {
  EXPECT_TRUE(Experiment::parse(nullptr).d64_two_ctas);
  EXPECT_TRUE(Experiment::parse("d64-cta2").d64_two_ctas);
  EXPECT_FALSE(Experiment::parse("no-d64-cta2").d64_two_ctas);
  EXPECT_TRUE(Experiment::parse("no-cta2").d64_two_ctas);
}

TEST(TileTable, D64TwoCtaDecodeTileKeepsTheD64BlockN) {
  const TileShape t = decode_variant_tile(3);
  EXPECT_EQ(t.head_dim, 64);
  EXPECT_EQ(t.ctas_per_sm, 2);
  EXPECT_EQ(t.block_n, find_tile_shape(64, 64, 64).block_n);
  EXPECT_EQ(t.block_n, find_tile_shape(64, 64, 128).block_n);
  EXPECT_EQ(t.block_n, find_tile_shape(64, 64, 192).block_n);
}

TEST(Plan, Fp8CacheTakesTheFp8TilesInTheCallAndInSchedulerMetadata) {
  DeviceInfo h200;
  for (DType q_dtype : {DType::kFloat8E4M3, DType::kBFloat16}) {
    for (int d : {40, 128, 256}) {
      AttentionArgs a;
      a.q = tensor(q_dtype, {4, 32, d});
      a.k = tensor(DType::kFloat8E4M3, {4096, 16, 8, d});
      a.v = tensor(DType::kFloat8E4M3, {4096, 16, 8, d});
      a.out = tensor(DType::kBFloat16, {4, 32, d});
      a.cu_seqlens_q = tensor(DType::kInt32, {5});
      a.seqused_k = tensor(DType::kInt32, {4});
      a.block_table = tensor(DType::kInt32, {4, 4096});
      a.max_seqlen_q = 1;
      a.max_seqlen_k = 16384;
      validate(a);
      SchedulerArgs s;
      s.batch_size = 4;
      s.max_seqlen_q = 1;
      s.max_seqlen_k = 16384;
      s.num_heads_q = 32;
      s.num_heads_kv = 8;
      s.headdim = s.headdim_v = d;
      s.qkv_dtype = DType::kFloat8E4M3;
      s.cache_seqlens = tensor(DType::kInt32, {4});
      s.page_size = 16;
      const LaunchPlan call = make_plan(a, h200);
      const LaunchPlan meta = make_plan(s, h200);
      const PaddedHeadDims p = pad_head_dims(d, d);
      EXPECT_EQ(call.block_m, 64);
      // Keys per block: the tile's rows, over the KV heads a head-packed e4m3 decode stacks in them.
      EXPECT_EQ(call.block_n * call.kv_head_pack, find_tile_shape(p.head_dim, p.head_dim_v, 64, true).block_n) << d;
      // qkv_dtype e4m3 stands for an e4m3 q (vLLM quantizes q for an fp8 cache); a bf16 q against the cache is
      // not head-packed, so its plan may differ from the metadata's.
      if (q_dtype == DType::kFloat8E4M3) {
        EXPECT_EQ(call.block_n, meta.block_n) << d;
        EXPECT_EQ(call.num_splits, meta.num_splits) << d;
      } else {
        EXPECT_EQ(call.kv_head_pack, 1) << d;
      }
    }
  }
}

// The persistent-kernel rule (plan.cpp prefers_persistent): short tiles and mixed batches take it, long uniform
// tiles keep the one-tile kernel (docs/perf-log.md entry 18's measured wins and losses).
TEST(Plan, PersistentKernelForShortTilesAndMixedBatches) {
  DeviceInfo h200;
  // A varlen prefill of `batch` sequences, total_q query tokens, the longest max_q / max_k; L8 heads, d128.
  auto plan = [&](int batch, int64_t total_q, int max_q, int max_k, bool causal, int window_left = -1,
                  int window_right = -1, int hq = 32, int hkv = 8) {
    AttentionArgs a;
    a.q = tensor(DType::kBFloat16, {total_q, hq, 128});
    a.k = tensor(DType::kBFloat16, {total_q, hkv, 128});
    a.v = tensor(DType::kBFloat16, {total_q, hkv, 128});
    a.out = tensor(DType::kBFloat16, {total_q, hq, 128});
    a.cu_seqlens_q = tensor(DType::kInt32, {batch + 1});
    a.cu_seqlens_k = tensor(DType::kInt32, {batch + 1});
    a.max_seqlen_q = max_q;
    a.max_seqlen_k = max_k;
    a.causal = causal;
    a.window_left = window_left;
    a.window_right = window_right;
    validate(a);
    return make_plan(a, h200).persistent;
  };
  EXPECT_TRUE(plan(1, 1024, 1024, 1024, true));          // q1k causal: 4 key blocks per tile on average
  EXPECT_TRUE(plan(8, 16384, 2048, 2048, true));         // 8q2k causal: 8
  EXPECT_TRUE(plan(16, 8192, 512, 512, true));           // 16q512
  EXPECT_TRUE(plan(1, 8192, 8192, 8192, true, 128));     // window 128
  EXPECT_TRUE(plan(1, 8192, 8192, 8192, true, 1024));    // window 1024: 9 blocks
  EXPECT_TRUE(plan(16, 11664, 729, 729, false));         // 729-token bidirectional
  EXPECT_FALSE(plan(1, 8192, 8192, 8192, true));         // q8k causal: 32 blocks
  EXPECT_FALSE(plan(1, 32768, 32768, 32768, true));      // q32k
  EXPECT_FALSE(plan(8, 16384, 2048, 2048, false, -1, -1, 32, 32));  // 2k non-causal MHA: 16 blocks
  EXPECT_FALSE(plan(1, 8192, 8192, 8192, true, 4096));   // window 4096: 33 blocks
  EXPECT_TRUE(plan(513, 8704, 8192, 8192, true));        // q8k beside 512 decodes: mixed
  EXPECT_TRUE(plan(4, 5434, 4093, 4093, false));         // q257, q1k, q63, q4093: mixed
}

// The 192-row d64 tile (plan.cpp): long 16-bit d64 tiles take it; short ones (the persistent kernel's), decode,
// fp8 caches, other head dims and no-m192 keep theirs. Scheduler metadata plans the same.
TEST(Plan, LongD64TilesTakeThreeConsumerWarpgroups) {
  DeviceInfo h200;
  auto plan = [&](int64_t total_q, int max_q, int max_k, int d, DType kv = DType::kBFloat16, int window_left = -1) {
    AttentionArgs a;
    a.q = tensor(kv == DType::kFloat8E4M3 ? DType::kBFloat16 : kv, {total_q, 64, d});
    a.k = tensor(kv, {total_q, 8, d});
    a.v = tensor(kv, {total_q, 8, d});
    a.out = tensor(kv == DType::kFloat8E4M3 ? DType::kBFloat16 : kv, {total_q, 64, d});
    a.cu_seqlens_q = tensor(DType::kInt32, {2});
    a.cu_seqlens_k = tensor(DType::kInt32, {2});
    a.max_seqlen_q = max_q;
    a.max_seqlen_k = max_k;
    a.causal = true;
    a.window_left = window_left;
    validate(a);
    return make_plan(a, h200);
  };
  const LaunchPlan oss = plan(8192, 8192, 8192, 64);  // gpt-oss q8k: 32 key blocks per tile
  EXPECT_EQ(oss.block_m, 192);
  EXPECT_EQ(oss.block_n, 128);
  EXPECT_FALSE(oss.persistent);
  EXPECT_EQ(oss.num_m_blocks, (8192 * 8 + 191) / 192);
  EXPECT_EQ(plan(8192, 8192, 8192, 64, DType::kFloat16).block_m, 192);
  // Window 128 and q1k: persistent, on the 192-row tile by default (entry 42), the 128-row one under no-persist192
  const int short_block_m = Experiment::get().persist_m192 ? 192 : 128;
  EXPECT_EQ(plan(8192, 8192, 8192, 64, DType::kBFloat16, 128).block_m, short_block_m);
  EXPECT_TRUE(plan(8192, 8192, 8192, 64, DType::kBFloat16, 128).persistent);
  EXPECT_EQ(plan(1024, 1024, 1024, 64).block_m, short_block_m);
  EXPECT_EQ(plan(1024, 1024, 1024, 64, DType::kFloat16).block_m, 128);  // fp16: no persistent 192-row kernel
  EXPECT_EQ(plan(8192, 8192, 8192, 128).block_m, 128);
  EXPECT_EQ(plan(8192, 8192, 8192, 64, DType::kFloat8E4M3).block_m, 128);
  EXPECT_TRUE(Experiment::parse(nullptr).d64_m192);
  EXPECT_FALSE(Experiment::parse("no-m192").d64_m192);
}

// The default since entry 103 (and ctest plan_under_d64_window_tile under FLASHSEEK_EXPERIMENT=d64-window-tile):
// bf16 d64 windows whose 192-row tiles see at most 176 keys with the key origin's rounding take the one-block tile,
// on the persistent kernel, only where the caller leaves the split count to us; by the window, the group, the page
// size.
TEST(PlanUnderD64WindowTile, WindowsThatFitOneBlockTakeTheWindowTile) {
  const Experiment& e = Experiment::get();
  if (!e.d64_window_tile || !e.window_origin || !e.persist_m192) {
    GTEST_SKIP() << "off under this FLASHSEEK_EXPERIMENT";
  }
  DeviceInfo h200;
  auto plan = [&](int q_heads, int window_left, int page_size, DType dtype = DType::kBFloat16, int num_splits = 0,
                  int window_right = -1, bool causal = true) {
    AttentionArgs a;
    const int64_t total_q = 8192;
    a.q = tensor(dtype, {total_q, q_heads, 64});
    a.out = tensor(dtype, {total_q, q_heads, 64});
    if (page_size > 0) {
      a.k = tensor(dtype, {8192 / page_size + 1, page_size, 8, 64});
      a.v = tensor(dtype, {8192 / page_size + 1, page_size, 8, 64});
      a.block_table = tensor(DType::kInt32, {1, 8192 / page_size + 1});
      a.seqused_k = tensor(DType::kInt32, {1});
    } else {
      a.k = tensor(dtype, {total_q, 8, 64});
      a.v = tensor(dtype, {total_q, 8, 64});
      a.cu_seqlens_k = tensor(DType::kInt32, {2});
    }
    a.cu_seqlens_q = tensor(DType::kInt32, {2});
    a.max_seqlen_q = 8192;
    a.max_seqlen_k = 8192;
    a.causal = causal;
    a.window_left = window_left;
    a.window_right = window_right;
    a.num_splits = num_splits;
    validate(a);
    return make_plan(a, h200);
  };
  const LaunchPlan oss = plan(64, 127, 16);  // gpt-oss w128: 24 tokens + 127 + 15 <= 176
  EXPECT_EQ(oss.tile_variant, kD64WindowVariant);
  EXPECT_EQ(oss.block_m, 192);
  EXPECT_EQ(oss.block_n, 176);
  EXPECT_TRUE(oss.persistent);
  EXPECT_EQ(plan(64, 127, 0).tile_variant, kD64WindowVariant);    // varlen K/V: no rounding
  EXPECT_EQ(plan(64, 137, 16).tile_variant, kD64WindowVariant);   // 24 + 137 + 15 = 176
  EXPECT_EQ(plan(64, 138, 16).tile_variant, 0);                   // 177
  EXPECT_EQ(plan(64, 152, 0).tile_variant, kD64WindowVariant);    // varlen: 24 + 152 = 176
  EXPECT_EQ(plan(64, 1023, 16).tile_variant, 0);                  // w1024: many blocks anyway
  EXPECT_EQ(plan(32, 127, 16).tile_variant, 0);                   // group 4: 48 tokens + 127 + 15 = 190
  EXPECT_EQ(plan(64, 127, 16, DType::kFloat16).tile_variant, 0);  // fp16: no persistent 192-row kernel
  EXPECT_EQ(plan(64, 127, 16, DType::kBFloat16, 3).tile_variant, 0);  // the caller's split count
  EXPECT_EQ(plan(64, 63, 16, DType::kBFloat16, 0, 63, false).tile_variant, kD64WindowVariant);  // 24 + 126 + 15
  EXPECT_EQ(plan(64, 63, 16, DType::kBFloat16, 0, -1, false).tile_variant, 0);  // unbounded right side
  EXPECT_EQ(plan(64, -1, 16).tile_variant, 0);                    // no window
}

}  // namespace
}  // namespace flashseek

// The V widening's lane mapping (sm90/widen_map.h, entry 78): its units cover each (key, chunk) of a 128-key block
// once; every 8-thread phase of its 16-byte raw loads and of each of its two 16-byte fp16 stores touches 8 different
// 16-byte bank groups; a thread's next pass is the same chunk kThreads / kChunks keys on; and chunk 2c + 1 of an fp16
// row sits at chunk 2c's address XOR 16 (the kernel stores it there).
template <int kChunks, class RawTile, class VTile>
void check_widen_map() {
  using flashseek::sm90::widen_unit;
  constexpr int kKeys = 128, kThreads = 128, kRowsPerPass = kThreads / kChunks;
  std::vector<int> seen(kKeys * kChunks, 0);
  for (int pass = 0; pass < kKeys * kChunks / kThreads; ++pass) {
    for (int phase = 0; phase < kThreads / 8; ++phase) {
      std::set<uint32_t> reads, stores_lo, stores_hi;
      for (int lane = 0; lane < 8; ++lane) {
        const int tid = phase * 8 + lane;
        const auto unit = widen_unit<kChunks>(tid + pass * kThreads);
        const auto first = widen_unit<kChunks>(tid);
        EXPECT_EQ(unit.row, first.row + pass * kRowsPerPass) << "tid " << tid << " pass " << pass;
        EXPECT_EQ(unit.chunk, first.chunk) << "tid " << tid << " pass " << pass;
        ASSERT_TRUE(unit.row >= 0 && unit.row < kKeys && unit.chunk >= 0 && unit.chunk < kChunks);
        ++seen[unit.row * kChunks + unit.chunk];
        const uint32_t lo = VTile::chunk_offset(unit.row, 2 * unit.chunk);
        EXPECT_EQ(VTile::chunk_offset(unit.row, 2 * unit.chunk + 1), lo ^ 16u);
        reads.insert(RawTile::chunk_offset(unit.row, unit.chunk) % 128 / 16);
        stores_lo.insert(lo % 128 / 16);
        stores_hi.insert((lo ^ 16u) % 128 / 16);
      }
      EXPECT_EQ(reads.size(), 8u) << "pass " << pass << " phase " << phase;
      EXPECT_EQ(stores_lo.size(), 8u) << "pass " << pass << " phase " << phase;
      EXPECT_EQ(stores_hi.size(), 8u) << "pass " << pass << " phase " << phase;
    }
  }
  for (int i = 0; i < kKeys * kChunks; ++i) EXPECT_EQ(seen[i], 1) << "unit (" << i / kChunks << ", " << i % kChunks << ")";
}

TEST(WidenMap, D64CoversTheBlockWithoutBankConflicts) {
  check_widen_map<4, flashseek::sm90::SwizzledTile64<128, 32>, flashseek::sm90::SwizzledTile<128, 64>>();
}

TEST(WidenMap, D128CoversTheBlockWithoutBankConflicts) {
  check_widen_map<8, flashseek::sm90::SwizzledTile<128, 64>, flashseek::sm90::SwizzledTile<128, 128>>();
}

namespace flashseek {
namespace {

// The persistent kernel's grid rule (tile_loop.h persistent_grid_pays, entry 95): more than two waves by default;
// persist-half-waves=3 is the rule before it.
// Under cluster-combine (ctest plan_under_cluster_combine) the plan marks the keys-as-M split decodes of 2-8 splits
// and allocates them no workspace (their partials stay in the cluster); 32 splits keep the workspace.
TEST(PlanUnderClusterCombine, ShortSplitDecodesNeedNoWorkspace) {
  if (!Experiment::get().cluster_combine) GTEST_SKIP() << "runs under FLASHSEEK_EXPERIMENT=cluster-combine";
  const LaunchPlan short_split = decode_plan(DType::kBFloat16, 8, 8, 1, 128, 1024, 0);  // L70t8 8q1s1k: tile 5, 8
  EXPECT_EQ(short_split.num_splits, 8);
  EXPECT_EQ(short_split.cluster_splits, 8);
  EXPECT_EQ(short_split.workspace_bytes, 0u);
  const LaunchPlan long_split = decode_plan(DType::kBFloat16, 1, 32, 8, 128, 131072, 0);  // L8 q1s128k: 32 splits
  EXPECT_EQ(long_split.cluster_splits, 0);
  EXPECT_GT(long_split.workspace_bytes, 0u);
  EXPECT_EQ(decode_plan(DType::kFloat16, 8, 8, 1, 128, 1024, 0).cluster_splits, 0);  // the table's tile
}

TEST(Plan, NoClusterCombineByDefault) {
  if (Experiment::get().cluster_combine) GTEST_SKIP() << "FLASHSEEK_EXPERIMENT has cluster-combine";
  const LaunchPlan short_split = decode_plan(DType::kBFloat16, 8, 8, 1, 128, 1024, 0);
  EXPECT_EQ(short_split.cluster_splits, 0);
  EXPECT_GT(short_split.workspace_bytes, 0u);
}

// cluster-combine (entry 120): only the 16-bit keys-as-M decode tiles, in 2 to 8 splits (the portable cluster), and
// only under the token.
TEST(TileLoop, ClusterCombineTakesKeysAsMSplitDecodesOfAtMostEightSplits) {
  const Experiment on = Experiment::parse("cluster-combine");
  EXPECT_EQ(on.unknown_tokens, "");
  EXPECT_FALSE(Experiment::parse("").cluster_combine);
  for (int v : {kKeysAsMDecodeVariant, kKeysAsMD64DecodeVariant, kKeysAsMTwoCtaDecodeVariant,
                kKeysAsMTwoCtaD64DecodeVariant, kKeysAsMFourCtaD64DecodeVariant}) {
    EXPECT_EQ(cluster_combine_splits(on, v, false, false, 8), 8) << v;
    EXPECT_EQ(cluster_combine_splits(on, v, false, false, 2), 2) << v;
    EXPECT_EQ(cluster_combine_splits(on, v, false, false, 1), 0) << v;   // nothing to combine
    EXPECT_EQ(cluster_combine_splits(on, v, false, false, 9), 0) << v;   // past the portable cluster size
    EXPECT_EQ(cluster_combine_splits(on, v, true, false, 4), 0) << v;    // an e4m3 cache
    EXPECT_EQ(cluster_combine_splits(Experiment::parse(""), v, false, false, 4), 0) << v;
  }
  EXPECT_EQ(cluster_combine_splits(on, 0, false, false, 4), 0);  // the table's 64-row tile
  EXPECT_EQ(cluster_combine_splits(on, kTwoCtaD128DecodeVariant, false, false, 4), 0);
  EXPECT_EQ(cluster_combine_splits(on, kFp8NativeKeysAsMVariant, false, true, 4), 0);
}

TEST(TileLoop, ThePersistentKernelTakesGridsOfMoreThanTwoWaves) {
  Experiment e;
  EXPECT_EQ(e.persist_half_waves, 4);
  EXPECT_FALSE(persistent_grid_pays(e, 256, 132));  // L8 q1k: 32 m blocks x 8 KV heads
  EXPECT_FALSE(persistent_grid_pays(e, 224, 132));  // Q7 q1k
  EXPECT_FALSE(persistent_grid_pays(e, 264, 132));
  EXPECT_TRUE(persistent_grid_pays(e, 265, 132));
  EXPECT_TRUE(persistent_grid_pays(e, 512, 132));   // L70 q1k
  EXPECT_TRUE(persistent_grid_pays(e, 2048, 132));  // 16q512
  e = Experiment::parse("persist-half-waves=3");
  EXPECT_EQ(e.persist_half_waves, 3);
  EXPECT_TRUE(persistent_grid_pays(e, 256, 132));
  EXPECT_TRUE(persistent_grid_pays(e, 199, 132));
  EXPECT_FALSE(persistent_grid_pays(e, 198, 132));
}

// The plan's choice of the persistent kernel reaches only the tiles whose persistent kernel is a measured default;
// the 64-row decode tiles and d192 / 128 list the persistent value too but take it under their tokens only (a
// tile that lists a value runs it: entry 84, MLAp128 4q2k 1447 -> 1662 us while d192 / 128's reached it).
TEST(TileLoop, ThePlansPersistentKernelReachesMeasuredDefaultsOnly) {
  using sm90::kPersistentLoopFlags;
  using sm90::kTileFastDivLoopBit;
  const int persistent = kPersistentLoopFlags | kTileFastDivLoopBit;
  const Experiment none = Experiment::parse(nullptr);
  auto key = [](int d, int dv, int block_m, int variant = 0, bool bf16 = true, bool fp8_kv = false,
                bool fp8_native = false, long long grid_ctas = 0, long long resident_ctas = 0) {
    return TileLoopKey{d, dv, block_m, variant, bf16, fp8_kv, fp8_native, grid_ctas, resident_ctas};
  };
  // a decode tile on a grid of `ctas` CTAs, 264 resident (132 SMs, two CTAs each)
  auto decode = [&](int d, int variant, long long ctas, bool bf16 = true) {
    return key(d, d, 64, variant, bf16, false, false, ctas, 264);
  };
  // measured defaults keep the plan's value (and the q-tma / lean-tail bits on it)
  EXPECT_EQ(tile_loop_flags(none, key(128, 128, 128), persistent), persistent);
  EXPECT_EQ(tile_loop_flags(none, key(128, 128, 128), persistent | sm90::kLeanTailLoopBit),
            persistent | sm90::kLeanTailLoopBit);
  EXPECT_EQ(tile_loop_flags(none, key(64, 64, 128), persistent), persistent);
  EXPECT_EQ(tile_loop_flags(none, key(64, 64, 192), persistent), persistent);
  EXPECT_EQ(tile_loop_flags(none, key(96, 96, 128), persistent), persistent);
  EXPECT_EQ(tile_loop_flags(none, key(128, 128, 128), -1), -1);
  // ... the tiles without a measured persistent default do not (d192 / 128: its kernel was removed, entry 86)
  EXPECT_EQ(tile_loop_flags(none, key(192, 128, 128), persistent), -1);
  // the decode tiles by their own rule (entry 86): the two-CTA d128 tile on grids of 3 waves and more, bf16 only
  EXPECT_EQ(tile_loop_flags(none, decode(128, 1, 792), -1), persistent);
  EXPECT_EQ(tile_loop_flags(none, decode(128, 1, 9600), -1), persistent);
  EXPECT_EQ(tile_loop_flags(none, decode(128, 1, 791), -1), -1);  // Q7 128q1s1k's 512: 1.9 waves
  EXPECT_EQ(tile_loop_flags(none, decode(128, 1, 9600, false), -1), -1);
  EXPECT_EQ(tile_loop_flags(none, key(128, 128, 64, 1), -1), -1);  // no device count: no rule
  for (int variant : {0, 2, 3, 4}) {
    EXPECT_EQ(tile_loop_flags(none, decode(128, variant, 9600), persistent), -1) << variant;
    EXPECT_EQ(tile_loop_flags(none, decode(64, variant, 9600), persistent), -1) << variant;  // d64: +6.2% on one wave
  }
  EXPECT_EQ(tile_loop_flags(Experiment::parse("no-decode-persist"), decode(128, 1, 9600), -1), -1);
  EXPECT_EQ(tile_loop_flags(Experiment::parse("no-persist"), decode(128, 1, 9600), -1), -1);
  // ... every bf16 decode tile on every grid under decode-persist
  const Experiment decode_all = Experiment::parse("decode-persist");
  EXPECT_EQ(tile_loop_flags(decode_all, decode(128, 1, 100), -1), persistent);
  EXPECT_EQ(tile_loop_flags(decode_all, decode(64, 3, 100), persistent), persistent);
  EXPECT_EQ(tile_loop_flags(decode_all, decode(64, 0, 100), -1), persistent);
  EXPECT_EQ(tile_loop_flags(decode_all, decode(128, 0, 100, false), persistent), -1);
  EXPECT_EQ(tile_loop_flags(decode_all, key(192, 128, 128), persistent), -1);
  // the native e4m3 decode tiles keep their producer-latency loop; the converting tiles run()'s value
  EXPECT_EQ(tile_loop_flags(none, key(128, 128, 64, 0, true, true, true), sm90::kNativeProducerAheadLoopFlags),
            sm90::kNativeProducerAheadLoopFlags);
  EXPECT_EQ(tile_loop_flags(none, key(128, 128, 64, 0, true, true, false), persistent), persistent);
  // m192-turns adds its bit on the 192-row d64 tile, one-tile and persistent
  const Experiment turns = Experiment::parse("m192-turns");
  EXPECT_EQ(tile_loop_flags(turns, key(64, 64, 192), -1), sm90::kOneTileLoopFlags | sm90::kTurns3LoopBit);
  EXPECT_EQ(tile_loop_flags(turns, key(64, 64, 192), persistent), persistent | sm90::kTurns3LoopBit);
  EXPECT_EQ(tile_loop_flags(turns, key(64, 64, 128), persistent), persistent);
  // a value forced by FLASHSEEK_EXPERIMENT reaches every tile that lists it
  const Experiment forced = Experiment::parse("134659");
  ASSERT_EQ(forced.loop_flags, persistent);
  EXPECT_EQ(tile_loop_flags(forced, key(128, 128, 64), persistent), persistent);
  EXPECT_EQ(tile_loop_flags(forced, key(192, 128, 128), persistent), persistent);
}

// Every value tile_loop_flags can hand a bf16 tile is one that tile has a kernel for: the tile has variants and its
// list (fwd_experiments.h, which the launcher dispatches over) holds the value. Otherwise the host would record a
// kernel that does not run (the tile silently keeps its default) or fail the launch.
TEST(TileLoop, EveryValueTheHostPassesIsOneTheTileLists) {
  using sm90::kDefaultLoopFlags;
  const int persistent = sm90::kPersistentLoopFlags | sm90::kTileFastDivLoopBit;
  struct Tile {
    int d, dv, block_m, variant;
  };
  std::vector<Tile> tiles;
  for (const TileShape& t : kTileShapes) {
    if (!t.fp8_kv && !t.fp8_native) tiles.push_back({t.head_dim, t.head_dim_v, t.block_m, 0});
  }
  for (int v = 1; v <= kNumDecodeVariants; ++v) {
    const TileShape t = decode_variant_tile(v);
    tiles.push_back({t.head_dim, t.head_dim_v, t.block_m, v});
  }
  // run()'s value for a tile: the tile's default or the plan's persistent value (loop_flags_of), with the q-tma
  // and lean-tail bits the tile lists (loop_flags_with_bits), then tile_loop_flags
  const int lean = sm90::kLeanTailLoopBit, qtma = sm90::kQTmaLoopBit;
  int checked = 0;
  for (const char* tokens : {"", "decode-persist", "no-decode-persist", "m192-turns", "no-persist", "decode-persist,no-cta2",
                             "mask-range", "mask-range,no-persist", "mask-range,tma-no-fence", "no-mask-range-d64"}) {
    const Experiment e = Experiment::parse(tokens);
    for (const Tile& t : tiles) {
      for (int plan_value : {-1, persistent}) {
        for (int bits : {0, qtma, lean, qtma | lean}) {
          for (long long ctas : {100LL, 400LL, 9600LL}) {
          const TileLoopKey key{t.d, t.dv, t.block_m, t.variant, true, false, false, ctas, 264};
          const int with_bits = bits != 0 ? loop_flags_with_bits(key, plan_value, bits) : -1;
          const int value = tile_loop_flags(e, key, with_bits >= 0 ? with_bits : plan_value);
          if (value < 0 || value == kDefaultLoopFlags) continue;  // the tile's default kernel
          ++checked;
          const std::string where = std::string(tokens) + " d" + std::to_string(t.d) + "x" + std::to_string(t.dv) +
                                    " m" + std::to_string(t.block_m) + " v" + std::to_string(t.variant) +
                                    " value " + std::to_string(value);
          EXPECT_TRUE(sm90::tile_has_loop_variants(true, false, t.variant, t.d, t.dv, t.block_m)) << where;
          EXPECT_TRUE(sm90::tile_lists_value(t.d, t.block_m, value)) << where;
          }
        }
      }
    }
  }
  EXPECT_GT(checked, 100);
  // and the mapping itself: the decode list holds the persistent value only; d192 / 128 has no variants
  EXPECT_TRUE(sm90::tile_lists_value(128, 64, persistent));
  EXPECT_TRUE(sm90::tile_lists_value(64, 64, persistent));
  EXPECT_FALSE(sm90::tile_lists_value(128, 64, persistent | lean));
  // the d128 decode tiles' stage-skip values (entry 88), not d64's
  EXPECT_TRUE(sm90::tile_lists_value(128, 64, 1567));
  EXPECT_FALSE(sm90::tile_lists_value(64, 64, 1567));
  EXPECT_FALSE(sm90::tile_lists_value(128, 64, sm90::kDefaultLoopFlags | sm90::kLoopSkipSoftmax));
  EXPECT_FALSE(sm90::tile_has_loop_variants(true, false, 0, 192, 128, 128));
  EXPECT_FALSE(sm90::tile_has_loop_variants(false, false, 0, 128, 128, 128));  // fp16
  EXPECT_FALSE(sm90::tile_has_loop_variants(true, true, 0, 128, 128, 64));     // an e4m3 cache
  EXPECT_TRUE(sm90::tile_has_loop_variants(true, false, 3, 64, 64, 64));
}

// Which q-tma / lean-tail bits each tile takes (entries 69, 71), from the kernels' lists.
TEST(TileLoop, TheQTmaAndLeanTailBitsGoWhereTheKernelsListThem) {
  const int persistent = sm90::kPersistentLoopFlags | sm90::kTileFastDivLoopBit;
  const int one_tile = sm90::kOneTileLoopFlags;
  const int lean = sm90::kLeanTailLoopBit, qtma = sm90::kQTmaLoopBit;
  auto key = [](int d, int block_m, int variant = 0, bool bf16 = true, bool fp8_kv = false) {
    return TileLoopKey{d, d, block_m, variant, bf16, fp8_kv, false};
  };
  // bf16 d128 128 rows: both bits, one-tile and persistent
  EXPECT_EQ(loop_flags_with_bits(key(128, 128), -1, qtma | lean), one_tile | qtma | lean);
  EXPECT_EQ(loop_flags_with_bits(key(128, 128), -1, lean), one_tile | lean);
  EXPECT_EQ(loop_flags_with_bits(key(128, 128), persistent, qtma | lean), persistent | qtma | lean);
  // d64: the persistent kernels only; at 192 rows q-tma only
  EXPECT_EQ(loop_flags_with_bits(key(64, 128), -1, qtma | lean), -1);
  EXPECT_EQ(loop_flags_with_bits(key(64, 128), persistent, qtma | lean), persistent | qtma | lean);
  EXPECT_EQ(loop_flags_with_bits(key(64, 128), persistent, lean), persistent | lean);
  EXPECT_EQ(loop_flags_with_bits(key(64, 192), persistent, qtma | lean), persistent | qtma);
  EXPECT_EQ(loop_flags_with_bits(key(64, 192), persistent, lean), -1);
  // none elsewhere: d96, the decode tiles, fp16, an e4m3 cache, d192 / 128, d256, a forced value not listed
  EXPECT_EQ(loop_flags_with_bits(key(96, 128), persistent, qtma | lean), -1);
  EXPECT_EQ(loop_flags_with_bits(key(128, 64), -1, qtma | lean), -1);
  EXPECT_EQ(loop_flags_with_bits(key(128, 64, 1), persistent, lean), -1);
  EXPECT_EQ(loop_flags_with_bits(key(128, 128, 0, false), -1, lean), -1);
  EXPECT_EQ(loop_flags_with_bits(key(128, 128, 0, true, true), -1, lean), -1);
  EXPECT_EQ(loop_flags_with_bits(TileLoopKey{192, 128, 128, 0, true, false, false}, -1, lean), -1);
  EXPECT_EQ(loop_flags_with_bits(key(256, 128), -1, lean), -1);
  EXPECT_EQ(loop_flags_with_bits(key(128, 128), sm90::kPersistentLoopFlags, qtma), -1);  // 3587: no q-tma kernel
}

// combine-warp-rows=N (entries 98, 99; N 2048 the default): the warp-per-row combine only from N combined rows, for
// 2-32 splits, never at N 0.
TEST(CombineByWarps, ManyRowsOfFewSplitsOnly) {
  EXPECT_FALSE(combine_by_warps(4096, 4, 0));      // combine-warp-rows=0: off
  EXPECT_TRUE(combine_by_warps(4096, 4, 2048));    // a cascade prefix pass: 128 queries x 32 heads
  EXPECT_TRUE(combine_by_warps(2048, 32, 2048));   // the bounds are inclusive
  EXPECT_FALSE(combine_by_warps(2047, 4, 2048));   // too few rows
  EXPECT_FALSE(combine_by_warps(4096, 33, 2048));  // many splits: the row-per-CTA kernel spreads them over 256 threads
  EXPECT_FALSE(combine_by_warps(4096, 1, 2048));   // no split: no combine
  EXPECT_FALSE(combine_by_warps(32, 128, 2048));   // a one-KV-head decode of many splits keeps the row-per-CTA kernel
}

}  // namespace
}  // namespace flashseek
