// The launcher of a tile's experiment variants (fwd_experiments.h): the listed value's kernel, one-tile or
// persistent. Included by the translation units that instantiate it (fwd_experiments*.cu),
// each for its own tiles, so that the build compiles them in parallel.
#pragma once

#include "fwd_experiments.h"
#include "fwd_kernel.h"
#include "fwd_persistent.h"

namespace flashseek::sm90 {

namespace experiment_launch {

template <class Traits, int... kValues>
cudaError_t dispatch(LoopFlagList<kValues...>, const FwdParams& p, const KvTensorMaps& maps, int num_m_blocks,
                     int loop_flags, cudaStream_t stream) {
  cudaError_t result = cudaErrorInvalidValue;
  ((loop_flags == kValues ? (result = launch_attention_fwd_variant<Traits, kValues>(p, maps, num_m_blocks, stream), 0)
                          : 0),
   ...);
  return result;
}

}  // namespace experiment_launch

template <class Traits>
cudaError_t launch_attention_fwd_experiment(const FwdParams& p, const KvTensorMaps& maps, int num_m_blocks,
                                            int loop_flags, cudaStream_t stream) {
  return experiment_launch::dispatch<Traits>(TileLoopFlagList<Traits::kD, Traits::kBlockM>{}, p, maps, num_m_blocks,
                                            loop_flags, stream);
}

}  // namespace flashseek::sm90
