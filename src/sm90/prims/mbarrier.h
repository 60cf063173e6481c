// Shared-memory barriers (mbarrier) for the producer/consumer pipeline, and named CTA barriers.
#pragma once

#include <cstdint>

namespace flashseek::sm90 {

__device__ __forceinline__ void mbarrier_init(uint32_t bar, uint32_t expected_arrivals) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(bar), "r"(expected_arrivals) : "memory");
}

// Makes mbarrier initialisation visible to the async proxy (cp.async arrivals) and to other threads.
__device__ __forceinline__ void mbarrier_init_fence() {
  asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
}

__device__ __forceinline__ void mbarrier_arrive(uint32_t bar) {
  asm volatile(
      "{\n"
      ".reg .b64 state;\n"
      "mbarrier.arrive.shared::cta.b64 state, [%0];\n"
      "}\n" ::"r"(bar)
      : "memory");
}

// Blocks until the phase of parity `phase_parity` has completed. A freshly initialised barrier counts as having
// completed the phase of parity 1, so producers start waiting on parity 1 for their "slot empty" barriers.
__device__ __forceinline__ void mbarrier_wait(uint32_t bar, uint32_t phase_parity) {
  asm volatile(
      "{\n"
      ".reg .pred done;\n"
      "WAIT_LOOP:\n"
      "mbarrier.try_wait.parity.shared::cta.b64 done, [%0], %1;\n"
      "@!done bra WAIT_LOOP;\n"
      "}\n" ::"r"(bar),
      "r"(phase_parity)
      : "memory");
}

// Named barriers: ids 0 (__syncthreads) and the ones below; `count` threads (a multiple of 32) take part.
enum class NamedBarrier : uint32_t {
  kCta = 0,
  kConsumerWarpgroup0 = 1,  // + consumer warpgroup index (up to 3): epilogue staging within one warpgroup
  kProducer = 4,            // the producer warpgroup's row-offset buffers
  kMmaTurn0 = 5,            // + consumer warpgroup index (up to 3): that warpgroup's turn to issue its GEMMs
  kKeySplitMerge = 9,       // the key-split tile's consumer warpgroups merging their partial results
};

__device__ __forceinline__ void named_barrier_sync(uint32_t id, uint32_t count) {
  asm volatile("bar.sync %0, %1;\n" ::"r"(id), "r"(count) : "memory");
}

// Counts this thread's arrival without waiting (the other side of a turn-taking handshake).
__device__ __forceinline__ void named_barrier_arrive(uint32_t id, uint32_t count) {
  asm volatile("bar.arrive %0, %1;\n" ::"r"(id), "r"(count) : "memory");
}

}  // namespace flashseek::sm90
