// Diagnostic: the persistent kernel's tile-slot handoff (sm90/fwd_persistent.h publish / read_tile) alone, under
// compute-sanitizer racecheck. One CTA of 512 threads walks `tiles` tiles from a global counter; the fetching
// thread (64) publishes each tile index in one of two shared slots guarded by full / empty mbarriers.
//   mode 0: every lane reads the slot, __syncwarp, lane 0 arrives on the empty barrier (count: warps)
//   mode 1: lane 0 reads the slot, __syncwarp, lane 0 arrives, the warp takes the value by shuffle (count: warps;
//           the kernel's form since perf-log entry 100)
//   mode 2: every lane reads the slot and arrives (count: threads)
// Build: nvcc -O3 -gencode=arch=compute_90a,code=sm_90a -I src scripts/diag/racecheck_tile_slots.cu -o rc_slots
// Run:   compute-sanitizer --tool racecheck ./rc_slots MODE
#include <cstdio>
#include <cstdlib>

#include "sm90/prims/mbarrier.h"

using namespace flashseek::sm90;

__device__ int g_counter;

__global__ void __launch_bounds__(512) slots_kernel(int mode, int tiles, int* seen) {
  __shared__ __align__(16) unsigned long long bars[4];  // full[2], empty[2]
  __shared__ int slots[2];
  const uint32_t full = static_cast<uint32_t>(__cvta_generic_to_shared(&bars[0]));
  const uint32_t empty = full + 16;
  const uint32_t slot_base = static_cast<uint32_t>(__cvta_generic_to_shared(&slots[0]));
  const int lane = threadIdx.x % 32;
  const int warps = blockDim.x / 32;
  if (threadIdx.x == 0) {
    for (int s = 0; s < 2; ++s) {
      mbarrier_init(full + 8 * s, 1);
      mbarrier_init(empty + 8 * s, mode == 2 ? blockDim.x : warps);
    }
    mbarrier_init_fence();
  }
  __syncthreads();
  auto publish = [&](int k) {
    const int s = k & 1;
    mbarrier_wait(empty + 8 * s, ((k >> 1) & 1) ^ 1);
    const int t = k == 0 ? 0 : 1 + atomicAdd(&g_counter, 1);
    asm volatile("st.shared.b32 [%0], %1;\n" ::"r"(slot_base + 4 * s), "r"(t) : "memory");
    mbarrier_arrive(full + 8 * s);
  };
  auto read_tile = [&](int k) {
    const int s = k & 1;
    mbarrier_wait(full + 8 * s, (k >> 1) & 1);
    int t = 0;
    if (mode == 1) {
      if (lane == 0) asm volatile("ld.shared.b32 %0, [%1];\n" : "=r"(t) : "r"(slot_base + 4 * s) : "memory");
      __syncwarp();
      if (lane == 0) mbarrier_arrive(empty + 8 * s);
    } else {
      asm volatile("ld.shared.b32 %0, [%1];\n" : "=r"(t) : "r"(slot_base + 4 * s) : "memory");
      if (mode == 2) {
        mbarrier_arrive(empty + 8 * s);
      } else {
        __syncwarp();
        if (lane == 0) mbarrier_arrive(empty + 8 * s);
      }
    }
    return __shfl_sync(0xffffffffu, t, 0);
  };
  if (threadIdx.x == 64) publish(0);
  for (int k = 0;; ++k) {
    const int t = read_tile(k);
    if (t >= tiles) break;
    // Uneven work per warp and tile, so that warps drift apart as the kernel's roles do.
    const long long until = clock64() + 200 * ((threadIdx.x / 32 + t) % 7);
    while (clock64() < until) {
    }
    if (lane == 0) atomicAdd(&seen[t], 1);
    if (threadIdx.x == 64) publish(k + 1);
  }
}

int main(int argc, char** argv) {
  const int mode = argc > 1 ? atoi(argv[1]) : 0;
  const int tiles = 64;
  int* seen;
  cudaMalloc(&seen, tiles * sizeof(int));
  cudaMemset(seen, 0, tiles * sizeof(int));
  slots_kernel<<<1, 512>>>(mode, tiles, seen);
  int host[64];
  cudaMemcpy(host, seen, sizeof(host), cudaMemcpyDeviceToHost);
  int bad = 0;
  for (int i = 0; i < tiles; ++i) bad += host[i] != 16;
  printf("mode %d: %s (%d tiles seen by all 16 warps of %d)\n", mode, bad ? "WRONG" : "ok", tiles - bad, tiles);
  return bad != 0;
}
