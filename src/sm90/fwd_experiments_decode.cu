// Launchers of the bf16 64-row decode tiles' persistent kernels (fwd_experiments.h ExperimentLoopFlagsDecode;
// decode-persist, entry 83): d128 and d64, the tile table's tile and its two-CTA variant (1 and 3).
#include "fwd_experiment_launch.h"

namespace flashseek::sm90 {

// The tiles' default kernels live in inst/ (the persistent launcher's fallback calls them): not here.
extern template cudaError_t launch_attention_fwd<FwdKernelTraits<__nv_bfloat16, 128, 128, 64>>(
    const FwdParams&, const KvTensorMaps&, int, int, cudaStream_t);
extern template cudaError_t launch_attention_fwd<FwdKernelTraits<__nv_bfloat16, 128, 128, 64, false, 1>>(
    const FwdParams&, const KvTensorMaps&, int, int, cudaStream_t);
extern template cudaError_t launch_attention_fwd<FwdKernelTraits<__nv_bfloat16, 64, 64, 64>>(
    const FwdParams&, const KvTensorMaps&, int, int, cudaStream_t);
extern template cudaError_t launch_attention_fwd<FwdKernelTraits<__nv_bfloat16, 64, 64, 64, false, 3>>(
    const FwdParams&, const KvTensorMaps&, int, int, cudaStream_t);

template cudaError_t launch_attention_fwd_experiment<FwdKernelTraits<__nv_bfloat16, 128, 128, 64>>(
    const FwdParams&, const KvTensorMaps&, int, int, cudaStream_t);
template cudaError_t launch_attention_fwd_experiment<FwdKernelTraits<__nv_bfloat16, 128, 128, 64, false, 1>>(
    const FwdParams&, const KvTensorMaps&, int, int, cudaStream_t);
template cudaError_t launch_attention_fwd_experiment<FwdKernelTraits<__nv_bfloat16, 64, 64, 64>>(
    const FwdParams&, const KvTensorMaps&, int, int, cudaStream_t);
template cudaError_t launch_attention_fwd_experiment<FwdKernelTraits<__nv_bfloat16, 64, 64, 64, false, 3>>(
    const FwdParams&, const KvTensorMaps&, int, int, cudaStream_t);

}  // namespace flashseek::sm90
