// The experiment variants of the bf16 d128 block_m-128 forward kernel (docs/perf-log.md entry 9), selected at
// run time by FLASHSEEK_EXPERIMENT=N (LoopFlags bits, kernel_traits.h). Only the values listed here are
// compiled; any other value makes the launch fail with cudaErrorInvalidValue (a silent fallback would time the
// default kernel under the experiment's name). Plain C++: CPU tests hold the host's choices (host/tile_loop.h) to
// these lists (tests/cpp/test_plan.cpp TileLoop).
#pragma once

#include <cstddef>
#include <tuple>
#include <utility>

#include "loop_values.h"

namespace flashseek::sm90 {

template <int... kValues>
struct LoopFlagList {
  static constexpr int kCount = sizeof...(kValues);
  static constexpr int kValuesArray[] = {kValues...};
  static constexpr bool contains(int value) { return ((value == kValues) || ...); }
};

constexpr int kExpBase = kLoopBaseFlags;  // 1539 (the default is kExpBase | kLoopUniformWg, 5635)
using ExperimentLoopFlags = LoopFlagList<
    // stage-skip matrix (timing only; wrong outputs)
    kExpBase | kLoopSkipSoftmax,                                                    // 1543
    kExpBase | kLoopSkipPv,                                                         // 1547
    kExpBase | kLoopSkipQk,                                                         // 1555
    kExpBase | kLoopSkipPv | kLoopSkipQk,                                           // 1563
    kExpBase | kLoopProducerNoCopy,                                                 // 1571 (cp.async producer)
    kExpBase | kLoopSkipSoftmax | kLoopProducerNoCopy,                              // 1575
    kExpBase | kLoopSkipSoftmax | kLoopSkipPv | kLoopSkipQk | kLoopProducerNoCopy,  // 1599
    kExpBase | kLoopNoPingpong,                                                     // 1603
    kExpBase | kLoopOneConsumer,                                                    // 1667
    // the exact rewrites left out (bitwise equal to the default)
    kLoopOverlap | kLoopSkipRescale,                                                //    3
    kLoopOverlap | kLoopSkipRescale | kLoopDescPrecomp,                             //  515
    kLoopOverlap | kLoopSkipRescale | kLoopTreeMax,                                 // 1027
    // the persistent kernel (fwd_persistent.h; bitwise equal to the default)
    kExpBase | kLoopPersistent,                                                     // 3587
    // ... with the consumer's stage and phase carried from block to block (entry 52; d128 only)
    kExpBase | kLoopPersistent | kLoopCarriedStage,                                 // 36355
    // the persistent kernel's tile numbers decoded by multiply-shift divisions (entry 64; run()'s default since s15)
    kExpBase | kLoopPersistent | kLoopTileFastDiv,                                  // 134659
    // Q by tensor-map boxes (entry 69) and the lean tile tail (entry 71), each and both (bitwise equal): on the
    // one-tile default and on run()'s persistent value. run()'s choices since entry 73: lean-tail everywhere these
    // tiles run, with q-tma where its boxes pay (529923 / 658947, and 792067 / 921091)
    kDefaultLoopFlags | kLoopQTma,                                                  // 267779
    kExpBase | kLoopPersistent | kLoopTileFastDiv | kLoopQTma,                      // 396803
    kDefaultLoopFlags | kLoopLeanTail,                                              // 529923
    kExpBase | kLoopPersistent | kLoopTileFastDiv | kLoopLeanTail,                  // 658947
    kDefaultLoopFlags | kLoopQTma | kLoopLeanTail,                                  // 792067
    kExpBase | kLoopPersistent | kLoopTileFastDiv | kLoopQTma | kLoopLeanTail,      // 921091
    // the default without the warpgroup index broadcast (bitwise equal; entry 19)
    kExpBase,                                                                       // 1539
    // run()'s one-tile values without kLoopOverlap (entry 93: FA3's placement, the P*V wait above the softmax, so
    // V is released ~300 cycles earlier a block and the pingpong alone overlaps; bitwise equal)
    (kDefaultLoopFlags & ~kLoopOverlap) | kLoopLeanTail,                            // 529922
    (kDefaultLoopFlags & ~kLoopOverlap) | kLoopQTma | kLoopLeanTail,                // 792066
    // run()'s one-tile values with the unmasked blocks' range (entry 109; bitwise equal)
    kDefaultLoopFlags | kLoopLeanTail | kLoopMaskRange,                             // 2627075
    kDefaultLoopFlags | kLoopQTma | kLoopLeanTail | kLoopMaskRange,                 // 2889219
    // ... and without the proxy fence on TMA-loaded blocks (entry 110; bitwise equal)
    kDefaultLoopFlags | kLoopLeanTail | kLoopMaskRange | kLoopTmaNoFence,           // 6821379
    kDefaultLoopFlags | kLoopQTma | kLoopLeanTail | kLoopMaskRange | kLoopTmaNoFence>;  // 7083523

// The d64 tile: the persistent kernel (the short-tile d64 prefills: sliding windows of gpt-oss) and the broadcast.
using ExperimentLoopFlagsD64 =
    LoopFlagList<kExpBase | kLoopPersistent, kExpBase | kLoopPersistent | kLoopTileFastDiv, kExpBase,
                 // q-tma (entry 69), lean-tail (entry 71), both
                 kExpBase | kLoopPersistent | kLoopTileFastDiv | kLoopQTma,
                 kExpBase | kLoopPersistent | kLoopTileFastDiv | kLoopLeanTail,
                 kExpBase | kLoopPersistent | kLoopTileFastDiv | kLoopQTma | kLoopLeanTail>;

// The 192-row d64 tile (three consumer warpgroups): its persistent kernel only (persist192, entry 42). Entry 45's
// one-tile loop with its exponentials held under the P*V (m192-pin) was measured 3-4% slower and removed.
// q-tma (entry 69) too; not lean-tail, whose epilogue spilled 216-268 bytes in its 160-register consumers.
// m192-turns (entry 81): the three warpgroups' round-robin turns on the one-tile default and on run()'s two
// persistent values.
using ExperimentLoopFlagsD64M192 =
    LoopFlagList<kExpBase | kLoopPersistent, kExpBase | kLoopPersistent | kLoopTileFastDiv,
                 kExpBase | kLoopPersistent | kLoopTileFastDiv | kLoopQTma,
                 kDefaultLoopFlags | kLoopTurns3,                                              // 1054211
                 kExpBase | kLoopPersistent | kLoopTileFastDiv | kLoopTurns3,                  // 1183235
                 kExpBase | kLoopPersistent | kLoopTileFastDiv | kLoopQTma | kLoopTurns3,     // 1445379
                 kDefaultLoopFlags | kLoopMaskRange,                                           // 2102787 (entry 109)
                 kDefaultLoopFlags | kLoopMaskRange | kLoopTmaNoFence>;                        // 6297091 (entry 110)

// The 128-row d96 tile (head dims 72-96; FLASHSEEK_EXPERIMENT=d96 or d96-persist, entry 68): its persistent kernel
// at run()'s default value only (fwd_experiments_d96.cu, a translation unit of its own for the build's parallelism).
using ExperimentLoopFlagsD96 = LoopFlagList<kExpBase | kLoopPersistent | kLoopTileFastDiv>;

// The bf16 64-row decode tiles (d128 and d64, the table's and the two-CTA variants; entries 83, 86): their
// persistent kernel at the persistent value (fwd_experiments_decode.cu; host/tile_loop.h says which grids take it).
using ExperimentLoopFlagsDecode = LoopFlagList<kExpBase | kLoopPersistent | kLoopTileFastDiv>;
// ... and at d128 (the table's tile and the two-CTA one) the stage-skip values of entry 9's matrix on the one-tile
// kernel (entry 88; timing only, wrong outputs; scripts/bench_decode.py 1539 1543 1563 1567): what bounds a decode
// CTA's time per key block, its consumer (QK^T, softmax, P*V) or the K/V stream.
using ExperimentLoopFlagsDecodeD128 =
    LoopFlagList<kExpBase | kLoopPersistent | kLoopTileFastDiv,
                 kExpBase,                                               // 1539: the matrix's base
                 kExpBase | kLoopSkipSoftmax,                            // 1543
                 kExpBase | kLoopSkipPv | kLoopSkipQk,                   // 1563
                 kExpBase | kLoopSkipSoftmax | kLoopSkipPv | kLoopSkipQk>;  // 1567: no consumer work

// Which tiles have loop variants besides their default: the bf16 128-row tiles of d128 (the stage-skip matrix, entry
// 9, and the persistent kernel), d64 and d96 (their persistent kernels, entry 68), the 192-row d64 tile (its
// persistent kernel, entry 42), and the bf16 64-row decode tiles of d128 and d64, the table's and their two-CTA
// variants 1 and 3 (their persistent kernels, entries 83, 86). (The d192 / 128 tile's persistent kernel measured
// slower twice and was removed: entries 82, 86.) fwd_kernel.h has_experiment_variants reads this.
constexpr bool tile_has_loop_variants(bool bf16, bool fp8_kv, int variant, int d, int dv, int block_m) {
  const bool bf16_16bit = bf16 && !fp8_kv;
  const bool square = d == dv;
  const bool decode = bf16_16bit && square && block_m == 64 &&
                      ((d == 128 && (variant == 0 || variant == 1)) || (d == 64 && (variant == 0 || variant == 3)));
  const bool table = bf16_16bit && variant == 0 && square &&
                     ((block_m == 128 && (d == 128 || d == 64 || d == 96)) || (block_m == 192 && d == 64));
  return decode || table;
}

// The list a tile's variants come from (the launcher dispatches over it, fwd_experiment_launch.h).
using LoopFlagLists = std::tuple<ExperimentLoopFlagsDecode, ExperimentLoopFlagsD64M192, ExperimentLoopFlagsD64,
                                 ExperimentLoopFlagsD96, ExperimentLoopFlags, ExperimentLoopFlagsDecodeD128>;
constexpr int loop_flag_list_of(int d, int block_m) {
  return block_m == 64 ? (d == 128 ? 5 : 0) : block_m == 192 ? 1 : d == 64 ? 2 : d == 96 ? 3 : 4;
}
template <int kD, int kBlockM>
using TileLoopFlagList = std::tuple_element_t<loop_flag_list_of(kD, kBlockM), LoopFlagLists>;

template <std::size_t... kLists>
constexpr bool list_contains(int list, int value, std::index_sequence<kLists...>) {
  return ((list == static_cast<int>(kLists) && std::tuple_element_t<kLists, LoopFlagLists>::contains(value)) || ...);
}
// Whether the (d, block_m) tile's list holds `value` (a tile with variants, tile_has_loop_variants).
constexpr bool tile_lists_value(int d, int block_m, int value) {
  return list_contains(loop_flag_list_of(d, block_m), value,
                       std::make_index_sequence<std::tuple_size_v<LoopFlagLists>>{});
}

// Whether a tile with variants takes `value` to its launcher; a value its list lacks leaves it on its default (a
// process under FLASHSEEK_EXPERIMENT=1539 runs the 192-row, d96 and decode tiles as before they had variants). The
// d128 and d64 128-row tiles pass every experiment value on, and an unlisted one fails their launch.
template <int kD, int kBlockM>
constexpr bool experiment_lists(int value) {
  return (kBlockM == 128 && (kD == 128 || kD == 64)) || tile_lists_value(kD, kBlockM, value);
}

}  // namespace flashseek::sm90
