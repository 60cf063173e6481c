// vLLM's merge_attn_states: two partial attention results over disjoint key sets, merged by their LSEs.
// Elementwise over (token, head) rows; no matrix work, so plain vectorised CUDA.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "fwd_params.h"

namespace flashseek::sm90 {

struct MergeParams {
  const void* prefix_out;
  const void* suffix_out;
  void* out;
  int64_t prefix_row_stride, prefix_head_stride;
  int64_t suffix_row_stride, suffix_head_stride;
  int64_t out_row_stride, out_head_stride;
  const float* prefix_lse;  // (H, T)
  const float* suffix_lse;
  float* out_lse;           // (H, T) or null
  int num_tokens;
  int num_heads;
  int head_dim;
  ScalarType dtype;
  bool programmatic;  // launched as the programmatic dependent of the stream's previous kernel (prims/pdl.h)
  bool load_first;    // both partial rows loaded beside the LSEs, before any store (append_kv.h; entry 54)
};

cudaError_t launch_merge_attn_states(const MergeParams& p, cudaStream_t stream);

}  // namespace flashseek::sm90
