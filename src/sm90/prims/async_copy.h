// 16-byte asynchronous global->shared copies (cp.async) whose completion is tracked by an mbarrier.
// Used for every gathered operand (paged or strided K/V rows, packed GQA query rows): a bulk tensor copy needs
// one tensor map per layout and cannot zero-fill rows past a sequence's end, which is what keeps NaN in unused
// cache slots out of the output.
#pragma once

#include <cstdint>

namespace flashseek::sm90 {

__device__ __forceinline__ uint32_t smem_addr(const void* ptr) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(ptr));
}

// Copies 16 bytes, or writes 16 zero bytes when `valid` is false (src-size 0: no global read happens, so `src`
// only has to be some mapped address).
__device__ __forceinline__ void cp_async_16_zfill(uint32_t dst_smem, const void* src, bool valid) {
  const uint32_t src_size = valid ? 16u : 0u;
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst_smem), "l"(src), "r"(src_size)
               : "memory");
}

// Copies 8 bytes (8 e4m3 values), or writes 8 zero bytes when `valid` is false. fp8 rows are only 8-byte
// aligned when d is not a multiple of 16 (d 40, 72); `.ca` because `.cg` takes 16-byte copies only.
__device__ __forceinline__ void cp_async_8_zfill(uint32_t dst_smem, const void* src, bool valid) {
  const uint32_t src_size = valid ? 8u : 0u;
  asm volatile("cp.async.ca.shared.global [%0], [%1], 8, %2;\n" ::"r"(dst_smem), "l"(src), "r"(src_size)
               : "memory");
}

// Closes this thread's group of cp.async issued since the previous commit.
__device__ __forceinline__ void cp_async_commit_group() { asm volatile("cp.async.commit_group;\n" ::: "memory"); }

// Waits until at most `kPending` of this thread's committed cp.async groups are still in flight (only the
// issuing thread's copies: other threads' need a barrier too).
template <int kPending>
__device__ __forceinline__ void cp_async_wait_group() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(kPending) : "memory");
}

// Makes the mbarrier at `bar_smem` receive one arrival from this thread once all cp.async it issued before
// have landed. `.noinc`: the barrier's expected count already includes these arrivals.
__device__ __forceinline__ void cp_async_arrive_on(uint32_t bar_smem) {
  asm volatile("cp.async.mbarrier.arrive.noinc.shared::cta.b64 [%0];\n" ::"r"(bar_smem) : "memory");
}

}  // namespace flashseek::sm90
