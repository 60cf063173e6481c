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

// Makes the mbarrier at `bar_smem` receive one arrival from this thread once all cp.async it issued before
// have landed. `.noinc`: the barrier's expected count already includes these arrivals.
__device__ __forceinline__ void cp_async_arrive_on(uint32_t bar_smem) {
  asm volatile("cp.async.mbarrier.arrive.noinc.shared::cta.b64 [%0];\n" ::"r"(bar_smem) : "memory");
}

}  // namespace flashseek::sm90
