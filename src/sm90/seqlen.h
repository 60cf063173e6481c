// Where one sequence's queries and keys are, read once per CTA from the (device) index tensors.
// Device data is untrusted: every derived offset is clamped so that no address leaves the tensors given.
#pragma once

#include "fwd_params.h"

namespace flashseek::sm90 {

struct SequenceInfo {
  int q_start;      // first token row of this sequence in q / out
  int seqlen_q;
  int seqlen_k;     // keys this sequence attends to (after left padding)
  int k_first;      // index of its first key in its cache: left padding, or the varlen start row
  int cache_row;    // batched layout: the cache row holding this sequence

  __device__ __forceinline__ static SequenceInfo load(const FwdParams& p, int b) {
    SequenceInfo s;
    if (p.cu_seqlens_q != nullptr) {
      const int start = max(0, min(p.cu_seqlens_q[b], p.total_q));
      const int end = max(start, min(p.cu_seqlens_q[b + 1], p.total_q));
      s.q_start = start;
      s.seqlen_q = end - start;
    } else {
      s.q_start = b * p.fixed_seqlen_q;
      s.seqlen_q = p.fixed_seqlen_q;
    }
    const int leftpad = p.leftpad_k != nullptr ? max(0, p.leftpad_k[b]) : 0;
    s.cache_row = 0;
    if (p.kv_layout == KVLayout::kVarlen) {
      const int start = max(0, min(p.cu_seqlens_k[b], p.total_k));
      int end = max(start, min(p.cu_seqlens_k[b + 1], p.total_k));
      if (p.seqused_k != nullptr) end = min(end, start + max(0, p.seqused_k[b]));
      s.k_first = start + leftpad;
      s.seqlen_k = max(0, end - s.k_first);
    } else {
      // Paged: keys beyond the block table's width would have no page. Batched: beyond the cache row's length.
      const int capacity = p.kv_layout == KVLayout::kPaged ? p.block_table_width * p.page_size : p.page_size;
      const int used = min(max(0, p.seqused_k[b]), capacity);
      s.k_first = min(leftpad, used);
      s.seqlen_k = used - s.k_first;
      if (p.kv_layout == KVLayout::kBatched) {
        const int row = p.cache_batch_idx != nullptr ? p.cache_batch_idx[b] : b;
        s.cache_row = max(0, min(row, p.num_pages - 1));
      }
    }
    return s;
  }
};

// Element offsets (from the KV head's base) of the K and V rows of key `key` of sequence `seq`; false for a key
// past the sequence. `page`: the key's page id from the block table (paged layout only). Page ids are device data
// the caller may have got wrong: they are clamped to the cache, so no address leaves the tensors given.
__device__ __forceinline__ bool key_row_offsets(const FwdParams& p, const SequenceInfo& seq, int key, int page,
                                                int64_t& ko, int64_t& vo) {
  if (key >= seq.seqlen_k) return false;
  const int kp = seq.k_first + key;
  if (p.kv_layout == KVLayout::kPaged) {
    const int in_page = kp - p.page_div.div(kp) * p.page_size;
    const int pg = max(0, min(page, p.num_pages - 1));
    ko = pg * p.k_page_stride + in_page * p.k_row_stride;
    vo = pg * p.v_page_stride + in_page * p.v_row_stride;
  } else if (p.kv_layout == KVLayout::kBatched) {
    ko = seq.cache_row * p.k_page_stride + static_cast<int64_t>(kp) * p.k_row_stride;
    vo = seq.cache_row * p.v_page_stride + static_cast<int64_t>(kp) * p.v_row_stride;
  } else {
    ko = static_cast<int64_t>(kp) * p.k_row_stride;
    vo = static_cast<int64_t>(kp) * p.v_row_stride;
  }
  return true;
}

}  // namespace flashseek::sm90
