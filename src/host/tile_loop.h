// Which main-loop value a forward call's tile runs, given the value run() chose for the call from the plan
// (loop_flags_of, then the q-tma / lean-tail bits; -1: the tile's default). Plain C++, so that CPU tests hold the
// default path to the kernels that were measured as defaults (tests/cpp/test_plan.cpp TileLoop).
#pragma once

#include "../sm90/fwd_experiments.h"
#include "../sm90/loop_values.h"
#include "experiment.h"
#include "tile_table.h"

namespace flashseek {

struct TileLoopKey {
  int head_dim_padded;
  int head_dim_v_padded;
  int block_m;
  int tile_variant;
  bool bf16;        // the compute type is bf16 (the tiles with loop variants are bf16 only)
  bool fp8_kv;      // an e4m3 cache on the converting tiles
  bool fp8_native;  // e4m3 q, k and v on the native e4m3 tiles
  long long grid_ctas = 0;    // the one-tile grid's CTAs (tiles x splits)
  long long resident_ctas = 0;  // the tile's CTAs resident at once: SMs x its CTAs per SM
};

// q-tma (entry 69) and lean-tail (entry 71): `loop_flags` (-1: the tile's default) with as many of `bits` as the
// tile's kernels list (sm90/fwd_experiments.h), or -1 where they list none of them: the bf16 d128 128-row tiles take
// both, one-tile and persistent; the d64 persistent kernels both at 128 rows and q-tma only at 192 (lean-tail
// spilled there); the others keep their loops.
inline int loop_flags_with_bits(const TileLoopKey& t, int loop_flags, int bits) {
  if (!sm90::tile_has_loop_variants(t.bf16, t.fp8_kv || t.fp8_native, t.tile_variant, t.head_dim_padded,
                                    t.head_dim_v_padded, t.block_m)) {
    return -1;
  }
  const int base = loop_flags < 0 ? sm90::kOneTileLoopFlags : loop_flags;
  for (int b : {bits, bits & ~sm90::kLeanTailLoopBit, bits & ~sm90::kQTmaLoopBit}) {
    if (b != 0 && sm90::tile_lists_value(t.head_dim_padded, t.block_m, base | b)) return base | b;
  }
  return -1;
}

// Whether the persistent kernel pays on a one-tile grid of `grid_ctas` CTAs, `resident_ctas` at once (launch.h
// persistent_takes asks for 1.5 waves as well, and K/V that TMA streams). Entry 95: on single-sequence causal q1k
// prefills of 224-256 tiles (1.7-1.9 waves) the one-tile kernel in lpt order ran 6-10% faster (L8, Q7, G27, P3
// q1k); at 512 tiles (L70, OSS q1k) and on the many-tile short grids (16q512, 8q2k, windows) the persistent kernel
// won by 7-35%. Under two waves each SM takes at most two tiles, heaviest first: nothing for the persistent
// kernel's overlap of a tile's epilogue with the next tile's loads to win back its scheduling.
// persist-half-waves=N: the persistent kernel above N half waves (N = 3: the rule before entry 95).
inline bool persistent_grid_pays(const Experiment& e, long long grid_ctas, long long resident_ctas) {
  return 2 * grid_ctas > e.persist_half_waves * resident_ctas;
}

// The two-CTA bf16 d128 decode tile (tile_table.h decode variant 1).
constexpr int kTwoCtaD128DecodeVariant = 1;

// A tile that lists the persistent value (sm90/fwd_experiments.h) runs it wherever the value reaches it, so the
// plan's choice of the persistent kernel must reach only the tiles whose persistent kernel is a measured default
// (d128 / d64 / d96 128-row, d64 192-row; from e95ffce to 264038c the plan's choice reached the d192 / 128 tile's
// token-only kernel: MLAp128 4q2k 1447 -> 1662 us, entry 84). The 64-row decode tiles take theirs by their own rule
// (the plan prefers one CTA per tile for them): the two-CTA d128 tile on grids of 3 waves and more (entry 86), every
// bf16 decode tile under decode-persist (entry 83). A value forced by FLASHSEEK_EXPERIMENT reaches every tile that
// lists it, as before. The native e4m3 tiles keep run()'s value (their producer-latency loop).
inline int tile_loop_flags(const Experiment& e, const TileLoopKey& t, int loop_flags) {
  if (e.loop_flags >= 0 || t.fp8_kv || t.fp8_native) return loop_flags;
  // A tile without variants runs its default whatever it is passed: say so (d192, d256, fp16, ...).
  if (!sm90::tile_has_loop_variants(t.bf16, false, t.tile_variant, t.head_dim_padded, t.head_dim_v_padded,
                                    t.block_m)) {
    return -1;
  }
  const int persistent = sm90::kPersistentLoopFlags | sm90::kTileFastDivLoopBit;
  if (t.block_m == 64) {
    if (e.decode_persist) return persistent;
    const bool waves3 = t.resident_ctas > 0 && t.grid_ctas >= 3 * t.resident_ctas;
    return e.decode_persist_waves && e.persistent && waves3 && t.head_dim_padded == 128 &&
                   t.head_dim_v_padded == 128 && t.tile_variant == kTwoCtaD128DecodeVariant
               ? persistent
               : -1;
  }
  // m192-turns (entry 81): the round-robin bit on the bf16 d64 192-row tile's values (fwd_experiments.h lists them).
  if (e.m192_turns && t.block_m == 192 && t.head_dim_padded == 64) {
    return (loop_flags < 0 ? sm90::kOneTileLoopFlags : loop_flags) | sm90::kTurns3LoopBit;
  }
  // mask-range (entry 109): the same value with the unmasked blocks' range, where the tile lists it (the one-tile
  // values of the bf16 d128 128-row and d64 192-row tiles); with tma-no-fence also without the TMA blocks' fence
  // (entry 110; listed only beside mask-range).
  // mask-range-d64 (entry 112): the d64 tile's value only.
  if (e.mask_range || (e.mask_range_d64 && t.head_dim_padded == 64 && t.block_m == 192)) {
    const int v = (loop_flags < 0 ? sm90::kOneTileLoopFlags : loop_flags) | sm90::kMaskRangeLoopBit |
                  (e.tma_no_fence ? sm90::kTmaNoFenceLoopBit : 0);
    if (sm90::tile_lists_value(t.head_dim_padded, t.block_m, v)) return v;
  }
  return loop_flags;
}

// cluster-combine (entry 120): the split count of a call whose splits combine in one thread-block cluster, or 0 (the
// combine kernel). A 16-bit decode on a keys-as-M tile (its consumer stages O^T, the maxima and the sums in shared
// memory before the epilogue, where the cluster's CTAs read them) in 2 to 8 splits: 8 is the portable cluster size.
inline int cluster_combine_splits(const Experiment& e, int tile_variant, bool fp8_kv, bool fp8_native,
                                  int num_splits) {
  const bool keys_as_m = tile_variant >= 1 && tile_variant <= kNumDecodeVariants &&
                         decode_variant_tile(tile_variant).query_rows > 0;
  return e.cluster_combine && keys_as_m && !fp8_kv && !fp8_native && num_splits >= 2 && num_splits <= 8
             ? num_splits
             : 0;
}

}  // namespace flashseek
