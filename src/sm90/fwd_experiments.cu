// Launcher of the experiment variants (fwd_experiments.h) of the bf16 block_m-128 tiles of d128 and d64, and of the
// 192-row d64 tile (its persistent kernel). The d96 tile's are in fwd_experiments_d96.cu.
#include "fwd_experiment_launch.h"

namespace flashseek::sm90 {

// The default kernels of these tiles live in inst/ (the persistent launcher's fallback calls them): not here.
extern template cudaError_t launch_attention_fwd<FwdKernelTraits<__nv_bfloat16, 128, 128, 128>>(
    const FwdParams&, const KvTensorMaps&, int, int, cudaStream_t);
extern template cudaError_t launch_attention_fwd<FwdKernelTraits<__nv_bfloat16, 64, 64, 128>>(
    const FwdParams&, const KvTensorMaps&, int, int, cudaStream_t);
extern template cudaError_t launch_attention_fwd<FwdKernelTraits<__nv_bfloat16, 64, 64, 192>>(
    const FwdParams&, const KvTensorMaps&, int, int, cudaStream_t);

template cudaError_t launch_attention_fwd_experiment<FwdKernelTraits<__nv_bfloat16, 128, 128, 128>>(
    const FwdParams&, const KvTensorMaps&, int, int, cudaStream_t);
template cudaError_t launch_attention_fwd_experiment<FwdKernelTraits<__nv_bfloat16, 64, 64, 128>>(
    const FwdParams&, const KvTensorMaps&, int, int, cudaStream_t);
template cudaError_t launch_attention_fwd_experiment<FwdKernelTraits<__nv_bfloat16, 64, 64, 192>>(
    const FwdParams&, const KvTensorMaps&, int, int, cudaStream_t);

}  // namespace flashseek::sm90
