// Float helpers whose NaN behaviour is part of the operator's contract.
#pragma once

namespace flashseek::sm90 {

// max that returns NaN when either input is NaN (fmaxf drops it). A NaN logit must poison its row, as in a
// naive softmax, instead of being skipped by the running max; the instruction costs the same as fmaxf's.
__device__ __forceinline__ float max_propagate_nan(float a, float b) {
  float y;
  asm("max.NaN.f32 %0, %1, %2;\n" : "=f"(y) : "f"(a), "f"(b));
  return y;
}

}  // namespace flashseek::sm90
