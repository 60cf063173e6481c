// Packing two fp32 values into the 16-bit pair layout the tensor cores read (lower column in the low half), and
// the exact widening of e4m3 (fp8) values into that layout.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>

namespace flashseek::sm90 {

template <class Element>
__device__ __forceinline__ uint32_t pack2(float lo, float hi);

template <>
__device__ __forceinline__ uint32_t pack2<__nv_bfloat16>(float lo, float hi) {
  __nv_bfloat162 v = __floats2bfloat162_rn(lo, hi);
  return *reinterpret_cast<uint32_t*>(&v);
}

template <>
__device__ __forceinline__ uint32_t pack2<__half>(float lo, float hi) {
  __half2 v = __floats2half2_rn(lo, hi);
  return *reinterpret_cast<uint32_t*>(&v);
}

// Four e4m3 values (one 32-bit word, lowest byte first) to four 16-bit values as two pairs (lo: bytes 0, 1).
// Exact: every e4m3 value (subnormals included, 2^-9 .. 448) is a normal fp16 number, and NaN stays NaN.
// fp16 needs one cvt per pair; bf16 goes through fp32 (fp16 -> fp32 -> bf16 is exact for these values).
template <class Element>
__device__ __forceinline__ void e4m3x4_to(uint32_t in, uint32_t& lo, uint32_t& hi);

template <>
__device__ __forceinline__ void e4m3x4_to<__half>(uint32_t in, uint32_t& lo, uint32_t& hi) {
  asm("{\n"
      ".reg .b16 a, b;\n"
      "mov.b32 {a, b}, %2;\n"
      "cvt.rn.f16x2.e4m3x2 %0, a;\n"
      "cvt.rn.f16x2.e4m3x2 %1, b;\n"
      "}\n"
      : "=r"(lo), "=r"(hi)
      : "r"(in));
}

template <>
__device__ __forceinline__ void e4m3x4_to<__nv_bfloat16>(uint32_t in, uint32_t& lo, uint32_t& hi) {
  uint32_t h0, h1;
  e4m3x4_to<__half>(in, h0, h1);
  const float2 f0 = __half22float2(*reinterpret_cast<const __half2*>(&h0));
  const float2 f1 = __half22float2(*reinterpret_cast<const __half2*>(&h1));
  lo = pack2<__nv_bfloat16>(f0.x, f0.y);
  hi = pack2<__nv_bfloat16>(f1.x, f1.y);
}

}  // namespace flashseek::sm90
