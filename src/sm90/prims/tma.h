// Tensor memory access (TMA, sm_90): bulk tensor copies global -> shared described by a tensor map, completed on
// an mbarrier by transaction bytes. The tensor map (CUtensorMap, 128 opaque bytes) is encoded on the host
// (src/host/tensor_map.h) and passed as a __grid_constant__ kernel parameter.
#pragma once

#include <cstdint>

#include "tma_descriptor.h"

namespace flashseek::sm90 {

__device__ __forceinline__ void prefetch_tensormap(const void* tmap) {
  asm volatile("prefetch.tensormap [%0];\n" ::"l"(reinterpret_cast<uint64_t>(tmap)) : "memory");
}

// Adds `bytes` to the transaction count the current phase of the barrier waits for.
__device__ __forceinline__ void mbarrier_expect_tx(uint32_t bar, uint32_t bytes) {
  asm volatile("mbarrier.expect_tx.relaxed.cta.shared::cta.b64 [%0], %1;\n" ::"r"(bar), "r"(bytes) : "memory");
}

// `count` arrivals in one operation (a barrier initialised for a warpgroup's arrivals, fed by one thread).
__device__ __forceinline__ void mbarrier_arrive_count(uint32_t bar, uint32_t count) {
  asm volatile(
      "{\n"
      ".reg .b64 state;\n"
      "mbarrier.arrive.shared::cta.b64 state, [%0], %1;\n"
      "}\n" ::"r"(bar),
      "r"(count)
      : "memory");
}

// One box of a 2D / 3D / 4D tensor map at element coordinates (c0 innermost) into shared memory at `dst` (aligned as
// the map's swizzle needs: 1024 bytes for the 128-byte swizzle); out-of-range elements are written as zeros.
// The barrier's phase completes once the box's bytes have landed (with its arrivals).
__device__ __forceinline__ void tma_load_2d(uint32_t dst, const void* tmap, int c0, int c1, uint32_t bar) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], "
      "[%4];\n" ::"r"(dst),
      "l"(reinterpret_cast<uint64_t>(tmap)), "r"(c0), "r"(c1), "r"(bar)
      : "memory");
}

__device__ __forceinline__ void tma_load_3d(uint32_t dst, const void* tmap, int c0, int c1, int c2, uint32_t bar) {
  asm volatile(
      "cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3, %4}], "
      "[%5];\n" ::"r"(dst),
      "l"(reinterpret_cast<uint64_t>(tmap)), "r"(c0), "r"(c1), "r"(c2), "r"(bar)
      : "memory");
}

__device__ __forceinline__ void tma_load_4d(uint32_t dst, const void* tmap, int c0, int c1, int c2, int c3,
                                            uint32_t bar) {
  asm volatile(
      "cp.async.bulk.tensor.4d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3, %4, "
      "%5}], [%6];\n" ::"r"(dst),
      "l"(reinterpret_cast<uint64_t>(tmap)), "r"(c0), "r"(c1), "r"(c2), "r"(c3), "r"(bar)
      : "memory");
}

}  // namespace flashseek::sm90
