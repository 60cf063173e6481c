// Launcher of the 128-row bf16 d192 / 128 tile's persistent kernel (fwd_experiments.h ExperimentLoopFlagsD192; the
// MLA prefills, entries 82 and 85: O stored from registers), beside the other loop variants.
#include "fwd_experiment_launch.h"

namespace flashseek::sm90 {

// The tile's default kernel lives in inst/ (the persistent launcher's fallback calls it): not here.
extern template cudaError_t launch_attention_fwd<FwdKernelTraits<__nv_bfloat16, 192, 128, 128>>(
    const FwdParams&, const KvTensorMaps&, int, int, cudaStream_t);

template cudaError_t launch_attention_fwd_experiment<FwdKernelTraits<__nv_bfloat16, 192, 128, 128>>(
    const FwdParams&, const KvTensorMaps&, int, int, cudaStream_t);

}  // namespace flashseek::sm90
