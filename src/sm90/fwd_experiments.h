// The experiment variants of the bf16 d128 block_m-128 forward kernel (docs/perf-log.md entry 9), selected at
// run time by FLASHSEEK_EXPERIMENT=N (LoopFlags bits, kernel_traits.h). Only the values listed here are
// compiled; any other value above 3 makes the launch fail with cudaErrorInvalidValue (a silent fallback would
// time the default kernel under the experiment's name). Every value keeps the default bits 1 and 2.
// kLoopTmaNoFence and kLoopBlockN160 only come with kLoopTmaKv; where TMA cannot describe K/V the launcher drops
// all three bits (the 128 x 128 tile with the same remaining bits).
#pragma once

#include "kernel_traits.h"

namespace flashseek::sm90 {

template <int... kValues>
struct LoopFlagList {
  static constexpr int kCount = sizeof...(kValues);
  static constexpr int kValuesArray[] = {kValues...};
};

constexpr int kExpBase = kDefaultLoopFlags;  // 3
using ExperimentLoopFlags = LoopFlagList<
    // stage-skip matrix (timing only; wrong outputs)
    kExpBase | kLoopSkipSoftmax,                                                                 //   7
    kExpBase | kLoopSkipPv,                                                                      //  11
    kExpBase | kLoopSkipQk,                                                                      //  19
    kExpBase | kLoopSkipPv | kLoopSkipQk,                                                        //  27
    kExpBase | kLoopProducerNoCopy,                                                              //  35
    kExpBase | kLoopSkipSoftmax | kLoopProducerNoCopy,                                           //  39
    kExpBase | kLoopSkipSoftmax | kLoopSkipPv | kLoopSkipQk | kLoopProducerNoCopy,               //  63
    kExpBase | kLoopNoPingpong,                                                                  //  67
    kExpBase | kLoopOneConsumer,                                                                 // 131
    // candidate fixes (exact)
    kExpBase | kLoopTmaKv,                                                                       // 259
    kExpBase | kLoopTmaKv | kLoopSkipSoftmax,                                                    // 263 (timing only)
    kExpBase | kLoopTmaKv | kLoopNoPingpong,                                                     // 323
    kExpBase | kLoopDescPrecomp,                                                                 // 515
    kExpBase | kLoopTreeMax,                                                                     // 1027
    kExpBase | kLoopDescPrecomp | kLoopTreeMax,                                                  // 1539
    kExpBase | kLoopTmaKv | kLoopDescPrecomp | kLoopTreeMax,                                     // 1795
    // TMA without the per-step proxy fence (only a cp.async block is fenced; exact)
    kExpBase | kLoopTmaKv | kLoopTmaNoFence,                                                     // 2307
    kExpBase | kLoopTmaKv | kLoopDescPrecomp | kLoopTreeMax | kLoopTmaNoFence,                   // 3843
    // the 128 x 160 tile with TMA (other key blocks: online-softmax steps differ, not bitwise the default)
    kExpBase | kLoopTmaKv | kLoopBlockN160,                                                      // 4355
    kExpBase | kLoopTmaKv | kLoopTmaNoFence | kLoopBlockN160,                                    // 6403
    kExpBase | kLoopTmaKv | kLoopDescPrecomp | kLoopTreeMax | kLoopTmaNoFence | kLoopBlockN160>; // 7939

}  // namespace flashseek::sm90
