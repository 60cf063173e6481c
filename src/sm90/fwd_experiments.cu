// Launcher of the experiment variants (fwd_experiments.h) of the bf16 block_m-128 tiles of d128 and d64, and of the
// 192-row d64 tile (its persistent kernel).
#include "fwd_experiments.h"
#include "fwd_kernel.h"
#include "fwd_persistent.h"

namespace flashseek::sm90 {

// The default kernels of these tiles live in inst/ (the persistent launcher's fallback calls them): not here.
extern template cudaError_t launch_attention_fwd<FwdKernelTraits<__nv_bfloat16, 128, 128, 128>>(
    const FwdParams&, const KvTensorMaps&, int, int, cudaStream_t);
extern template cudaError_t launch_attention_fwd<FwdKernelTraits<__nv_bfloat16, 64, 64, 128>>(
    const FwdParams&, const KvTensorMaps&, int, int, cudaStream_t);
extern template cudaError_t launch_attention_fwd<FwdKernelTraits<__nv_bfloat16, 64, 64, 192>>(
    const FwdParams&, const KvTensorMaps&, int, int, cudaStream_t);

namespace {

template <class Traits, int... kValues>
cudaError_t dispatch(LoopFlagList<kValues...>, const FwdParams& p, const KvTensorMaps& maps, int num_m_blocks,
                     int loop_flags, cudaStream_t stream) {
  cudaError_t result = cudaErrorInvalidValue;
  ((loop_flags == kValues ? (result = launch_attention_fwd_variant<Traits, kValues>(p, maps, num_m_blocks, stream), 0)
                          : 0),
   ...);
  return result;
}

}  // namespace

template <class Traits>
cudaError_t launch_attention_fwd_experiment(const FwdParams& p, const KvTensorMaps& maps, int num_m_blocks,
                                            int loop_flags, cudaStream_t stream) {
  if constexpr (Traits::kD == 64 && Traits::kBlockM == 192) {
    return dispatch<Traits>(ExperimentLoopFlagsD64M192{}, p, maps, num_m_blocks, loop_flags, stream);
  } else if constexpr (Traits::kD == 64) {
    return dispatch<Traits>(ExperimentLoopFlagsD64{}, p, maps, num_m_blocks, loop_flags, stream);
  } else {
    return dispatch<Traits>(ExperimentLoopFlags{}, p, maps, num_m_blocks, loop_flags, stream);
  }
}

template cudaError_t launch_attention_fwd_experiment<FwdKernelTraits<__nv_bfloat16, 128, 128, 128>>(
    const FwdParams&, const KvTensorMaps&, int, int, cudaStream_t);
template cudaError_t launch_attention_fwd_experiment<FwdKernelTraits<__nv_bfloat16, 64, 64, 128>>(
    const FwdParams&, const KvTensorMaps&, int, int, cudaStream_t);
template cudaError_t launch_attention_fwd_experiment<FwdKernelTraits<__nv_bfloat16, 64, 64, 192>>(
    const FwdParams&, const KvTensorMaps&, int, int, cudaStream_t);

}  // namespace flashseek::sm90
