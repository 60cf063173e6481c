#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <type_traits>

#include "combine.h"
#include "kernel_traits.h"
#include "launch.h"

namespace flashseek::sm90 {

// Defined in fwd_kernel.h, instantiated once per tile in inst/.
template <class Traits>
cudaError_t launch_attention_fwd(const FwdParams& p, int num_m_blocks, int loop_flags, cudaStream_t stream);

namespace {

template <int kDv>
cudaError_t launch_combine(const FwdParams& p, int max_seqlen_q, cudaStream_t stream) {
  return p.out_type == ScalarType::kFloat16 ? launch_combine_splits<__half, kDv>(p, max_seqlen_q, stream)
                                            : launch_combine_splits<__nv_bfloat16, kDv>(p, max_seqlen_q, stream);
}

// The decode tile experiments (tile_table.h kDecodeVariantTiles): bf16 d128 block_m 64 only; any other call, or
// variant 0, runs the tile table's kernel (the planner only picks a variant where one is built).
template <class Element, bool kFp8Kv, int kD, int kDv>
cudaError_t launch_decode_tile(const FwdParams& p, int num_m_blocks, int experiment, int tile_variant,
                               cudaStream_t stream) {
  if constexpr (std::is_same_v<Element, __nv_bfloat16> && !kFp8Kv && kD == 128 && kDv == 128) {
    static_assert(kNumDecodeVariants == 2, "one case per variant");
    switch (tile_variant) {
      case 1: return launch_attention_fwd<FwdKernelTraits<Element, kD, kDv, 64, false, 1>>(p, num_m_blocks, experiment,
                                                                                          stream);
      case 2: return launch_attention_fwd<FwdKernelTraits<Element, kD, kDv, 64, false, 2>>(p, num_m_blocks, experiment,
                                                                                          stream);
      default: break;
    }
  }
  return launch_attention_fwd<FwdKernelTraits<Element, kD, kDv, 64, kFp8Kv>>(p, num_m_blocks, experiment, stream);
}

template <class Element, bool kFp8Kv, int kD, int kDv>
cudaError_t forward_then_combine(const FwdParams& p, int block_m, int num_m_blocks, int max_seqlen_q,
                                 int experiment, int tile_variant, cudaStream_t stream) {
  const cudaError_t status =
      block_m == 64 ? launch_decode_tile<Element, kFp8Kv, kD, kDv>(p, num_m_blocks, experiment, tile_variant, stream)
                    : launch_attention_fwd<FwdKernelTraits<Element, kD, kDv, 128, kFp8Kv>>(p, num_m_blocks, experiment,
                                                                                           stream);
  if (status != cudaSuccess || p.num_splits <= 1) return status;
  return launch_combine<kDv>(p, max_seqlen_q, stream);
}

template <class Element, bool kFp8Kv>
cudaError_t dispatch_head_dims(int d, int dv, int block_m, const FwdParams& p, int num_m_blocks, int max_seqlen_q,
                               int experiment, int tile_variant, cudaStream_t stream) {
  if (block_m != 64 && block_m != 128) return cudaErrorInvalidValue;
  if (d == 64 && dv == 64) {
    return forward_then_combine<Element, kFp8Kv, 64, 64>(p, block_m, num_m_blocks, max_seqlen_q, experiment,
                                                         tile_variant, stream);
  }
  if (d == 128 && dv == 128) {
    return forward_then_combine<Element, kFp8Kv, 128, 128>(p, block_m, num_m_blocks, max_seqlen_q, experiment,
                                                           tile_variant, stream);
  }
  if (d == 192 && dv == 128) {
    return forward_then_combine<Element, kFp8Kv, 192, 128>(p, block_m, num_m_blocks, max_seqlen_q, experiment,
                                                           tile_variant, stream);
  }
  if (d == 192 && dv == 192) {
    return forward_then_combine<Element, kFp8Kv, 192, 192>(p, block_m, num_m_blocks, max_seqlen_q, experiment,
                                                           tile_variant, stream);
  }
  if (d == 256 && dv == 256) {
    return forward_then_combine<Element, kFp8Kv, 256, 256>(p, block_m, num_m_blocks, max_seqlen_q, experiment,
                                                           tile_variant, stream);
  }
  return cudaErrorInvalidValue;
}

template <class Element>
cudaError_t dispatch_kv(bool fp8_kv, int d, int dv, int block_m, const FwdParams& p, int num_m_blocks,
                        int max_seqlen_q, int experiment, int tile_variant, cudaStream_t stream) {
  return fp8_kv ? dispatch_head_dims<Element, true>(d, dv, block_m, p, num_m_blocks, max_seqlen_q, experiment,
                                                    tile_variant, stream)
                : dispatch_head_dims<Element, false>(d, dv, block_m, p, num_m_blocks, max_seqlen_q, experiment,
                                                     tile_variant, stream);
}

}  // namespace

cudaError_t launch_forward(ScalarType compute, bool fp8_kv, int head_dim_padded, int head_dim_v_padded, int block_m,
                           const FwdParams& p, int num_m_blocks, int max_seqlen_q, cudaStream_t stream,
                           int experiment, int tile_variant) {
  if (compute == ScalarType::kFloat16) {
    return dispatch_kv<__half>(fp8_kv, head_dim_padded, head_dim_v_padded, block_m, p, num_m_blocks, max_seqlen_q,
                               experiment, tile_variant, stream);
  }
  return dispatch_kv<__nv_bfloat16>(fp8_kv, head_dim_padded, head_dim_v_padded, block_m, p, num_m_blocks,
                                    max_seqlen_q, experiment, tile_variant, stream);
}

}  // namespace flashseek::sm90
