// flashseek public C++ API: forward attention for Hopper (sm_90a) with the argument set of vLLM's
// FlashAttention-3 operator. No framework types: tensors arrive as TensorView.
//
//   AttentionArgs args = ...;            // the call's arguments, named as in flash_attn_varlen_func
//   validate(args);                      // throws flashseek::Error naming the bad argument
//   LaunchPlan plan = make_plan(args, device_props);
//   ... allocate plan.workspace_bytes of device memory ...
//   run(args, plan, workspace, stream);
#pragma once

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>

#include "flashseek/tensor_view.h"

namespace flashseek {

// Raised for any argument the operator cannot take. `kind` lets bindings map it to the host language's
// error classes (TypeError for dtypes, ValueError for the rest).
class Error : public std::runtime_error {
 public:
  enum class Kind { kValue, kType, kNotSupported, kRuntime };
  Error(Kind kind, const std::string& message) : std::runtime_error(message), kind_(kind) {}
  Kind kind() const { return kind_; }

 private:
  Kind kind_;
};

// Every argument of flash_attn_varlen_func (and what flash_attn_with_kvcache adds), by the names the Python
// API gives them. Optional tensors are left with rank -1.
struct AttentionArgs {
  TensorView q;  // (total_q, Hq, d)
  TensorView k;  // (total_k, Hkv, d) varlen, or (num_blocks, page_size, Hkv, d) paged / batched cache
  TensorView v;  // like k with dv
  TensorView out;          // (total_q, Hq, dv), dtype of q (bf16 for fp8 q); required here
  TensorView softmax_lse;  // (Hq, total_q) float32; written when given
  TensorView cu_seqlens_q;      // (B+1,) int32; when absent every sequence has fixed_seqlen_q queries
  TensorView cu_seqlens_k;      // (B+1,) int32, varlen KV
  TensorView seqused_k;         // (B,) int32, paged or batched KV
  TensorView block_table;       // (B, max_blocks) int32, paged KV
  TensorView q_v;               // MLA decode (not supported yet)
  TensorView s_aux;             // (Hq,) attention sinks, float32 / bf16 / fp16
  TensorView scheduler_metadata;  // int32, from get_scheduler_metadata
  TensorView q_descale, k_descale, v_descale;  // fp8 (not supported yet)
  TensorView leftpad_k;         // (B,) int32: keys [leftpad, seqused) of each sequence are its cache
  TensorView cache_batch_idx;   // (B,) int32: batched cache row of each sequence
  TensorView cp_tot_seqused_k;  // context parallel (not supported yet)

  int64_t max_seqlen_q = 0;
  int64_t max_seqlen_k = 0;
  int64_t fixed_seqlen_q = 0;  // queries per sequence when cu_seqlens_q is absent (batched q)
  float softmax_scale = 0.f;   // <= 0 means d^-0.5
  bool causal = false;
  int window_left = -1;
  int window_right = -1;
  float softcap = 0.f;
  int num_splits = 0;
  float dropout_p = 0.f;
  bool has_alibi = false;
  bool return_attn_probs = false;
  int cp_world_size = 1;
  int cp_rank = 0;
  int batch_size = -1;  // derived by validate() from cu_seqlens_q / seqused_k / cu_seqlens_k
};

// The launch decision for one call: a pure function of host-side values (shapes, max lengths, flags) so that it
// is the same at CUDA-graph capture and replay, and the same in get_scheduler_metadata and the call that uses it.
struct LaunchPlan {
  int head_dim_padded = 0;    // the kernel's head dim (64, 128, 192, 256)
  int head_dim_v_padded = 0;
  int block_m = 0;            // packed query rows per CTA (query tokens x query heads of one KV head)
  int block_n = 0;            // keys per mainloop step
  int qheads_per_kvhead = 1;
  int num_m_blocks = 0;       // per (sequence, KV head), sized by max_seqlen_q
  int num_splits = 1;         // KV splits (grid), 1 = no split
  size_t workspace_bytes = 0; // partial outputs and LSEs of the splits
  const char* kernel_name = "";
  int tile_variant = 0;       // a decode tile experiment (FLASHSEEK_EXPERIMENT tile=N); 0: the tile table's tile
  bool persistent = false;    // short tiles or a mixed batch: the persistent kernel where the tile has one
  int kv_head_pack = 1;       // KV heads per CTA (the head-packed e4m3 decode tile, variant 203); block_n keys per
                              // mainloop step are then the tile's rows / kv_head_pack
  int cluster_splits = 0;     // > 1: the splits combine in a thread-block cluster (FLASHSEEK_EXPERIMENT=cluster-combine):
                              // no workspace, no combine kernel
};

struct DeviceInfo {
  int num_sms = 132;
  int max_smem_per_block = 232448;
  int cc_major = 9;
  int cc_minor = 0;
};

DeviceInfo query_device(int device);

// Throws Error naming the argument, the rule and what came. Fills args.batch_size.
void validate(AttentionArgs& args);

// Splits heuristics and tile choice. Requires validate() first.
LaunchPlan make_plan(const AttentionArgs& args, const DeviceInfo& device);

// Launches the attention (and the split combine when plan.num_splits > 1) on `stream` (a cudaStream_t).
void run(const AttentionArgs& args, const LaunchPlan& plan, void* workspace, void* stream);

// ---- scheduler metadata -----------------------------------------------------------------------------------
// Layout of the int32 buffer returned by get_scheduler_metadata: a header, then one split count per sequence.
struct SchedulerMetadataLayout {
  static constexpr int kMagic = 0x46534d44;  // "FSMD"
  static constexpr int kHeaderInts = 8;       // magic, num_splits, block_m, block_n, batch, hq, hkv, reserved
  static int64_t total_ints(int batch_size) { return kHeaderInts + batch_size; }
};

// Arguments of get_scheduler_metadata, by the names of the Python API.
struct SchedulerArgs {
  int batch_size = 0;
  int64_t max_seqlen_q = 0;
  int64_t max_seqlen_k = 0;
  int num_heads_q = 0;
  int num_heads_kv = 0;
  int headdim = 0;
  int headdim_v = 0;
  DType qkv_dtype = DType::kBFloat16;
  TensorView cache_seqlens;  // (B,) int32, device
  TensorView cu_seqlens_q;   // optional
  int page_size = 0;         // 0: not paged
  bool causal = false;
  int window_left = -1;
  int window_right = -1;
  bool has_softcap = false;
  int num_splits = 0;
  TensorView metadata_out;   // int32 (total_ints(batch_size),), device; written by compute_scheduler_metadata
};

void validate(SchedulerArgs& args);
LaunchPlan make_plan(const SchedulerArgs& args, const DeviceInfo& device);
// Writes the header and the per-sequence split counts (a small device kernel: no host read of device data).
void compute_scheduler_metadata(const SchedulerArgs& args, const LaunchPlan& plan, void* stream);

// ---- merging two partial results (vLLM's merge_attn_states, cascade attention) ----------------------------
struct MergeArgs {
  TensorView out;         // (T, H, d)
  TensorView prefix_out;  // (T, H, d)
  TensorView prefix_lse;  // (H, T) float32
  TensorView suffix_out;
  TensorView suffix_lse;
  TensorView out_lse;     // optional (H, T) float32
};
void validate(MergeArgs& args);
void run(const MergeArgs& args, void* stream);

// ---- flash_attn_with_kvcache extras: append new K/V (with rotary) into the cache, rotate q -------------------
struct AppendKVArgs {
  TensorView k_cache, v_cache;  // (B_cache, S, Hkv, d) or paged (num_blocks, page, Hkv, d)
  TensorView k_new, v_new;      // (B, S_new, Hkv, d)
  TensorView block_table;       // paged
  TensorView cache_seqlens;     // (B,) int32: where the new keys start
  TensorView cache_batch_idx;   // optional
  TensorView leftpad_k;         // optional
  TensorView q, q_rotated;      // (B, Sq, Hq, d); q_rotated written when rotary is given
  TensorView rotary_cos, rotary_sin;  // (S_max, rotary_dim / 2)
  bool rotary_interleaved = false;
  bool causal = false;          // rotary position of q: causal -> cache_seqlens + i, else cache_seqlens
};
void validate(AppendKVArgs& args);
void run(const AppendKVArgs& args, void* stream);

}  // namespace flashseek
