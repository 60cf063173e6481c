// Launcher of the experiment variants (fwd_experiments.h) of the bf16 d128 block_m-128 tile.
#include "fwd_experiments.h"
#include "fwd_kernel.h"
#include "fwd_persistent.h"

namespace flashseek::sm90 {
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
  return dispatch<Traits>(ExperimentLoopFlags{}, p, maps, num_m_blocks, loop_flags, stream);
}

template cudaError_t launch_attention_fwd_experiment<FwdKernelTraits<__nv_bfloat16, 128, 128, 128>>(
    const FwdParams&, const KvTensorMaps&, int, int, cudaStream_t);

}  // namespace flashseek::sm90
