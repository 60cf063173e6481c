// The main-loop values the host names (kernel_traits.h LoopFlags combinations, checked there and in fwd_kernel.h).
// Plain C++, so that the host's choices are CPU-tested (src/host/tile_loop.h).
#pragma once

namespace flashseek::sm90 {

// The main-loop value of the persistent kernel (kernel_traits.h kLoopBaseFlags | kLoopPersistent; checked there),
// for the host, which does not include the kernel headers.
constexpr int kPersistentLoopFlags = 3587;
// kLoopTileFastDiv, on run()'s persistent value by default (entry 64; every persistent tile lists it).
constexpr int kTileFastDivLoopBit = 131072;
// The native e4m3 64-row tiles' producer-latency loop, run()'s choice for them since entry 39 (kDefaultLoopFlags |
// kLoopPageIdsAhead | kLoopTransposeBatch, checked in fwd_kernel.h; no-fp8-producer-ahead takes kDefaultLoopFlags).
constexpr int kNativeProducerAheadLoopFlags = 30211;
// The one-tile kernel's default value (kDefaultLoopFlags) and the q-tma bit (kLoopQTma, entry 69; checked in
// fwd_kernel.h).
constexpr int kOneTileLoopFlags = 5635;
constexpr int kQTmaLoopBit = 262144;
constexpr int kLeanTailLoopBit = 524288;  // kLoopLeanTail (entry 71)
constexpr int kTurns3LoopBit = 1048576;   // kLoopTurns3 (entry 81)

}  // namespace flashseek::sm90
