// The attention sink of a query head (FwdParams::s_aux, in whichever dtype the caller gave), read by the epilogue
// of an unsplit tile and by both split combines.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "fwd_params.h"

namespace flashseek::sm90 {

__device__ __forceinline__ float sink_logit(const FwdParams& p, int head) {
  switch (p.s_aux_type) {
    case ScalarType::kBFloat16: return __bfloat162float(static_cast<const __nv_bfloat16*>(p.s_aux)[head]);
    case ScalarType::kFloat16: return __half2float(static_cast<const __half*>(p.s_aux)[head]);
    default: return static_cast<const float*>(p.s_aux)[head];
  }
}

}  // namespace flashseek::sm90
