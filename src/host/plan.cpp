// The launch decision of a call: tile, grid and splits, from host values only (graph-capture safe, and the same
// for get_scheduler_metadata and the call that passes its result).
#include <algorithm>
#include <numeric>
#include <cstdint>

#include "../sm90/key_origin.h"
#include "flashseek/flashseek.h"
#include "experiment.h"
#include "mla_decode_tile.h"
#include "split_heuristic.h"
#include "tile_loop.h"
#include "tile_table.h"

namespace flashseek {
namespace {

struct PlanInputs {
  int batch;
  int64_t total_q;
  int num_heads_q;
  int num_heads_kv;
  int head_dim;
  int head_dim_v;
  int64_t max_seqlen_q;
  int64_t max_seqlen_k;
  int num_splits;
  bool causal;
  int window_left;   // -1: none
  int window_right;  // -1: none
  bool mla_decode;  // q_v given (d 64, dv 512): the MLA decode kernel
  bool fp8_kv;  // K/V e4m3: the fp8 tiles (what get_scheduler_metadata's qkv_dtype e4m3 also picks)
  bool bf16;    // bf16 q, k and v (the only dtype with decode tile experiments)
  bool fp8_qkv;  // q, k and v e4m3: the native e4m3 tiles where run() can describe K/V by TMA
  int page_size;  // 0: K/V not paged
  bool real_total_q;  // total_q counts the call's query tokens (a varlen call; get_scheduler_metadata has no total)
};

constexpr TileShape kMlaDecodeTile = {MlaDecodeTile::kHeadDim, MlaDecodeTile::kHeadDimV, MlaDecodeTile::kBlockM,
                                      MlaDecodeTile::kBlockN, MlaDecodeTile::kStages};

// Split partials beyond this many bytes cost more memory traffic than the parallelism they buy.
constexpr size_t kMaxWorkspaceBytes = size_t(1) << 30;

// The persistent kernel (sm90/fwd_persistent.h) overlaps a tile's epilogue and the next tile's first loads, which
// pays where tiles are short; on long tiles it ran 3-8% slower than the one-tile kernel (q8k-q32k causal, a 2k
// non-causal MHA batch; docs/perf-log.md entry 18). Short: the longest sequence's query tiles attend to at most
// 12 key blocks on average (q1k and 2k causal, windows up to ~1.5k, 729-token non-causal: all measured wins).
// Mixed: the sequences are far from equal (a chunked prefill beside decodes, varlen packs), where the persistent
// kernel's longest-first dealing won 2-14%.
int64_t average_key_blocks(const PlanInputs& in, int block_m, int block_n, int qheads_per_kvhead) {
  const int64_t max_q = std::max<int64_t>(in.max_seqlen_q, 1);
  const int64_t max_k = std::max<int64_t>(in.max_seqlen_k, 1);
  const int64_t right = in.causal ? 0 : in.window_right;  // -1: unbounded
  // Average keys a query of the longest sequence sees (bottom-right alignment: query i sees keys up to
  // i + max_k - max_q + right).
  int64_t keys = max_k;
  if (right >= 0) keys = std::min(max_k, std::max<int64_t>(1, max_k - max_q / 2 + right));
  if (in.window_left >= 0) {
    const int64_t rows = std::max(1, block_m / std::max(1, qheads_per_kvhead));
    keys = std::min(keys, in.window_left + (right >= 0 ? right : max_k) + rows);
  }
  return (keys + block_n - 1) / block_n;
}

bool is_mixed_batch(const PlanInputs& in) {
  return in.batch > 1 && in.total_q * 2 < static_cast<int64_t>(in.batch) * std::max<int64_t>(in.max_seqlen_q, 1);
}

bool prefers_persistent(const PlanInputs& in, int block_m, int block_n, int qheads_per_kvhead) {
  return average_key_blocks(in, block_m, block_n, qheads_per_kvhead) <= 12 || is_mixed_batch(in);
}

// Whether run() would give a 192-row d64 plan the persistent kernel (sm90/launch.h persistent_takes): K/V that TMA
// streams (a paged cache's page size makes whole boxes; a stride that no tensor map takes is not known here), and
// the waves of tiles run() asks for (tile_loop.h persistent_grid_pays: more than two since entry 95), counted as the
// one-tile grid does (m blocks of the longest sequence x KV heads x sequences;
// a flat grid has fewer, where run() may then give the call the one-tile kernel after all). Only inputs
// get_scheduler_metadata has too, so that its plan and the call's agree.
bool persistent_192_would_run(const PlanInputs& in, int qheads_per_kvhead, int num_sms) {
  if (kv_tma_box_rows(in.page_size > 0, in.page_size, 128) == 0) return false;
  const long long m_blocks = (in.max_seqlen_q * qheads_per_kvhead + 191) / 192;
  const long long tiles = m_blocks * in.num_heads_kv * in.batch;
  return 2 * tiles >= 3LL * num_sms && persistent_grid_pays(Experiment::get(), tiles, num_sms);
}

// Entry 103: whether every 192-row tile of a windowed call sees at most the one-block tile's 176 keys once its keys
// start at its first visible key (sm90/key_origin.h), rounded down to a paged cache's TMA box rows: a tile's tokens
// (at most, over the first rows a tile can have modulo the group: multiples of gcd(192, group), as tiles start at
// multiples of 192 rows in their sequence) plus the window's two sides plus that rounding.
bool window_fits_one_block(const PlanInputs& in, const Experiment& experiment, int qheads_per_kvhead) {
  const int right = in.causal ? 0 : in.window_right;
  const TileShape& tile = kD64WindowTile;
  const int rows = kv_tma_box_rows(in.page_size > 0, in.page_size, tile.block_n);
  if (rows == 0) return false;  // no TMA: the copying producer, one page read per row at block_n 176
  // The origin's own conditions (the call's split count among them), as run() applies them; the plan does not see
  // context parallelism, under which run() keeps key 0 and the tile computes its blocks from there (slower, right).
  if (window_origin_rows_of(experiment.window_origin, in.window_left, 1, in.num_splits, in.page_size > 0, rows) == 0 ||
      right < 0 || qheads_per_kvhead <= 0) {
    return false;
  }
  int tokens = 0;
  for (int first = 0; first < qheads_per_kvhead; first += std::gcd(tile.block_m, qheads_per_kvhead)) {
    tokens = std::max(tokens, (first + tile.block_m - 1) / qheads_per_kvhead - first / qheads_per_kvhead + 1);
  }
  const int rounding = in.page_size > 0 ? rows - 1 : 0;
  return static_cast<int64_t>(tokens) + in.window_left + right + rounding <= tile.block_n;
}

// 16-bit head dims 72-96 on the 96-column tiles instead of padded to 128 (entry 38): a quarter less tensor work
// per key. Measured against the padded tiles in one run (entry 38): long prefill tiles -2..-6% (P3 q8k, q32k,
// 8q2k), but where the plan takes the persistent kernel (which the d96 tiles do not have: short and mixed
// prefills) +4..+7% (P3 q1k, VIT72 16q729, VIT80 16q1k). So by default only the one-tile 128-row prefill; decodes
// (64-row tiles, memory-bound, with the two-CTA and split rules of the d128 tiles) keep 128. The padded columns
// add exact zeros, so a token has the same bits on either tile. `d96` forces them everywhere, `no-d96` never.
// Since entry 68 the bf16 d96 tile has a persistent kernel too, and the short bf16 prefills take it.
bool takes_d96_tiles(const PlanInputs& in, const Experiment& experiment, int qheads_per_kvhead) {
  if (in.fp8_kv || in.mla_decode || in.head_dim != in.head_dim_v || in.head_dim <= 64 || in.head_dim > 96) {
    return false;
  }
  if (experiment.d96_tiles) return true;
  if (!experiment.d96_auto) return false;
  const TileShape padded128 = find_tile_shape(128, 128, choose_block_m(in.max_seqlen_q * qheads_per_kvhead));
  if (padded128.block_m != 128) return false;
  // The short bf16 tiles too, on the d96 tile's persistent kernel (entry 68: VIT72 16q729 -9%, P3 8q2k -11%,
  // VIT80 -9..-10%; no-d96-persist for the A/B). fp16 has no persistent kernel.
  return !prefers_persistent(in, padded128.block_m, padded128.block_n, qheads_per_kvhead) ||
         (experiment.d96_persist && in.bf16);
}

// K + V bytes of one key block of one KV head, as the split model counts them (16-bit elements).
int kv_block_bytes_of(const TileShape& tile) { return tile.block_n * (tile.head_dim + tile.head_dim_v) * 2; }

LaunchPlan plan_for(const PlanInputs& in, const DeviceInfo& device) {
  LaunchPlan plan;
  const Experiment& experiment = Experiment::get();
  const int qheads_per_kvhead = in.num_heads_kv > 0 ? in.num_heads_q / in.num_heads_kv : 1;
  const PaddedHeadDims padded =
      pad_head_dims(in.head_dim, in.head_dim_v, takes_d96_tiles(in, experiment, qheads_per_kvhead));
  const int block_m = choose_block_m(in.max_seqlen_q * qheads_per_kvhead);
  TileShape tile = in.mla_decode ? kMlaDecodeTile
                                 : find_tile_shape(padded.head_dim, padded.head_dim_v, block_m, in.fp8_kv);
  // A decode tile experiment (tile=N) replaces the bf16 block_m 64 tile of its head dims (d128: 1, 2, 4, 5; d64: 3),
  // before the split count is chosen, so the splits see its CTAs per SM. A keys-as-M tile (5) only where every
  // sequence's packed rows fit its query rows.
  const TileShape variant = decode_variant_tile(experiment.decode_tile);
  const bool rows_fit = variant.query_rows == 0 || in.max_seqlen_q * qheads_per_kvhead <= variant.query_rows;
  if (!in.mla_decode && in.bf16 && !in.fp8_kv && variant.block_m == tile.block_m && rows_fit &&
      variant.head_dim == tile.head_dim && variant.head_dim_v == tile.head_dim_v) {
    tile = variant;
    plan.tile_variant = experiment.decode_tile;
  }
  if (tile.block_m == 0) {
    throw Error(Error::Kind::kValue, "head dims: no kernel tile for d=" + std::to_string(in.head_dim) +
                                         ", dv=" + std::to_string(in.head_dim_v));
  }
  // e4m3 q, k and v run on the native tiles wherever run() can take the call: their block_n (d192 / 128: 128
  // against the converting tile's 96) is what the split count and the TMA boxes are counted in. A call run() then
  // gives to the converting tile splits its own blocks into the same count.
  if (in.fp8_qkv && experiment.fp8_native && !in.mla_decode) {
    const TileShape native = fp8_native_tile(tile.head_dim, tile.head_dim_v, tile.block_m);
    if (native.block_m != 0) tile.block_n = native.block_n;
  }
  const bool persistent =
      !in.mla_decode && prefers_persistent(in, tile.block_m, tile.block_n, qheads_per_kvhead);
  // Long 16-bit d64 tiles take 192 rows (three consumer warpgroups share each K/V block, as FA3 does at d 64): the
  // d64 tile's softmax is as large as its tensor work, and a third warpgroup gives the SM more of both to overlap
  // (docs/perf-log.md entry 19). Short tiles keep 128 rows: the persistent kernel (128 rows only) wins there.
  // The bf16 short tiles too, on the 192-row tile's persistent kernel (entry 42: 8q2k -16%, w128 windows -15%
  // against the 128-row persistent kernel; no-persist192 for the A/B). fp16 has no persistent kernel.
  // Only where K/V stream by TMA (entry 47): a cache of 1-token pages goes by copies, where the 192-row tile's
  // one-tile kernel lost 11% to the 128-row tile (edge/8-2-d40/p1: 23.7 -> 26.2 us); a short call on TMA keeps it
  // even without the persistent kernel (operator sliding256 d40: 128 rows were 4% slower). persist192-strict
  // (entry 44) also asks for 1.5 waves, persist192-any for nothing.
  const bool persistent_m192_rule_holds =
      experiment.persist_m192_rule == 0   ? true
      : experiment.persist_m192_rule == 1 ? kv_tma_box_rows(in.page_size > 0, in.page_size, 128) != 0
                                          : persistent_192_would_run(in, qheads_per_kvhead, device.num_sms);
  const bool persistent_m192 = experiment.persist_m192 && persistent && in.bf16 && persistent_m192_rule_holds;
  if (experiment.d64_m192 && !in.mla_decode && !in.fp8_kv && tile.block_m == 128 && tile.head_dim == 64 &&
      tile.head_dim_v == 64 && (!persistent || persistent_m192)) {
    tile = find_tile_shape(64, 64, 192, false);
  }
  // bf16 d64 windows whose 192-row tiles fit one 176-key block (entry 103; d64-window-tile): on the persistent
  // kernel's plans only, and only where the caller leaves the split count to us (other key blocks, other bits).
  if (experiment.d64_window_tile && in.bf16 && !in.mla_decode && !in.fp8_kv && persistent_m192 &&
      in.num_splits == 0 && tile.block_m == 192 && tile.head_dim == 64 && tile.head_dim_v == 64 &&
      window_fits_one_block(in, experiment, qheads_per_kvhead)) {
    tile = kD64WindowTile;
    plan.tile_variant = kD64WindowVariant;
  }
  // The one-tile 128-row bf16 d96 prefill tiles (head dims 72-96) on three consumer warpgroups, as FA3 runs them
  // (entry 67: P3 q32k -13.5%, q8k -6%, 8q2k -1%; no-d96-m192 for the A/B). Its block_n 96 sums keys in other
  // blocks than the d96 / d128 tiles, so only where the caller leaves the split count to us (as the two-CTA tile).
  if (experiment.d96_m192 && in.bf16 && !in.mla_decode && !in.fp8_kv && !persistent && in.num_splits == 0 &&
      tile.block_m == 128 && tile.head_dim == 96 && tile.head_dim_v == 96) {
    tile = kD96M192Tile;
    plan.tile_variant = kD96M192Variant;
  }
  // The same for e4m3 q/k/v on the native d64 tile (1783 -> 1516 us on fp8/OSS q8k, entry 36); run() gives a call the
  // native tiles refuse to the converting 128-row tile. Short tiles too, which the native tiles run one CTA each
  // (no persistent kernel): fp8/OSS q8k w128 275.7 -> 236.7 us (entry 53).
  if (experiment.fp8_m192 && experiment.fp8_native && !experiment.fp8_native_one_p && in.fp8_qkv &&
      !in.mla_decode && tile.block_m == 128 &&
      tile.head_dim == 64 && tile.head_dim_v == 64 && (!persistent || experiment.fp8_m192_short)) {
    tile = fp8_native_tile(64, 64, 192);
  }
  // e4m3 decodes stream several KV heads per CTA where their query rows fit one 64-row tile (tile_table.h
  // kFp8NativeHeadPackTiles, entry 37): one TMA box per page carries every head of the group. Only where the caller
  // leaves the split count to us (its keys per block differ from the prefill tile's, as the two-CTA tiles'); run()
  // takes the one-head tile where the call cannot be packed (per-head descales, no box fits).
  // fp8-headpack2: the two-CTA form at d128 (block_n 64 rows: up to 4 heads of 16 keys).
  const bool two_cta_pack = experiment.fp8_head_pack == 2 && tile.head_dim == 128 && tile.head_dim_v == 128;
  const TileShape pack_tile =
      two_cta_pack ? kFp8NativeHeadPackTwoCtaTile : fp8_native_head_pack_tile(tile.head_dim, tile.head_dim_v);
  const int head_pack = in.fp8_qkv && experiment.fp8_native && !experiment.fp8_native_one_p &&
                                experiment.fp8_head_pack != 0 && in.num_splits == 0 && !in.mla_decode &&
                                plan.tile_variant == 0 && tile.block_m == 64 && pack_tile.block_m == 64
                            ? kv_head_pack_of(in.num_heads_kv, qheads_per_kvhead, in.max_seqlen_q,
                                              two_cta_pack ? 4 : 8)
                            : 1;
  if (head_pack > 1) {
    tile = pack_tile;
    plan.tile_variant = two_cta_pack ? kFp8NativeHeadPackTwoCtaVariant : kFp8NativeHeadPackVariant;
    plan.kv_head_pack = head_pack;
  }
  plan.head_dim_padded = tile.head_dim;
  plan.head_dim_v_padded = tile.head_dim_v;
  plan.block_m = tile.block_m;
  plan.block_n = tile.block_n / head_pack;  // keys per mainloop block
  plan.qheads_per_kvhead = qheads_per_kvhead;
  const int64_t packed_rows = in.max_seqlen_q * plan.qheads_per_kvhead;
  plan.num_m_blocks = static_cast<int>((packed_rows + tile.block_m - 1) / tile.block_m);

  SplitInputs split;
  split.batch = in.batch;
  split.num_heads_kv = in.num_heads_kv / head_pack;  // CTAs per (sequence, split)
  split.num_m_blocks = plan.num_m_blocks;
  split.max_seqlen_k = static_cast<int>(std::min<int64_t>(in.max_seqlen_k, INT32_MAX));
  split.block_n = plan.block_n;
  split.requested = in.num_splits;
  split.num_sms = device.num_sms;
  // Every tile table CTA takes the whole register file (384 threads at up to 232 registers): one per SM; a decode
  // experiment tile may be built for two.
  split.ctas_per_sm = tile.ctas_per_sm;
  split.key_split = tile.key_split;
  split.kv_block_bytes = kv_block_bytes_of(tile);
  split.combine_rows = static_cast<long long>(in.batch) * in.max_seqlen_q * in.num_heads_q;
  split.head_dim_v = tile.head_dim_v;
  split.fa_rule = experiment.split_fa;
  split.cap = experiment.split_cap;
  split.forced = experiment.split_force;
  // The refitted model (entry 30) was measured on the 64-row decode tiles only; on 128-row tiles of short varlen
  // batches (a 1328-key sequence beside short prefills) it left the long sequence's lone CTA unsplit and lost
  // 1.3-1.9x against the model before it, which those tiles keep (entry 30's grid A/B).
  split.model_v1 = experiment.split_model_v1 || tile.block_m > 64;
  split.cta_rate_gbps = experiment.cta_rate_gbps;
  // A varlen call that the longest-sequence bound splits recounts with its real tiles (run()'s flat grid, where it
  // takes one: sm90/tile_index.h) and combined rows: a 1328-key decode beside a 129-query prefill and a 5-query one
  // (operator S1) had 54 tiles counted, 22 real, and the partials of 387 rows, 135 real, so the model kept the
  // long sequence in 2-3 splits where 4-6 ran 8-27% faster (entry 48). Only where the bound splits: a call it
  // leaves whole (a 257-query prefill beside 16 decodes, 306 tiles counted, 50 real) ran 1.79x slower in 2 splits.
  // get_scheduler_metadata, which has no token count, writes the bound's count; the call plans from its own shapes
  // either way (the buffer's split count is not read back on the host).
  int splits = choose_num_splits(split);
  SplitInputs counted = split;  // what the split count was chosen from
  if ((splits > 1 || experiment.split_recount_all) && in.real_total_q && experiment.split_real_tiles &&
      head_pack == 1) {
    const long long flat = flat_tiles_per_kv_head(in.total_q, plan.qheads_per_kvhead, tile.block_m, in.batch);
    SplitInputs real = split;
    if (takes_flat_grid(flat, static_cast<long long>(in.batch) * plan.num_m_blocks)) real.tiles_per_kv_head = flat;
    real.combine_rows = std::min<long long>(split.combine_rows, in.total_q * in.num_heads_q);
    splits = choose_num_splits(real);
    counted = real;
  }
  // Two CTAs per SM (decode tile variant 1, block_n 64) hide one CTA's prologue and epilogue behind the other's
  // streaming when there is a next CTA to run: measured 0.81 -> 0.89..0.95 of cuDNN on grids of 1.5 waves and
  // more without splits, and a loss on shorter grids and with splits (perf-log entries 10, 16). bf16 d128 only
  // (the only dtype and head dim it is built for). Only when the caller leaves the split count to us: a caller
  // that fixes num_splits = 1 (vLLM's batch-invariant mode) gets one tile, and so the same bits, whatever the
  // batch (tests/reliability/test_determinism.py; block_n 64 sums the keys in another order).
  // d64 (entry 21: gpt-oss decodes of 2-4 waves -9..-15%; no-d64-cta2 turns it off): decode tile 3 keeps block_n
  // 128, so the same bits as the table's tile, and a caller's num_splits = 1 may take it too.
  const long long grid_ctas = static_cast<long long>(in.batch) * in.num_heads_kv * plan.num_m_blocks;
  // (A decode tile experiment of the other head dim, tile=3 on a d128 call, leaves the rule to the call.)
  const bool two_cta_candidate = splits == 1 && plan.tile_variant == 0 &&
                                 !in.mla_decode && in.bf16 && !in.fp8_kv && tile.block_m == 64 &&
                                 2 * grid_ctas >= 3LL * device.num_sms;
  const int two_cta_variant =
      !two_cta_candidate ? 0
      : tile.head_dim == 128 && tile.head_dim_v == 128 && in.num_splits == 0 && experiment.auto_two_ctas ? 1
      : tile.head_dim == 64 && tile.head_dim_v == 64 && experiment.d64_two_ctas                          ? 3
                                                                                                           : 0;
  if (two_cta_variant != 0) {
    tile = decode_variant_tile(two_cta_variant);
    plan.tile_variant = two_cta_variant;
    plan.block_n = tile.block_n;
  }
  // kam2-split2 (entry 108, an experiment): a one-wave grid of long decodes (3/4 to 1.5 waves, 4k keys and more)
  // in two splits on the two-CTA keys-as-M tiles, so that each SM streams two CTAs' keys where it streamed one
  // (ncu: one CTA per SM reads 4.05 TB/s on L70t8 128q1s8k, cuDNN's 4.40), at the cost of a combine of the partials.
  if (experiment.keys_as_m_two_ctas_split2 && splits == 1 && plan.tile_variant == 0 && in.num_splits == 0 &&
      !in.mla_decode && in.bf16 && !in.fp8_kv && head_pack == 1 && tile.block_m == 64 && packed_rows <= 8 &&
      4 * grid_ctas >= 3LL * device.num_sms && 2 * grid_ctas < 3LL * device.num_sms && in.max_seqlen_k >= 4096) {
    const int kam2 = keys_as_m_variant(tile.head_dim, tile.head_dim_v, 2);
    if (kam2 != 0) {
      tile = decode_variant_tile(kam2);
      plan.tile_variant = kam2;
      plan.block_n = tile.block_n;
      splits = 2;
    }
  }
  // kam2 (entry 105): the keys-as-M consumer on the two-CTA tile's stages (7 for 1, 8 for 3), where its rows fit.
  // Other bits than the table's tile (the sums run in another order), so not where the caller fixes num_splits = 1.
  if (experiment.keys_as_m_two_ctas && two_cta_variant != 0 && in.num_splits != 1 && head_pack == 1) {
    const int kam2 = keys_as_m_variant(tile.head_dim, tile.head_dim_v, 2);
    const TileShape kam2_tile = decode_variant_tile(kam2);
    if (kam2 != 0 && packed_rows <= kam2_tile.query_rows && kam2_tile.block_n == tile.block_n) {
      tile = kam2_tile;
      plan.tile_variant = kam2;
      // kam4 (entry 111): d64 on four CTAs per SM (block_n 64; a split count of 1 either way)
      const int kam4 = keys_as_m_variant(tile.head_dim, tile.head_dim_v, 4);
      if (experiment.keys_as_m_four_ctas && kam4 != 0) {
        tile = decode_variant_tile(kam4);
        plan.tile_variant = kam4;
        plan.block_n = tile.block_n;
      }
    }
  }
  // Keys as the GEMMs' M (decode tile 5, entry 90): where the table's one-CTA d128 decode tile would run and every
  // sequence's packed rows fit 8 columns (one token at GQA up to 8, two at up to 4), the tile whose QK^T, softmax
  // and P*V spend nothing on 56 padding rows. Measured against the table's tile (entry 90): a 32-CTA decode 51.1 ->
  // 41.4 us, one-wave grids 0..-5%; grids of 1.5 waves keep the two-CTA tile (taken above), which it lost to. Same
  // key blocks and stages, so the same split count; other bits than the table's tile (its sums run in another
  // order), so not where the caller fixes num_splits = 1 (vLLM's batch-invariant mode: a request's bits must not
  // depend on the batch's other rows).
  // d64 too (decode tile 6, entry 91: gpt-oss decodes).
  const int keys_as_m = keys_as_m_variant(tile.head_dim, tile.head_dim_v);
  const TileShape keys_as_m_tile = decode_variant_tile(keys_as_m);
  const TileShape table_decode = find_tile_shape(tile.head_dim, tile.head_dim_v, 64, false);
  // keys-as-m-ctas=N (an experiment, entry 95): not on grids of N CTAs and more, where each CTA's share of the
  // memory bandwidth, not its chain, sets the time.
  const bool keys_as_m_grid = experiment.keys_as_m_max_ctas <= 0 || grid_ctas * splits < experiment.keys_as_m_max_ctas;
  // Where a keys-as-M tile may replace the table's bf16 decode tile (same key blocks and stages).
  const bool keys_as_m_applies = experiment.keys_as_m && keys_as_m_grid && plan.tile_variant == 0 &&
                                 !in.mla_decode && in.bf16 && !in.fp8_kv && in.num_splits != 1 && head_pack == 1 &&
                                 tile.block_m == 64 && tile.block_n == table_decode.block_n &&
                                 tile.stages == table_decode.stages;
  // kam2-splits (entries 115, 118; no-kam2-splits for the A/B): a split decode that would take the one-CTA keys-as-M
  // tile (5 / 6 below) runs on the two-CTA one (7 / 8) in twice the splits, so that each SM streams two CTAs' keys
  // where it streamed one; the combine is paid either way (H100, 2 rounds over the 55 t8 / L8 split and paged
  // decodes: 0.9945 of the time, the plans it changes -1.2..-4.6%). Other bits than tile 5's (another split
  // count), so only where the caller leaves the count to us. Not under splits=N either: a sweep's forced count is
  // the count that runs (doubled, scripts/split_sweep.py timed 2N and reported N); tile=7,splits=N names the tile.
  if (experiment.keys_as_m_two_ctas_splits && keys_as_m_applies && splits > 1 && experiment.split_force <= 0) {
    const int kam2 = keys_as_m_variant(tile.head_dim, tile.head_dim_v, 2);
    const TileShape kam2_tile = decode_variant_tile(kam2);
    if (kam2 != 0 && packed_rows <= kam2_tile.query_rows) {
      SplitInputs two = counted;
      two.ctas_per_sm = kam2_tile.ctas_per_sm;
      two.block_n = kam2_tile.block_n;
      two.kv_block_bytes = kv_block_bytes_of(kam2_tile);
      two.forced = 2 * splits;
      const int doubled = choose_num_splits(two);
      // The key blocks a query attends to: a window's, not the sequence's (L70t8 4q1s64k w4096 in 54 splits ran
      // +2.1%, one block a split, entry 118).
      const int64_t blocks =
          average_key_blocks(in, kam2_tile.block_m, kam2_tile.block_n, plan.qheads_per_kvhead);
      // Where the count cannot double (the caller's bound, too few blocks) the second CTA per SM has nothing to
      // stream; short splits (under 8 blocks) are a chain of round trips, which a second CTA does not shorten.
      if (2 * doubled >= 3 * splits && (blocks + doubled - 1) / doubled >= 8) {
        splits = doubled;
        tile = kam2_tile;
        plan.tile_variant = kam2;
        plan.block_n = tile.block_n;
      }
    }
  }
  if (keys_as_m_applies && plan.tile_variant == 0 && keys_as_m != 0 && packed_rows <= keys_as_m_tile.query_rows) {
    tile = keys_as_m_tile;
    plan.tile_variant = keys_as_m;
  }
  // The native e4m3 d128 decode tile for two CTAs per SM (tile_table.h kFp8NativeTwoCtaTile), on the same rule as
  // the bf16 d128 one: a grid of 1.5 waves and more, no split, the split count left to us (block_n 64). run() falls
  // back to the converting tile (block_n 128) where the native tiles cannot take the call.
  const bool native_two_cta = splits == 1 && in.fp8_qkv && in.num_splits == 0 && experiment.fp8_two_ctas &&
                              experiment.fp8_native && !experiment.fp8_native_one_p && plan.tile_variant == 0 &&
                              !in.mla_decode && tile.block_m == 64 && tile.head_dim == 128 &&
                              tile.head_dim_v == 128 && 2 * grid_ctas >= 3LL * device.num_sms;
  if (native_two_cta) {
    tile = kFp8NativeTwoCtaTile;
    plan.tile_variant = kFp8NativeTwoCtaVariant;
    plan.block_n = tile.block_n;
    // fp8-kam2 (entry 107): its keys-as-M form where the rows fit 8, on the fp16-P*V tiles that form is built on.
    if (experiment.fp8_keys_as_m_two_ctas && experiment.fp8_f16_pv && experiment.fp8_f16_pv_d128 && head_pack == 1 &&
        packed_rows <= kFp8NativeKeysAsMTwoCtaTile.query_rows) {
      tile = kFp8NativeKeysAsMTwoCtaTile;
      plan.tile_variant = kFp8NativeKeysAsMTwoCtaVariant;
    }
  }
  // The e4m3 keys-as-M tile (variant 208, entry 94; the default since entry 95, no-fp8-keys-as-m for the A/B): the
  // rule of decode tile 5 for e4m3 q, k and v on the native d128 tile with fp16 P*V, where that 64-row tile would
  // run (not the two-CTA one). fp8/L70t8/q1s32k splits0 16.3 -> 15.6 us, the fp8 family's other 13 within +-1%.
  // run() falls back to the converting tile (block_n 128, the same split count) where the native tiles cannot take
  // the call.
  if (experiment.fp8_keys_as_m && keys_as_m_grid && in.fp8_qkv && experiment.fp8_native &&
      !experiment.fp8_native_one_p && experiment.fp8_f16_pv && experiment.fp8_f16_pv_d128 && plan.tile_variant == 0 &&
      !in.mla_decode &&
      in.num_splits != 1 && head_pack == 1 && tile.block_m == 64 && tile.head_dim == 128 && tile.head_dim_v == 128 &&
      tile.block_n == kFp8NativeKeysAsMTile.block_n && packed_rows <= kFp8NativeKeysAsMTile.query_rows) {
    tile = kFp8NativeKeysAsMTile;
    plan.tile_variant = kFp8NativeKeysAsMVariant;
  }
  // The cap is decided from batch x max_seqlen_q (known to get_scheduler_metadata too); the workspace itself is
  // sized by total_q, which may include padding rows after the last sequence.
  const size_t row_bytes = static_cast<size_t>(in.num_heads_q) * (tile.head_dim_v + 1) * sizeof(float);
  const size_t decided_rows = static_cast<size_t>(in.batch) * static_cast<size_t>(in.max_seqlen_q);
  while (splits > 1 && decided_rows * row_bytes * splits > kMaxWorkspaceBytes) splits /= 2;
  plan.num_splits = splits;
  // cluster-combine (entry 120): the splits merge in their cluster's shared memory, so no partials in a workspace.
  plan.cluster_splits = cluster_combine_splits(experiment, plan.tile_variant, in.fp8_kv, in.fp8_qkv, splits);
  plan.workspace_bytes =
      splits > 1 && plan.cluster_splits == 0 ? static_cast<size_t>(in.total_q) * row_bytes * splits : 0;
  plan.persistent = persistent && (plan.block_m == 128 || (plan.block_m == 192 && persistent_m192));
  plan.kernel_name = in.mla_decode ? "mla_decode_sm90" : "attention_fwd_sm90";
  return plan;
}

}  // namespace

LaunchPlan make_plan(const AttentionArgs& a, const DeviceInfo& device) {
  PlanInputs in;
  in.batch = a.batch_size;
  in.total_q = a.q.shape[0];
  in.num_heads_q = static_cast<int>(a.q.shape[1]);
  in.num_heads_kv = static_cast<int>(a.k.shape[a.k.rank - 2]);
  in.head_dim = static_cast<int>(a.q.shape[2]);
  in.head_dim_v = static_cast<int>(a.v.shape[a.v.rank - 1]);
  in.max_seqlen_q = a.cu_seqlens_q.given() ? a.max_seqlen_q : a.fixed_seqlen_q;
  in.max_seqlen_k = a.max_seqlen_k;
  in.num_splits = a.num_splits;
  in.causal = a.causal;
  in.window_left = a.window_left;
  in.window_right = a.window_right;
  in.mla_decode = a.q_v.given();
  in.fp8_kv = a.k.dtype == DType::kFloat8E4M3;
  in.bf16 = a.q.dtype == DType::kBFloat16 && a.k.dtype == DType::kBFloat16;
  in.fp8_qkv = a.q.dtype == DType::kFloat8E4M3 && a.k.dtype == DType::kFloat8E4M3;
  in.page_size = a.block_table.given() ? static_cast<int>(a.k.shape[1]) : 0;
  in.real_total_q = a.cu_seqlens_q.given();
  return plan_for(in, device);
}

LaunchPlan make_plan(const SchedulerArgs& a, const DeviceInfo& device) {
  PlanInputs in;
  in.batch = a.batch_size;
  in.total_q = static_cast<int64_t>(a.batch_size) * a.max_seqlen_q;  // workspace is not sized from this plan
  in.num_heads_q = a.num_heads_q;
  in.num_heads_kv = a.num_heads_kv;
  in.head_dim = a.headdim;
  in.head_dim_v = a.headdim_v;
  in.max_seqlen_q = a.max_seqlen_q;
  in.max_seqlen_k = a.max_seqlen_k;
  in.num_splits = a.num_splits;
  in.causal = a.causal;
  in.window_left = a.window_left;
  in.window_right = a.window_right;
  // get_scheduler_metadata has no q_v; (64, 512) is only valid for MLA decode.
  in.mla_decode = a.headdim == MlaDecodeTile::kHeadDim && a.headdim_v == MlaDecodeTile::kHeadDimV;
  in.fp8_kv = a.qkv_dtype == DType::kFloat8E4M3;
  in.bf16 = a.qkv_dtype == DType::kBFloat16;
  in.fp8_qkv = a.qkv_dtype == DType::kFloat8E4M3;
  in.page_size = a.page_size;
  in.real_total_q = false;
  return plan_for(in, device);
}

}  // namespace flashseek
