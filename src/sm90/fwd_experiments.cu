// Launcher of the experiment variants (fwd_experiments.h) of the bf16 d128 block_m-128 tile. The TMA variants
// encode the K/V tensor maps here, per launch, from the parameter block (host cost ~1-2 us, outside the
// kernel's device time); where TMA cannot describe K/V (paged or batched cache, unaligned strides) they fall
// back to the same variant without kLoopTmaKv (and without kLoopTmaNoFence / kLoopBlockN160, which need it: the
// default 128 x 128 tile) and say so once on stderr.
#include <cstdio>
#include <cstring>
#include <type_traits>

#include "../host/tensor_map.h"
#include "fwd_experiments.h"
#include "fwd_kernel.h"

namespace flashseek::sm90 {
namespace {

template <class Traits, int kFlags>
cudaError_t launch_tma_variant(const FwdParams& p, int num_m_blocks, cudaStream_t stream, bool& fell_back) {
  KvTensorMaps maps;
  std::string why;
  if (p.kv_layout != KVLayout::kVarlen) {
    why = "K/V not dense varlen";
  } else {
    why = encode_rows_tensor_map(reinterpret_cast<CUtensorMap*>(&maps.k), p.k, p.head_dim, p.num_heads_kv,
                                 p.total_k, p.k_head_stride, p.k_row_stride, Traits::kBlockN);
    if (why.empty()) {
      why = encode_rows_tensor_map(reinterpret_cast<CUtensorMap*>(&maps.v), p.v, p.head_dim_v, p.num_heads_kv,
                                   p.total_k, p.v_head_stride, p.v_row_stride, Traits::kBlockN);
    }
  }
  if (!why.empty()) {
    static bool warned = false;
    if (!warned) std::fprintf(stderr, "flashseek: TMA producer not used (%s); running without it\n", why.c_str());
    warned = true;
    fell_back = true;
    return cudaSuccess;
  }
  auto kernel = attention_fwd_tma_kernel<Traits, kFlags>;
  static const cudaError_t attr_status =
      cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, Traits::kSmemBytes);
  if (attr_status != cudaSuccess) return attr_status;
  const dim3 grid(num_m_blocks, p.num_heads_kv * p.num_splits, p.flat_tiles ? 1 : p.batch);
  kernel<<<grid, Traits::kThreads, Traits::kSmemBytes, stream>>>(p, maps);
  return cudaGetLastError();
}

// The block_n 160 tile (kLoopBlockN160): its own traits; the kernel's tile comes from them, the rest of the launch
// (grid over block_m 128 rows) is the same.
template <class Traits>
using Bn160Traits = FwdKernelTraits<typename Traits::Element, Traits::kD, Traits::kDv, Traits::kBlockM, false,
                                    kPrefillBn160Variant>;

template <class Traits, int kFlags>
cudaError_t launch_one(const FwdParams& p, int num_m_blocks, cudaStream_t stream) {
  if constexpr ((kFlags & kLoopTmaKv) != 0) {
    using TileTraits = std::conditional_t<(kFlags & kLoopBlockN160) != 0, Bn160Traits<Traits>, Traits>;
    bool fell_back = false;
    const cudaError_t r = launch_tma_variant<TileTraits, kFlags>(p, num_m_blocks, stream, fell_back);
    if (!fell_back) return r;
    // Without TMA: the default tile, and no bit that needs the TMA producer (the fallback value is listed).
    return launch_attention_fwd<Traits>(p, num_m_blocks, kFlags & ~(kLoopTmaKv | kLoopTmaNoFence | kLoopBlockN160),
                                        stream);
  } else {
    static_assert((kFlags & (kLoopTmaNoFence | kLoopBlockN160)) == 0, "these bits need kLoopTmaKv");
    return launch_attention_fwd_variant<Traits, kFlags>(p, num_m_blocks, stream);
  }
}

template <class Traits, int... kValues>
cudaError_t dispatch(LoopFlagList<kValues...>, const FwdParams& p, int num_m_blocks, int loop_flags,
                     cudaStream_t stream) {
  cudaError_t result = cudaErrorInvalidValue;
  ((loop_flags == kValues ? (result = launch_one<Traits, kValues>(p, num_m_blocks, stream), 0) : 0), ...);
  return result;
}

}  // namespace

template <class Traits>
cudaError_t launch_attention_fwd_experiment(const FwdParams& p, int num_m_blocks, int loop_flags,
                                            cudaStream_t stream) {
  return dispatch<Traits>(ExperimentLoopFlags{}, p, num_m_blocks, loop_flags, stream);
}

template cudaError_t launch_attention_fwd_experiment<FwdKernelTraits<__nv_bfloat16, 128, 128, 128>>(
    const FwdParams&, int, int, cudaStream_t);

}  // namespace flashseek::sm90
