// Merging the KV splits of one call: out = sum_s w_s O_s / sum_s w_s with w_s = exp(lse_s - max lse), in fp32,
// plus the sink logit (counted once, here, never in the partials). One warp per (token, query head) row.
#pragma once

#include <cuda_runtime.h>

#include <cmath>

#include "fwd_params.h"

namespace flashseek::sm90 {

template <class Element, int kDvPadded>
cudaError_t launch_combine_splits(const FwdParams& p, int max_seqlen_q, cudaStream_t stream);

}  // namespace flashseek::sm90
