// flash_attn_with_kvcache's preparation step: writes the new keys and values into the cache at each sequence's
// current length (rotating the keys when rotary tables are given) and writes the rotated queries. Elementwise
// and memory-bound: one warp per (sequence, token, head) row.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "fwd_params.h"

namespace flashseek::sm90 {

struct AppendKVParams {
  void* k_cache;
  void* v_cache;
  int64_t k_page_stride, k_row_stride, k_head_stride;  // page_stride: per page (paged) or per cache row
  int64_t v_page_stride, v_row_stride, v_head_stride;
  bool paged;
  const int* block_table;
  int64_t block_table_stride;
  int block_table_width;
  int page_size;   // paged: tokens per page; batched: tokens per cache row
  int num_pages;   // pages (paged) or cache rows (batched)
  const int* cache_seqlens;
  const int* cache_batch_idx;

  const void* k_new;  // (B, S_new, Hkv, d) or null
  const void* v_new;
  int64_t kn_batch_stride, kn_row_stride, kn_head_stride;
  int64_t vn_batch_stride, vn_row_stride, vn_head_stride;
  int seqlen_new;

  const void* q;      // (B, Sq, Hq, d)
  void* q_rotated;    // null when no rotary
  int64_t q_batch_stride, q_row_stride, q_head_stride;
  int64_t qr_batch_stride, qr_row_stride, qr_head_stride;
  int seqlen_q;

  const void* rotary_cos;  // (rows, rotary_dim / 2), or null
  const void* rotary_sin;
  int64_t rotary_row_stride;
  int rotary_rows;
  int rotary_dim;
  bool rotary_interleaved;
  bool q_positions_advance;  // causal or local: query i sits at cache_seqlens + i, else at cache_seqlens

  int batch;
  int num_heads_q;
  int num_heads_kv;
  int head_dim;
  int head_dim_v;
  ScalarType dtype;
  // Load a row's every input before its first store (rows of head_dim <= 256): the stores may alias the loads as
  // far as the compiler knows, so the plain loop waits one memory round trip per 32 columns (entry 54).
  bool load_first;
  // Let the stream's next kernel, where launched as a programmatic dependent (the forward under pdl-chain),
  // place its CTAs while this one runs; it waits for this grid's completion before its first read.
  bool trigger_dependents;
};

cudaError_t launch_append_kv(const AppendKVParams& p, cudaStream_t stream);

}  // namespace flashseek::sm90
