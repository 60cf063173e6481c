// Thread-block clusters (sm_90): the CTAs of a cluster run at once on one GPC and read each other's shared memory
// (distributed shared memory). Only the split combine of the keys-as-M decode tiles uses them (cluster-combine,
// docs/perf-log.md entry 120).
#pragma once

#include <cstdint>

namespace flashseek::sm90 {

// This CTA's index in its cluster.
__device__ __forceinline__ uint32_t cluster_cta_rank() {
  uint32_t rank;
  asm volatile("mov.u32 %0, %%cluster_ctarank;\n" : "=r"(rank));
  return rank;
}

// Every thread of every CTA of the cluster: its shared-memory writes before the barrier are visible to the reads
// of any thread of the cluster after it (release / acquire). The non-.aligned forms: threads of a warp may come
// from different branches.
__device__ __forceinline__ void cluster_sync() {
  asm volatile("barrier.cluster.arrive.release;\n" ::: "memory");
  asm volatile("barrier.cluster.wait.acquire;\n" ::: "memory");
}

// The address in CTA `rank`'s shared memory of the shared address `addr` in this CTA's layout.
__device__ __forceinline__ uint32_t cluster_map(uint32_t addr, uint32_t rank) {
  uint32_t mapped;
  asm volatile("mapa.shared::cluster.u32 %0, %1, %2;\n" : "=r"(mapped) : "r"(addr), "r"(rank));
  return mapped;
}

__device__ __forceinline__ float ld_cluster_f32(uint32_t addr) {
  float value;
  asm volatile("ld.shared::cluster.f32 %0, [%1];\n" : "=f"(value) : "r"(addr) : "memory");
  return value;
}

}  // namespace flashseek::sm90
