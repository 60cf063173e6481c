// 16-byte shared-memory loads and global stores, one instruction each: the epilogues' staged-output copies.
#pragma once

#include <cstdint>

namespace flashseek::sm90 {

__device__ __forceinline__ uint4 ld_shared_16(uint32_t src_smem) {
  uint4 v;
  asm volatile("ld.shared.v4.b32 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
               : "r"(src_smem));
  return v;
}

// One 16-byte store. Assigning a uint4 through a cast pointer leaves the width to the compiler, and in the
// epilogue's unrolled store loop it emitted four 4-byte stores (st.global.u32; perf-log entry 97): four times the
// store instructions and L1 requests for the same bytes. `dst` must be 16-byte aligned global memory (validate()
// requires 16-byte aligned rows and strides of out).
__device__ __forceinline__ void st_global_16(void* dst, const uint4& v) {
  asm volatile("st.global.v4.b32 [%0], {%1, %2, %3, %4};\n" ::"l"(dst), "r"(v.x), "r"(v.y), "r"(v.z), "r"(v.w)
               : "memory");
}

}  // namespace flashseek::sm90
