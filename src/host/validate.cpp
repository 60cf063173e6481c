// Host-side validation of every entry point's arguments. It reads only host values (shapes, strides, dtypes,
// devices, scalars): the binding must not read device data, so the contents of cu_seqlens, seqused_k and
// block_table are the caller's contract. Order: missing arguments, unsupported features (so that a call learns the
// real reason rather than a dtype rule), scalars, dtypes, devices, then shapes and strides.
#include <cmath>
#include <string>

#include "flashseek/flashseek.h"
#include "mla_decode_tile.h"
#include "validate_util.h"

namespace flashseek {
namespace {

using namespace detail;

struct Named {
  const TensorView& t;
  const char* name;
};

constexpr DType kF16 = DType::kFloat16;
constexpr DType kBF16 = DType::kBFloat16;
constexpr DType kF32 = DType::kFloat32;
constexpr DType kI32 = DType::kInt32;
constexpr DType kFP8 = DType::kFloat8E4M3;

// ---- flash_attn_varlen_func ---------------------------------------------------------------------------------

enum class KVMode { kVarlen, kPaged, kBatched };

struct Dims {
  int64_t total_q, hq, hkv, d, dv;
};

void reject_unsupported(const AttentionArgs& a) {
  if (a.q_v.given()) {  // MLA decode: the features its kernel lacks
    if (a.q.dtype == DType::kFloat8E4M3 || a.k.dtype == DType::kFloat8E4M3)
      fail(Kind::kNotSupported, "q_v", "None with fp8 (MLA decode in fp8 is not supported yet)", describe(a.q_v));
    if (a.softcap != 0.f)
      fail(Kind::kNotSupported, "softcap", "0 with q_v (MLA decode with a soft cap is not supported yet)",
           str(a.softcap));
    require_absent(a.s_aux, "s_aux", "with q_v (MLA decode with sinks is not supported yet)", Kind::kNotSupported);
  }
  if (a.cp_world_size < 1) fail(Kind::kValue, "cp_world_size", ">= 1", str(a.cp_world_size));
  if (a.dropout_p != 0.f)
    fail(Kind::kNotSupported, "dropout_p", "0 (dropout is not supported yet)", str(a.dropout_p));
  if (a.has_alibi) fail(Kind::kNotSupported, "alibi_slopes", "None (ALiBi is not supported yet)", "a tensor");
  if (a.return_attn_probs)
    fail(Kind::kNotSupported, "return_attn_probs",
         "False (returning attention probabilities is not supported yet)", "True");
}

// Context parallel: this rank holds the keys j * W + r; causal limits need every sequence's global length.
void check_context_parallel(const AttentionArgs& a, int64_t batch) {
  const int w = a.cp_world_size;
  if (w == 1) {
    if (a.cp_rank != 0) fail(Kind::kValue, "cp_rank", "0 when cp_world_size is 1", str(a.cp_rank));
    return;  // a cp_tot_seqused_k without context parallel changes nothing
  }
  if (a.cp_rank < 0 || a.cp_rank >= w)
    fail(Kind::kValue, "cp_rank", "a rank in [0, cp_world_size=" + str(w) + ")", str(a.cp_rank));
  require_given(a.cp_tot_seqused_k, "cp_tot_seqused_k", " when cp_world_size > 1 (the global key count per sequence)");
  require_dtype(a.cp_tot_seqused_k, "cp_tot_seqused_k", kI32);
  require_device(a.cp_tot_seqused_k, "cp_tot_seqused_k", a.q.device, "q");
  require_vector(a.cp_tot_seqused_k, "cp_tot_seqused_k", batch, " (one global key count per sequence, B=" +
                                                                    str(batch) + ")");
  if (a.window_left >= 0 || (a.window_right >= 0 && !a.causal))
    fail(Kind::kNotSupported, "window_size", "(-1, -1) when cp_world_size > 1 (a sliding window with context "
         "parallel is not supported)", "(" + str(a.window_left) + ", " + str(a.window_right) + ")");
  if (a.leftpad_k.given())
    fail(Kind::kNotSupported, "cache_leftpad", "None when cp_world_size > 1", describe(a.leftpad_k));
}

// q_v (total_q, Hq, dv) in q's dtype: the MLA decode logits q.k + q_v.v, with d = 64 and dv = 512 only.
void check_q_v(const AttentionArgs& a, int64_t total_q, int64_t hq, int64_t d, int64_t dv) {
  if (!a.q_v.given()) return;
  require_dtype(a.q_v, "q_v", a.q.dtype, " (the dtype of q)");
  require_device(a.q_v, "q_v", a.q.device, "q");
  if (d != MlaDecodeTile::kHeadDim || dv != MlaDecodeTile::kHeadDimV)
    fail(Kind::kNotSupported, "q_v", "head dims d=64 (q, k) and dv=512 (v, q_v) for MLA decode",
         "d=" + str(d) + ", dv=" + str(dv));
  require_shape(a.q_v, "q_v", {total_q, hq, dv}, " (total_q, Hq, dv)");
  require_aligned_rows(a.q_v, "q_v");
}

void check_scalars(const AttentionArgs& a) {
  require_non_negative(a.max_seqlen_q, "max_seqlen_q");
  require_non_negative(a.max_seqlen_k, "max_seqlen_k");
  require_window(a.window_left, a.window_right);
  if (!(std::isfinite(a.softcap) && a.softcap >= 0.f))
    fail(Kind::kValue, "softcap", "a finite value >= 0 (0 = off)", str(a.softcap));
  if (!std::isfinite(a.softmax_scale))
    fail(Kind::kValue, "softmax_scale", "a finite value (<= 0 means d^-0.5)", str(a.softmax_scale));
  require_num_splits(a.num_splits);
}

// dtypes: q, k, v all fp16 or all bf16; all e4m3 (out bf16, as FA3); or an fp16/bf16 q against an e4m3 cache
// (k and v e4m3, out in q's dtype).
void check_dtypes(const AttentionArgs& a) {
  require_dtype_in(a.q, "q", {kF16, kBF16, kFP8});
  if (a.q.dtype == kFP8) {
    require_dtype(a.k, "k", kFP8, " (q is float8_e4m3fn: q, k and v are all e4m3)");
    require_dtype(a.v, "v", kFP8, " (q is float8_e4m3fn: q, k and v are all e4m3)");
    require_dtype(a.out, "out", kBF16, " (the output of an fp8 q is bfloat16)");
  } else {
    if (a.k.dtype != kFP8)
      require_dtype(a.k, "k", a.q.dtype, " (the dtype of q) or float8_e4m3fn (an fp8 KV cache)");
    require_dtype(a.v, "v", a.k.dtype, a.k.dtype == kFP8 ? " (the dtype of k: an fp8 cache holds k and v)"
                                                         : " (the dtype of q)");
    require_dtype(a.out, "out", a.q.dtype, " (the dtype of q)");
  }
  for (Named n : {Named{a.q_descale, "q_descale"}, Named{a.k_descale, "k_descale"}, Named{a.v_descale, "v_descale"}})
    if (n.t.given()) require_dtype(n.t, n.name, kF32);
  if (a.softmax_lse.given()) require_dtype(a.softmax_lse, "softmax_lse", kF32);
  if (a.s_aux.given()) require_dtype_in(a.s_aux, "s_aux", {kF32, kBF16, kF16});
  for (Named n : {Named{a.cu_seqlens_q, "cu_seqlens_q"}, Named{a.cu_seqlens_k, "cu_seqlens_k"},
                  Named{a.seqused_k, "seqused_k"}, Named{a.block_table, "block_table"},
                  Named{a.leftpad_k, "cache_leftpad"}, Named{a.cache_batch_idx, "cache_batch_idx"},
                  Named{a.scheduler_metadata, "scheduler_metadata"}})
    if (n.t.given()) require_dtype(n.t, n.name, kI32);
}

void check_devices(const AttentionArgs& a) {
  require_cuda(a.q, "q");
  for (Named n : {Named{a.k, "k"}, Named{a.v, "v"}, Named{a.out, "out"}, Named{a.softmax_lse, "softmax_lse"},
                  Named{a.cu_seqlens_q, "cu_seqlens_q"}, Named{a.cu_seqlens_k, "cu_seqlens_k"},
                  Named{a.seqused_k, "seqused_k"}, Named{a.block_table, "block_table"}, Named{a.s_aux, "s_aux"},
                  Named{a.scheduler_metadata, "scheduler_metadata"}, Named{a.leftpad_k, "cache_leftpad"},
                  Named{a.cache_batch_idx, "cache_batch_idx"}, Named{a.q_descale, "q_descale"},
                  Named{a.k_descale, "k_descale"}, Named{a.v_descale, "v_descale"}})
    require_device(n.t, n.name, a.q.device, "q");
}

// v must look like k except for its head dim.
void require_like_k(const TensorView& v, const TensorView& k, std::string_view arg) {
  bool same = v.rank == k.rank;
  for (int i = 0; same && i + 1 < k.rank; ++i) same = v.shape[i] == k.shape[i];
  if (same) return;
  std::string expected = k.shape_string();
  expected = expected.substr(0, expected.rfind(' ') + 1) + "dv)";
  fail(Kind::kValue, arg, "shape " + expected + " matching k except the last dim", v.shape_string());
}

Dims check_qkv(const AttentionArgs& a) {
  require_rank(a.q, "q", 3, "(total_q, Hq, d)");
  if (a.k.rank != 3 && a.k.rank != 4)
    fail(Kind::kValue, "k", "rank 3 (total_k, Hkv, d) or rank 4 (num_blocks, page_size, Hkv, d)",
         "rank " + str(a.k.rank) + " with shape " + a.k.shape_string());
  require_like_k(a.v, a.k, "v");

  const Dims dims{a.q.shape[0], a.q.shape[1], a.k.shape[a.k.rank - 2], a.q.shape[2], a.v.shape[a.v.rank - 1]};
  const int64_t dk = a.k.shape[a.k.rank - 1];
  if (dk != dims.d) fail(Kind::kValue, "k", "head dim equal to q's d=" + str(dims.d), str(dk));
  if (a.q_v.given()) {
    check_q_v(a, dims.total_q, dims.hq, dims.d, dims.dv);
  } else if (dims.dv == MlaDecodeTile::kHeadDimV && dims.d == MlaDecodeTile::kHeadDim) {
    fail(Kind::kValue, "q_v", "a tensor (total_q, Hq, 512) with d=64 and dv=512 (MLA decode)", "None");
  } else {
    require_head_dims(dims.d, dims.dv, "q", "v");
  }
  if (dims.hkv < 1) fail(Kind::kValue, "k", "at least one KV head (Hkv = k.shape[-2])", "Hkv=" + str(dims.hkv));
  if (dims.hq < 1 || dims.hq % dims.hkv != 0)
    fail(Kind::kValue, "q", "a number of heads Hq that is a positive multiple of Hkv=" + str(dims.hkv),
         "Hq=" + str(dims.hq));
  // After the head dims: an odd head dim would otherwise surface as a misleading stride error.
  for (Named n : {Named{a.q, "q"}, Named{a.k, "k"}, Named{a.v, "v"}}) require_aligned_rows(n.t, n.name);
  return dims;
}

KVMode check_kv_mode(const AttentionArgs& a) {
  if (!a.cu_seqlens_k.given() && !a.seqused_k.given())
    fail(Kind::kValue, "cu_seqlens_k", "cu_seqlens_k (varlen KV) or seqused_k (paged or batched KV cache)",
         "neither");
  if (a.k.rank == 3) {
    require_given(a.cu_seqlens_k, "cu_seqlens_k", " when k is rank 3 (varlen KV)");
    require_absent(a.block_table, "block_table", "when k is rank 3 (varlen KV; a paged cache is rank 4)");
    require_absent(a.cache_batch_idx, "cache_batch_idx", "when k is rank 3 (it selects rows of a batched cache)");
    return KVMode::kVarlen;
  }
  // Rank 4 from here: with cu_seqlens_k ruled out, seqused_k is known to be given.
  require_absent(a.cu_seqlens_k, "cu_seqlens_k", "when k is rank 4 (a paged or batched cache takes seqused_k)");
  if (!a.block_table.given()) return KVMode::kBatched;
  require_absent(a.cache_batch_idx, "cache_batch_idx",
                 "with block_table (it selects rows of a batched cache, which is not paged)");
  if (a.k.shape[1] < 1) fail(Kind::kValue, "k", "page_size (k.shape[1]) >= 1", str(a.k.shape[1]));
  return KVMode::kPaged;
}

// B comes from cu_seqlens_q, or from q itself when every sequence has fixed_seqlen_q queries.
// `source` says which, for the messages of the tensors that must agree with it.
int64_t derive_batch_size(const AttentionArgs& a, const Dims& dims, const char** source) {
  const TensorView& cu = a.cu_seqlens_q;
  if (cu.given()) {
    if (cu.rank != 1 || cu.shape[0] < 1)
      fail(Kind::kValue, "cu_seqlens_q", "shape (B+1,) with at least one entry", cu.shape_string());
    require_contiguous(cu, "cu_seqlens_q");
    *source = "from cu_seqlens_q";
    return cu.shape[0] - 1;
  }
  if (a.fixed_seqlen_q <= 0)
    fail(Kind::kValue, "cu_seqlens_q", "a tensor, or fixed_seqlen_q > 0 (batched q)",
         "None with fixed_seqlen_q=" + str(a.fixed_seqlen_q));
  if (dims.total_q % a.fixed_seqlen_q != 0)
    fail(Kind::kValue, "q", "total_q = q.shape[0] a multiple of fixed_seqlen_q=" + str(a.fixed_seqlen_q),
         "total_q=" + str(dims.total_q));
  *source = "from q.shape[0] / fixed_seqlen_q";
  return dims.total_q / a.fixed_seqlen_q;
}

// The messages name where B came from; they are built only for a check that fails (this runs on every call).
void check_per_sequence(const AttentionArgs& a, KVMode mode, int64_t batch, const char* source) {
  auto from = [&] { return "B=" + str(batch) + " " + source; };
  if (a.cu_seqlens_k.given() && !is_vector(a.cu_seqlens_k, batch + 1))
    require_vector(a.cu_seqlens_k, "cu_seqlens_k", batch + 1, " (B+1 with " + from() + ")");
  for (Named n : {Named{a.seqused_k, "seqused_k"}, Named{a.leftpad_k, "cache_leftpad"},
                  Named{a.cache_batch_idx, "cache_batch_idx"}})
    if (n.t.given() && !is_vector(n.t, batch)) require_vector(n.t, n.name, batch, " (batch size " + from() + ")");

  if (mode == KVMode::kPaged) {
    const TensorView& bt = a.block_table;
    require_rank(bt, "block_table", 2, "(B, max_blocks)");
    if (bt.shape[0] != batch)
      fail(Kind::kValue, "block_table", "shape (B, max_blocks) with " + from(), bt.shape_string());
    // Rows may be views into a wider table (row stride > width), but each row is read as a plain array.
    require_last_dim_contiguous(bt, "block_table");
    if (bt.stride[0] < 0) fail(Kind::kValue, "block_table", "a non-negative row stride", str(bt.stride[0]));
  }
  if (mode == KVMode::kBatched && !a.cache_batch_idx.given() && a.k.shape[0] < batch)
    fail(Kind::kValue, "k", "at least B=" + str(batch) + " cache rows (k.shape[0]) without cache_batch_idx",
         str(a.k.shape[0]));
}

// Descales: (B, Hkv) float32 with any non-negative strides (vLLM passes stride-0 broadcasts of a scalar); a size-1
// dim broadcasts too. They scale the e4m3 operands; given for a 16-bit operand they are ignored, as FA3 does.
void check_descales(const AttentionArgs& a, const Dims& dims, int64_t batch) {
  for (Named n : {Named{a.q_descale, "q_descale"}, Named{a.k_descale, "k_descale"}, Named{a.v_descale, "v_descale"}}) {
    const TensorView& t = n.t;
    if (!t.given()) continue;
    const bool shape_ok = t.rank == 2 && (t.shape[0] == batch || t.shape[0] == 1) &&
                          (t.shape[1] == dims.hkv || t.shape[1] == 1);
    if (!shape_ok)
      fail(Kind::kValue, n.name,
           "shape (B, Hkv) = " + shape_string({batch, dims.hkv}) + " (or a size-1 dim that broadcasts)",
           t.shape_string());
    if (t.stride[0] < 0 || t.stride[1] < 0)
      fail(Kind::kValue, n.name, "non-negative strides (0 broadcasts)", "strides " + strides_string(t));
  }
}

void check_outputs_and_extras(const AttentionArgs& a, const Dims& dims, int64_t batch) {
  require_shape(a.out, "out", {dims.total_q, dims.hq, dims.dv}, " (total_q, Hq, dv)");
  require_aligned_rows(a.out, "out");
  if (a.softmax_lse.given()) {
    require_shape(a.softmax_lse, "softmax_lse", {dims.hq, dims.total_q}, " (Hq, total_q)");
    require_contiguous(a.softmax_lse, "softmax_lse");
  }
  if (a.s_aux.given()) require_vector(a.s_aux, "s_aux", dims.hq, " (one sink per query head, Hq)");
  if (a.scheduler_metadata.given() && !is_vector(a.scheduler_metadata, SchedulerMetadataLayout::total_ints(batch)))
    require_vector(a.scheduler_metadata, "scheduler_metadata", SchedulerMetadataLayout::total_ints(batch),
                   " (what get_scheduler_metadata returns for batch size " + str(batch) + ")");
  // The grid is sized by max_seqlen_q: a smaller value than the real lengths would drop queries silently.
  if (dims.total_q > 0 && a.max_seqlen_q < 1)
    fail(Kind::kValue, "max_seqlen_q", ">= 1 when q has tokens (total_q=" + str(dims.total_q) + ")",
         str(a.max_seqlen_q));
  if (dims.total_q > 0 && !a.cu_seqlens_q.given() && a.max_seqlen_q < a.fixed_seqlen_q)
    fail(Kind::kValue, "max_seqlen_q", ">= fixed_seqlen_q=" + str(a.fixed_seqlen_q), str(a.max_seqlen_q));
}

// ---- flash_attn_with_kvcache: append and rotary -------------------------------------------------------------

// New keys k (B, S_new, Hkv, d) and values v (B, S_new, Hkv, dv): heads and head dims of the cache.
void check_new_kv(const AppendKVArgs& a, int64_t batch) {
  const TensorView& k = a.k_new;
  require_rank(k, "k", 4, "(B, S_new, Hkv, d)");
  require_shape(k, "k", {batch, k.shape[1], a.k_cache.shape[2], a.k_cache.shape[3]},
                " (B from q.shape[0], Hkv and d of k_cache)");
  require_shape(a.v_new, "v", {batch, k.shape[1], a.v_cache.shape[2], a.v_cache.shape[3]},
                " (the shape of k with the head dim of v_cache)");
  require_aligned_rows(k, "k");
  require_aligned_rows(a.v_new, "v");
}

void check_rotary(const AppendKVArgs& a, int64_t d) {
  if (a.rotary_cos.given() != a.rotary_sin.given())
    fail(Kind::kValue, a.rotary_cos.given() ? "rotary_sin" : "rotary_cos",
         "a tensor (rotary_cos and rotary_sin come together)", "None");
  if (!a.rotary_cos.given()) return;
  require_rank(a.rotary_cos, "rotary_cos", 2, "(S_max, rotary_dim / 2)");
  require_shape(a.rotary_sin, "rotary_sin", {a.rotary_cos.shape[0], a.rotary_cos.shape[1]},
                " (the shape of rotary_cos)");
  for (Named n : {Named{a.rotary_cos, "rotary_cos"}, Named{a.rotary_sin, "rotary_sin"}})
    require_contiguous(n.t, n.name);
  const int64_t rotary_dim = 2 * a.rotary_cos.shape[1];
  if (rotary_dim < 2 || rotary_dim > d)
    fail(Kind::kValue, "rotary_cos", "rotary_dim = 2 * shape[1] in [2, d=" + str(d) + "]",
         "rotary_dim=" + str(rotary_dim));
  require_given(a.q_rotated, "q_rotated", " when rotary_cos is given");
  require_shape(a.q_rotated, "q_rotated", {a.q.shape[0], a.q.shape[1], a.q.shape[2], a.q.shape[3]},
                " (the shape of q)");
  require_aligned_rows(a.q_rotated, "q_rotated");
}

}  // namespace

void validate(AttentionArgs& a) {
  require_given(a.q, "q");
  require_given(a.k, "k");
  require_given(a.v, "v");
  require_given(a.out, "out", " (the binding allocates it when the caller passes none)");
  reject_unsupported(a);
  check_scalars(a);
  check_dtypes(a);
  check_devices(a);
  const Dims dims = check_qkv(a);
  const KVMode mode = check_kv_mode(a);
  const char* source = "";
  const int64_t batch = derive_batch_size(a, dims, &source);
  check_per_sequence(a, mode, batch, source);
  check_context_parallel(a, batch);
  check_descales(a, dims, batch);
  check_outputs_and_extras(a, dims, batch);
  a.batch_size = static_cast<int>(batch);
}

void validate(SchedulerArgs& a) {
  require_non_negative(a.batch_size, "batch_size");
  require_non_negative(a.max_seqlen_q, "max_seqlen_q");
  require_non_negative(a.max_seqlen_k, "max_seqlen_k");
  if (a.num_heads_kv < 1) fail(Kind::kValue, "num_heads_kv", ">= 1", str(a.num_heads_kv));
  if (a.num_heads_q < 1 || a.num_heads_q % a.num_heads_kv != 0)
    fail(Kind::kValue, "num_heads_q", "a positive multiple of num_heads_kv=" + str(a.num_heads_kv),
         str(a.num_heads_q));
  // e4m3: the KV cache's dtype (an fp8 cache, with an e4m3 or a 16-bit q) picks the fp8 tiles.
  if (a.qkv_dtype != kF16 && a.qkv_dtype != kBF16 && a.qkv_dtype != kFP8)
    fail(Kind::kType, "qkv_dtype", "float16, bfloat16 or float8_e4m3fn", dtype_name(a.qkv_dtype));
  if (!(a.headdim == MlaDecodeTile::kHeadDim && a.headdim_v == MlaDecodeTile::kHeadDimV))  // MLA decode
    require_head_dims(a.headdim, a.headdim_v, "headdim", "headdim_v");
  require_non_negative(a.page_size, "page_size");
  require_window(a.window_left, a.window_right);
  require_num_splits(a.num_splits);

  require_given(a.cache_seqlens, "cache_seqlens");
  for (Named n : {Named{a.cache_seqlens, "cache_seqlens"}, Named{a.cu_seqlens_q, "cu_seqlens_q"},
                  Named{a.metadata_out, "scheduler_metadata"}})
    if (n.t.given()) require_dtype(n.t, n.name, kI32);
  require_cuda(a.cache_seqlens, "cache_seqlens");
  require_device(a.cu_seqlens_q, "cu_seqlens_q", a.cache_seqlens.device, "cache_seqlens");
  require_device(a.metadata_out, "scheduler_metadata", a.cache_seqlens.device, "cache_seqlens");

  if (!is_vector(a.cache_seqlens, a.batch_size))
    require_vector(a.cache_seqlens, "cache_seqlens", a.batch_size, " (batch_size=" + str(a.batch_size) + ")");
  if (a.cu_seqlens_q.given()) require_vector(a.cu_seqlens_q, "cu_seqlens_q", a.batch_size + 1, " (batch_size + 1)");
  if (a.metadata_out.given() && !is_vector(a.metadata_out, SchedulerMetadataLayout::total_ints(a.batch_size)))
    require_vector(a.metadata_out, "scheduler_metadata", SchedulerMetadataLayout::total_ints(a.batch_size),
                   " (" + str(SchedulerMetadataLayout::kHeaderInts) + " header ints + one per sequence, batch_size=" +
                       str(a.batch_size) + ")");
}

void validate(MergeArgs& a) {
  const Named outs[] = {{a.out, "output"}, {a.prefix_out, "prefix_output"}, {a.suffix_out, "suffix_output"}};
  const Named lses[] = {{a.prefix_lse, "prefix_lse"}, {a.suffix_lse, "suffix_lse"}, {a.out_lse, "output_lse"}};
  for (const Named& n : outs) require_given(n.t, n.name);
  require_given(a.prefix_lse, "prefix_lse");
  require_given(a.suffix_lse, "suffix_lse");

  require_dtype_in(a.out, "output", {kF16, kBF16, kF32});
  for (const Named& n : outs) require_dtype(n.t, n.name, a.out.dtype, " (the dtype of output)");
  for (const Named& n : lses)
    if (n.t.given()) require_dtype(n.t, n.name, kF32);
  require_cuda(a.out, "output");
  for (const Named& n : outs) require_device(n.t, n.name, a.out.device, "output");
  for (const Named& n : lses) require_device(n.t, n.name, a.out.device, "output");

  require_rank(a.out, "output", 3, "(T, H, d)");
  const int64_t tokens = a.out.shape[0], heads = a.out.shape[1], d = a.out.shape[2];
  for (const Named& n : outs) {
    require_shape(n.t, n.name, {tokens, heads, d}, " (the shape of output)");
    require_last_dim_contiguous(n.t, n.name);
  }
  for (const Named& n : lses) {
    if (!n.t.given()) continue;
    require_shape(n.t, n.name, {heads, tokens}, " (H, T)");
    require_contiguous(n.t, n.name);
  }
}

// Argument names are those of flash_attn_with_kvcache: k_new is `k`, v_new is `v`, block_table is `page_table`.
void validate(AppendKVArgs& a) {
  require_given(a.q, "q");
  require_given(a.k_cache, "k_cache");
  require_given(a.v_cache, "v_cache");
  require_given(a.cache_seqlens, "cache_seqlens");
  if (a.k_new.given() != a.v_new.given())
    fail(Kind::kValue, a.k_new.given() ? "v" : "k", "a tensor (new keys k and values v come together)", "None");

  // Attention against an fp8 cache needs no append step; appending (or rotating) into one would quantize.
  if (a.k_cache.dtype == DType::kFloat8E4M3)
    fail(Kind::kNotSupported, "k_cache",
         "float16 or bfloat16 when appending k, v or applying rotary (appending into an fp8 cache is not "
         "supported yet)",
         dtype_name(a.k_cache.dtype));
  require_dtype_in(a.k_cache, "k_cache", {kF16, kBF16});
  for (Named n : {Named{a.v_cache, "v_cache"}, Named{a.k_new, "k"}, Named{a.v_new, "v"}, Named{a.q, "q"},
                  Named{a.q_rotated, "q_rotated"}, Named{a.rotary_cos, "rotary_cos"},
                  Named{a.rotary_sin, "rotary_sin"}})
    if (n.t.given()) require_dtype(n.t, n.name, a.k_cache.dtype, " (the dtype of k_cache)");
  for (Named n : {Named{a.cache_seqlens, "cache_seqlens"}, Named{a.block_table, "page_table"},
                  Named{a.cache_batch_idx, "cache_batch_idx"}, Named{a.leftpad_k, "cache_leftpad"}})
    if (n.t.given()) require_dtype(n.t, n.name, kI32);

  require_cuda(a.q, "q");
  for (Named n : {Named{a.k_cache, "k_cache"}, Named{a.v_cache, "v_cache"}, Named{a.k_new, "k"},
                  Named{a.v_new, "v"}, Named{a.q_rotated, "q_rotated"}, Named{a.rotary_cos, "rotary_cos"},
                  Named{a.rotary_sin, "rotary_sin"}, Named{a.cache_seqlens, "cache_seqlens"},
                  Named{a.block_table, "page_table"}, Named{a.cache_batch_idx, "cache_batch_idx"},
                  Named{a.leftpad_k, "cache_leftpad"}})
    require_device(n.t, n.name, a.q.device, "q");

  require_rank(a.k_cache, "k_cache", 4, "(B_cache or num_blocks, S or page_size, Hkv, d)");
  require_like_k(a.v_cache, a.k_cache, "v_cache");
  const int64_t hkv = a.k_cache.shape[2], d = a.k_cache.shape[3];
  require_head_dims(d, a.v_cache.shape[3], "k_cache", "v_cache");
  if (hkv < 1) fail(Kind::kValue, "k_cache", "at least one KV head (Hkv = k_cache.shape[2])", "Hkv=" + str(hkv));
  require_aligned_rows(a.k_cache, "k_cache");
  require_aligned_rows(a.v_cache, "v_cache");

  require_rank(a.q, "q", 4, "(B, Sq, Hq, d)");
  const int64_t batch = a.q.shape[0];
  if (a.q.shape[3] != d) fail(Kind::kValue, "q", "head dim equal to k_cache's d=" + str(d), str(a.q.shape[3]));
  if (a.q.shape[2] < 1 || a.q.shape[2] % hkv != 0)
    fail(Kind::kValue, "q", "a number of heads Hq that is a positive multiple of Hkv=" + str(hkv),
         "Hq=" + str(a.q.shape[2]));
  require_aligned_rows(a.q, "q");

  if (a.k_new.given()) check_new_kv(a, batch);
  check_rotary(a, d);

  for (Named n : {Named{a.cache_seqlens, "cache_seqlens"}, Named{a.cache_batch_idx, "cache_batch_idx"},
                  Named{a.leftpad_k, "cache_leftpad"}})
    if (n.t.given() && !is_vector(n.t, batch))
      require_vector(n.t, n.name, batch, " (batch size B=" + str(batch) + " from q.shape[0])");
  if (a.block_table.given()) {
    require_absent(a.cache_batch_idx, "cache_batch_idx",
                   "with page_table (it selects rows of a batched cache, which is not paged)");
    require_rank(a.block_table, "page_table", 2, "(B, max_blocks)");
    if (a.block_table.shape[0] != batch)
      fail(Kind::kValue, "page_table", "shape (B, max_blocks) with B=" + str(batch) + " from q.shape[0]",
           a.block_table.shape_string());
    require_last_dim_contiguous(a.block_table, "page_table");
    if (a.k_cache.shape[1] < 1)
      fail(Kind::kValue, "k_cache", "page_size (k_cache.shape[1]) >= 1", str(a.k_cache.shape[1]));
  } else if (!a.cache_batch_idx.given() && a.k_cache.shape[0] < batch) {
    fail(Kind::kValue, "k_cache", "at least B=" + str(batch) + " cache rows without cache_batch_idx",
         str(a.k_cache.shape[0]));
  }
}

}  // namespace flashseek
