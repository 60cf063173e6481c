// The bf16 MLA decode kernel (one instantiation per file: the two dtypes compile in parallel).
#include "kernel.h"

namespace flashseek::sm90::mla {
template cudaError_t launch_mla_decode<__nv_bfloat16>(const FwdParams&, int, cudaStream_t);
}  // namespace flashseek::sm90::mla
