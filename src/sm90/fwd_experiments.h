// The experiment variants of the bf16 d128 block_m-128 forward kernel (docs/perf-log.md entry 9), selected at
// run time by FLASHSEEK_EXPERIMENT=N (LoopFlags bits, kernel_traits.h). Only the values listed here are
// compiled; any other value makes the launch fail with cudaErrorInvalidValue (a silent fallback would time the
// default kernel under the experiment's name).
#pragma once

#include "kernel_traits.h"

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
    kExpBase>;                                                                      // 1539

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
                 kExpBase | kLoopPersistent | kLoopTileFastDiv | kLoopQTma | kLoopTurns3>;    // 1445379

// The 128-row d96 tile (head dims 72-96; FLASHSEEK_EXPERIMENT=d96 or d96-persist, entry 68): its persistent kernel
// at run()'s default value only (fwd_experiments_d96.cu, a translation unit of its own for the build's parallelism).
using ExperimentLoopFlagsD96 = LoopFlagList<kExpBase | kLoopPersistent | kLoopTileFastDiv>;

// The bf16 64-row decode tiles (d128 and d64, the table's and the two-CTA variants; entries 83, 86): their
// persistent kernel at the persistent value (fwd_experiments_decode.cu; host/tile_loop.h says which grids take it).
using ExperimentLoopFlagsDecode = LoopFlagList<kExpBase | kLoopPersistent | kLoopTileFastDiv>;

// Whether a tile with variants lists `value`; a value its list lacks leaves it on its default (a process under
// FLASHSEEK_EXPERIMENT=1539 runs the 192-row, d96 and decode tiles as before they had variants). The d128 and d64
// 128-row tiles list every experiment value, and an unlisted one fails their launch.
template <int kD, int kBlockM>
constexpr bool experiment_lists(int value) {
  if constexpr (kBlockM == 64) {
    return ExperimentLoopFlagsDecode::contains(value);
  } else if constexpr (kBlockM == 192) {
    return ExperimentLoopFlagsD64M192::contains(value);
  } else if constexpr (kD == 96) {
    return ExperimentLoopFlagsD96::contains(value);
  } else {
    return true;
  }
}

}  // namespace flashseek::sm90
