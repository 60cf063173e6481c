// The MLA decode kernel: one CTA per (64 packed query rows, KV head, KV split, sequence). Warpgroup 0 produces,
// 1 (Scores) and 2 (Values) consume; see consumer.h. Rows are GQA-packed (token, query head): with one KV head
// and 16 or 128 query heads a decode step fills 16 rows or two whole tiles.
#pragma once

#include <cuda_runtime.h>

#include "../fwd_params.h"
#include "../mask.h"
#include "../per_device_setup.h"
#include "../prims/mbarrier.h"
#include "../prims/wgmma.h"
#include "../seqlen.h"
#include "consumer.h"
#include "producer.h"
#include "traits.h"

namespace flashseek::sm90::mla {

template <class Traits>
__global__ void __launch_bounds__(Traits::kThreads, 1) mla_decode_kernel(const __grid_constant__ FwdParams p) {
  extern __shared__ __align__(1024) uint8_t smem[];

  const int m_block = blockIdx.x;
  const int kv_head = blockIdx.y % p.num_heads_kv;
  const int split = blockIdx.y / p.num_heads_kv;
  const int b = blockIdx.z;

  const SequenceInfo seq = SequenceInfo::load(p, b);
  const int row_begin = m_block * Traits::kBlockM;
  if (row_begin >= seq.seqlen_q * p.qheads_per_kvhead) return;  // the grid is sized by max_seqlen_q

  const int seqlen_k_total = p.cp_tot_seqused_k != nullptr ? max(0, p.cp_tot_seqused_k[b]) : -1;
  const AttentionMask mask =
      AttentionMask::make(p, seq.seqlen_q, seq.seqlen_k, row_begin, Traits::kBlockM, seqlen_k_total);
  int n_begin, n_end;
  mask.block_range(Traits::kBlockN, n_begin, n_end);
  AttentionMask::split_block_range(p.num_splits, split, n_begin, n_end);

  const uint32_t base = smem_addr(smem);
  if (threadIdx.x == 0) {
    if ((base & 1023) != 0) __trap();  // the swizzled tiles need a 1024-byte aligned base
    mbarrier_init(base + Traits::q_full_barrier(), 128);
    for (int s = 0; s < Traits::kStages; ++s) {
      mbarrier_init(base + Traits::full_barrier(s), 128);
      mbarrier_init(base + Traits::empty_barrier(s), 8);  // lane 0 of each consumer warp
    }
    mbarrier_init(base + Traits::p_full_barrier(), 128);
    mbarrier_init(base + Traits::p_empty_barrier(), 128);
    mbarrier_init_fence();
  }
  __syncthreads();

  const int warpgroup = threadIdx.x / 128;
  const int tid = threadIdx.x % 128;
  if (warpgroup == 0) {
    warpgroup_reg_dealloc<Traits::kProducerRegs>();
    if (n_end > n_begin) Producer<Traits>::run(p, seq, b, kv_head, row_begin, n_begin, n_end, base, tid);
  } else if (warpgroup == 1) {
    warpgroup_reg_alloc<Traits::kConsumerRegs>();
    Consumer<Traits>::run_scores(p, seq, mask, kv_head, row_begin, n_begin, n_end, split, smem, tid);
  } else {
    warpgroup_reg_alloc<Traits::kConsumerRegs>();
    Consumer<Traits>::run_values(p, seq, kv_head, row_begin, n_begin, n_end, split, smem, tid);
  }
}

template <class Element>
cudaError_t launch_mla_decode(const FwdParams& p, int num_m_blocks, cudaStream_t stream) {
  using T = Traits<Element>;
  auto kernel = mla_decode_kernel<T>;
  // Raising the dynamic shared-memory limit is per function and device, and sticky: once per device.
  static PerDevice<cudaError_t> attr_slots;
  const cudaError_t attr_status = once_per_device(attr_slots, [&] {
    return cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, T::kSmemBytes);
  });
  if (attr_status != cudaSuccess) return attr_status;
  const dim3 grid(num_m_blocks, p.num_heads_kv * p.num_splits, p.batch);
  kernel<<<grid, T::kThreads, T::kSmemBytes, stream>>>(p);
  return cudaGetLastError();
}

}  // namespace flashseek::sm90::mla
