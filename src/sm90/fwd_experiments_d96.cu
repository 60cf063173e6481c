// Launcher of the 128-row bf16 d96 tile's experiment variant (fwd_experiments.h ExperimentLoopFlagsD96: its
// persistent kernel, entry 68).
#include "fwd_experiment_launch.h"

namespace flashseek::sm90 {

// The tile's default kernel lives in inst/ (the persistent launcher's fallback calls it): not here.
extern template cudaError_t launch_attention_fwd<FwdKernelTraits<__nv_bfloat16, 96, 96, 128>>(
    const FwdParams&, const KvTensorMaps&, int, int, cudaStream_t);

template cudaError_t launch_attention_fwd_experiment<FwdKernelTraits<__nv_bfloat16, 96, 96, 128>>(
    const FwdParams&, const KvTensorMaps&, int, int, cudaStream_t);

}  // namespace flashseek::sm90
