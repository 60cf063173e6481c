// Host entry of the MLA decode kernel: picks the dtype's instantiation, then combines the splits (dv 512).
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "../combine.h"
#include "../launch.h"

namespace flashseek::sm90 {
namespace mla {
// Defined in kernel.h, instantiated in inst_bf16.cu and inst_fp16.cu.
template <class Element>
cudaError_t launch_mla_decode(const FwdParams& p, int num_m_blocks, cudaStream_t stream);
}  // namespace mla

namespace {
template <class Element>
cudaError_t decode_then_combine(const FwdParams& p, int num_m_blocks, int max_seqlen_q, cudaStream_t stream) {
  const cudaError_t status = mla::launch_mla_decode<Element>(p, num_m_blocks, stream);
  if (status != cudaSuccess || p.num_splits <= 1) return status;
  return launch_combine_splits<Element, 512>(p, max_seqlen_q, stream);
}
}  // namespace

cudaError_t launch_mla_decode(ScalarType dtype, const FwdParams& p, int num_m_blocks, int max_seqlen_q,
                              cudaStream_t stream) {
  if (dtype == ScalarType::kFloat16) return decode_then_combine<__half>(p, num_m_blocks, max_seqlen_q, stream);
  return decode_then_combine<__nv_bfloat16>(p, num_m_blocks, max_seqlen_q, stream);
}

}  // namespace flashseek::sm90
