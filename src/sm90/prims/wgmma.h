// Warpgroup matrix multiply-accumulate (wgmma, sm_90a): shared-memory descriptors, ordering, and the shapes
// the kernels use (generated into wgmma_ops.inc).
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>

#include <cstdint>

namespace flashseek::sm90 {

// Shared-memory matrix descriptor for the 128-byte swizzle (the only swizzle the tiles use: rows of 64 16-bit
// elements, 8-row atoms of 1024 bytes, tile base 1024-byte aligned).
//   K-major operand (Q, K): leading offset unused (1), stride offset = 1024 (next 8 rows).
//   MN-major operand (V as B of P*V): leading offset = bytes between 64-column blocks, stride offset = 1024
//   (next 8 rows along K).
__device__ __forceinline__ uint64_t make_smem_desc_sw128(uint32_t smem_byte_addr, uint32_t leading_bytes,
                                                          uint32_t stride_bytes) {
  uint64_t desc = 0;
  desc |= static_cast<uint64_t>((smem_byte_addr >> 4) & 0x3FFF);
  desc |= static_cast<uint64_t>((leading_bytes >> 4) & 0x3FFF) << 16;
  desc |= static_cast<uint64_t>((stride_bytes >> 4) & 0x3FFF) << 32;
  desc |= static_cast<uint64_t>(1) << 62;  // layout type 1: 128-byte swizzle
  return desc;
}

// The same for the 64-byte swizzle (e4m3 rows of 64 values, d64 native tiles, not yet used by a kernel): 8-row
// atoms of 512 bytes, tile base 512-byte aligned; K-major: leading offset unused (1), stride offset = 512.
__device__ __forceinline__ uint64_t make_smem_desc_sw64(uint32_t smem_byte_addr, uint32_t leading_bytes,
                                                         uint32_t stride_bytes) {
  uint64_t desc = 0;
  desc |= static_cast<uint64_t>((smem_byte_addr >> 4) & 0x3FFF);
  desc |= static_cast<uint64_t>((leading_bytes >> 4) & 0x3FFF) << 16;
  desc |= static_cast<uint64_t>((stride_bytes >> 4) & 0x3FFF) << 32;
  desc |= static_cast<uint64_t>(2) << 62;  // layout type 2: 64-byte swizzle
  return desc;
}

// Makes shared memory written through the generic proxy (cp.async, st.shared) visible to the async proxy that
// wgmma reads it through. Issued by the reading threads after they observed the writes (barrier wait).
__device__ __forceinline__ void fence_proxy_async_shared() {
  asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
}

// Orders this warpgroup's register writes before the wgmma instructions that read them.
__device__ __forceinline__ void wgmma_fence() { asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory"); }

__device__ __forceinline__ void wgmma_commit_group() {
  asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
}

// Waits until at most `kPending` committed wgmma groups of this warpgroup are still running.
template <int kPending>
__device__ __forceinline__ void wgmma_wait_group() {
  asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(kPending) : "memory");
}

// Keeps the compiler from moving reads or writes of an accumulator or operand register across a wgmma
// issue or wait: the hardware reads and writes them asynchronously, which the compiler cannot see.
__device__ __forceinline__ void fence_operand(float& reg) { asm volatile("" : "+f"(reg)::"memory"); }
__device__ __forceinline__ void fence_operand(uint32_t& reg) { asm volatile("" : "+r"(reg)::"memory"); }

template <int kCount>
__device__ __forceinline__ void fence_operands(float (&regs)[kCount]) {
#pragma unroll
  for (int i = 0; i < kCount; ++i) fence_operand(regs[i]);
}
template <int kCount>
__device__ __forceinline__ void fence_operands(uint32_t (&regs)[kCount]) {
#pragma unroll
  for (int i = 0; i < kCount; ++i) fence_operand(regs[i]);
}

template <class Element, int kN>
struct WgmmaSS;
template <class Element, int kN>
struct WgmmaRS;
// A MN-major (transposed), B K-major: the keys-as-M decode tiles' O^T += V^T P^T (consumer_keys_as_m.h).
template <class Element, int kN>
struct WgmmaSSTransA;

#include "wgmma_ops.inc"

// setmaxnreg: moves registers between warpgroups (producer gives, consumers take). Takes effect only with a
// register cap at kernel entry (__launch_bounds__(threads, 1)).
template <int kRegs>
__device__ __forceinline__ void warpgroup_reg_alloc() {
  asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(kRegs));
}
template <int kRegs>
__device__ __forceinline__ void warpgroup_reg_dealloc() {
  asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" ::"n"(kRegs));
}

}  // namespace flashseek::sm90
