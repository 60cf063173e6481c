// The consumer main-loop values (LoopFlags bit combinations) and the ones the host names. Plain C++, so that the
// host's choices are CPU-tested against the kernels' lists (src/host/tile_loop.h, sm90/loop_lists.h,
// tests/cpp/test_plan.cpp TileLoop).
#pragma once

namespace flashseek::sm90 {

// Consumer main-loop variants (bit flags; see consumer.h). Every tile runs kDefaultLoopFlags; the bf16 d128
// block_m-128 tile also instantiates the values listed in fwd_experiments.h, picked at run time
// (FLASHSEEK_EXPERIMENT=N, docs/perf-log.md entry 9). The stage-skip bits (4..128) leave one stage of the kernel
// out so that time differences attribute the kernel's time; their outputs are wrong (timing only). The other
// bits are exact rewrites: any combination of them computes the same result, bit for bit.
enum LoopFlags : int {
  kLoopOverlap = 1,
  kLoopSkipRescale = 2,
  kLoopSkipSoftmax = 4,      // no mask / max / exp / sum / O rescale: P = bf16(S)
  kLoopSkipPv = 8,           // no P*V wgmma (the commit groups and waits stay)
  kLoopSkipQk = 16,          // no QK^T wgmma: S keeps its previous contents (zeros, then stale P values)
  kLoopProducerNoCopy = 32,  // the cp.async producer copies K/V for the first kStages blocks only, then just signals
  kLoopNoPingpong = 64,      // consumers never wait for each other's turn
  kLoopOneConsumer = 128,    // consumer warpgroup 1 exits at once (half the rows; no pingpong)
  kLoopDescPrecomp = 512,    // wgmma shared-memory descriptors from precomputed bases (one add each)
  kLoopTreeMax = 1024,       // row max as 4 independent FMNMX chains per row instead of 1
  kLoopPersistent = 2048,    // persistent CTAs over a dynamic tile schedule (fwd_persistent.h)
  kLoopUniformWg = 4096,     // the consumer warpgroup index broadcast from lane 0 (warp-uniform for ptxas; entry 19)
  kLoopPageIdsAhead = 8192,  // native e4m3 producer: block-table reads two blocks ahead, clamped at use (entry 39)
  kLoopTransposeBatch = 16384,  // native e4m3 producer: the V transpose loads several passes before storing
  kLoopCarriedStage = 32768,  // the consumer loop carries its stage and phase instead of deriving them (entry 52)
  kLoopTileFastDiv = 131072,  // the persistent kernel decodes tile numbers by multiply-shift divisions (entry 64)
  kLoopQTma = 262144,  // the TMA producer loads packed Q by tensor-map boxes (FwdParams::q_tma_box_tokens; entry 69)
  kLoopLeanTail = 524288,  // fewer instructions per tile's epilogue: the LSE only where stored, the store loop by
                           // incremental rows (entry 71)
  kLoopTurns3 = 1048576,   // three consumer warpgroups (192-row tiles) issue their GEMMs in turn, round robin, as two
                           // do by pingpong (entry 81)
  kLoopMaskRange = 2097152,  // whether a block needs masking from the tile's range of unmasked blocks, computed once
                             // (two compares a block), instead of the mask's limits per block (entry 109)
  kLoopTmaNoFence = 4194304,  // no proxy fence before the GEMMs of blocks the TMA producer loaded (entry 110)
  kLoopClusterCombine = 8388608,  // keys-as-M decode tiles: the splits combine in their cluster (entry 120; the
                                  // one-tile launcher takes it where FwdParams::cluster_splits > 1)
};
// The base of the experiment values (fwd_experiments.h) and of the persistent kernel: entry 9's and 13's measured
// best (-0.7..-1.5% time for the two rewrites beside the TMA producer).
constexpr int kLoopBaseFlags = kLoopOverlap | kLoopSkipRescale | kLoopDescPrecomp | kLoopTreeMax;  // 1539
// The default adds the warpgroup index broadcast: -2% time over the prefill families, -2.6/-3.3% on 2 x 8k d128
// full/causal, bit for bit the same (entry 19).
constexpr int kDefaultLoopFlags = kLoopBaseFlags | kLoopUniformWg;  // 5635
constexpr int kStageSkipFlags =
    kLoopSkipSoftmax | kLoopSkipPv | kLoopSkipQk | kLoopProducerNoCopy | kLoopNoPingpong | kLoopOneConsumer;

// The values the host names.
// The persistent kernel's value (fwd_persistent.h).
constexpr int kPersistentLoopFlags = kLoopBaseFlags | kLoopPersistent;  // 3587
// kLoopTileFastDiv, on run()'s persistent value by default (entry 64; every persistent tile lists it).
constexpr int kTileFastDivLoopBit = kLoopTileFastDiv;
// The native e4m3 64-row tiles' producer-latency loop, run()'s choice for them since entry 39 (no-fp8-producer-ahead
// takes kDefaultLoopFlags).
constexpr int kNativeProducerAheadLoopFlags = kDefaultLoopFlags | kLoopPageIdsAhead | kLoopTransposeBatch;  // 30211
// The one-tile kernel's default value and the q-tma (entry 69), lean-tail (entry 71) and turns (entry 81) bits.
constexpr int kOneTileLoopFlags = kDefaultLoopFlags;  // 5635
constexpr int kQTmaLoopBit = kLoopQTma;
constexpr int kLeanTailLoopBit = kLoopLeanTail;
constexpr int kTurns3LoopBit = kLoopTurns3;
constexpr int kMaskRangeLoopBit = kLoopMaskRange;
constexpr int kTmaNoFenceLoopBit = kLoopTmaNoFence;
// The one-block windowed d64 tile (tile_table.h kD64WindowTile, entry 103): the persistent kernel at the bf16 192-row
// d64 tile's default value, persistent + tile-fastdiv + q-tma (396803); run() passes it, only that tile has it.
constexpr int kD64WindowLoopFlags = kPersistentLoopFlags | kTileFastDivLoopBit | kQTmaLoopBit;

}  // namespace flashseek::sm90
