// The one Python binding: torch tensors in, flashseek::TensorView out, then the C++ API. No kernel header is
// included here. Errors from validation arrive as flashseek::Error and leave as TypeError / ValueError /
// NotImplementedError naming the argument.
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAGuard.h>
#include <torch/extension.h>

#include <optional>
#include <string>

#include "flashseek/flashseek.h"

namespace {

using flashseek::DType;
using flashseek::TensorView;
using OptTensor = std::optional<at::Tensor>;

DType to_dtype(at::ScalarType t) {
  switch (t) {
    case at::kHalf: return DType::kFloat16;
    case at::kBFloat16: return DType::kBFloat16;
    case at::kFloat8_e4m3fn: return DType::kFloat8E4M3;
    case at::kFloat: return DType::kFloat32;
    case at::kInt: return DType::kInt32;
    case at::kLong: return DType::kInt64;
    default: return DType::kOther;
  }
}

TensorView view(const at::Tensor& t) {
  TensorView v;
  if (!t.defined()) return v;
  v.data = t.data_ptr();
  v.dtype = to_dtype(t.scalar_type());
  v.rank = static_cast<int>(t.dim());
  if (v.rank > flashseek::kMaxTensorRank) v.rank = flashseek::kMaxTensorRank + 1;  // validation reports it
  const int copy = std::min<int>(static_cast<int>(t.dim()), flashseek::kMaxTensorRank);
  for (int i = 0; i < copy; ++i) {
    v.shape[i] = t.size(i);
    v.stride[i] = t.stride(i);
  }
  v.device = t.is_cuda() ? t.get_device() : -1;
  return v;
}

TensorView view(const OptTensor& t) { return t.has_value() ? view(*t) : TensorView{}; }

void* current_stream() { return at::cuda::getCurrentCUDAStream().stream(); }

std::tuple<at::Tensor, OptTensor> varlen_fwd(
    const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, OptTensor out, const OptTensor& cu_seqlens_q,
    const OptTensor& cu_seqlens_k, const OptTensor& seqused_k, const OptTensor& block_table, const OptTensor& q_v,
    const OptTensor& s_aux, const OptTensor& scheduler_metadata, const OptTensor& q_descale,
    const OptTensor& k_descale, const OptTensor& v_descale, const OptTensor& leftpad_k,
    const OptTensor& cache_batch_idx, const OptTensor& cp_tot_seqused_k, int64_t max_seqlen_q, int64_t max_seqlen_k,
    int64_t fixed_seqlen_q, double softmax_scale, bool causal, int64_t window_left, int64_t window_right,
    double softcap, int64_t num_splits, bool return_lse, double dropout_p, bool has_alibi, bool return_attn_probs,
    int64_t cp_world_size, int64_t cp_rank) {
  if (q.dim() != 3) {
    throw flashseek::Error(flashseek::Error::Kind::kValue,
                           "q: expected 3 dims (total_q, num_heads, head_dim), got " + std::to_string(q.dim()));
  }
  if (v.dim() != 3 && v.dim() != 4) {
    throw flashseek::Error(flashseek::Error::Kind::kValue,
                           "v: expected 3 dims (varlen) or 4 dims (paged / batched cache), got " +
                               std::to_string(v.dim()));
  }
  const c10::cuda::OptionalCUDAGuard guard(q.is_cuda() ? std::optional<c10::Device>(q.device()) : std::nullopt);
  const int64_t total_q = q.size(0), num_heads_q = q.size(1), head_dim_v = v.size(-1);
  if (!out.has_value()) {
    // fp8 q writes bf16 out; otherwise out has q's dtype.
    const auto out_dtype = q.scalar_type() == at::kFloat8_e4m3fn ? at::kBFloat16 : q.scalar_type();
    out = at::empty({total_q, num_heads_q, head_dim_v}, q.options().dtype(out_dtype));
  }
  OptTensor lse;
  if (return_lse) lse = at::empty({num_heads_q, total_q}, q.options().dtype(at::kFloat));

  flashseek::AttentionArgs a;
  a.q = view(q);
  a.k = view(k);
  a.v = view(v);
  a.out = view(out);
  a.softmax_lse = view(lse);
  a.cu_seqlens_q = view(cu_seqlens_q);
  a.cu_seqlens_k = view(cu_seqlens_k);
  a.seqused_k = view(seqused_k);
  a.block_table = view(block_table);
  a.q_v = view(q_v);
  a.s_aux = view(s_aux);
  a.scheduler_metadata = view(scheduler_metadata);
  a.q_descale = view(q_descale);
  a.k_descale = view(k_descale);
  a.v_descale = view(v_descale);
  a.leftpad_k = view(leftpad_k);
  a.cache_batch_idx = view(cache_batch_idx);
  a.cp_tot_seqused_k = view(cp_tot_seqused_k);
  a.max_seqlen_q = max_seqlen_q;
  a.max_seqlen_k = max_seqlen_k;
  a.fixed_seqlen_q = fixed_seqlen_q;
  a.softmax_scale = static_cast<float>(softmax_scale);
  a.causal = causal;
  a.window_left = static_cast<int>(window_left);
  a.window_right = static_cast<int>(window_right);
  a.softcap = static_cast<float>(softcap);
  a.num_splits = static_cast<int>(num_splits);
  a.dropout_p = static_cast<float>(dropout_p);
  a.has_alibi = has_alibi;
  a.return_attn_probs = return_attn_probs;
  a.cp_world_size = static_cast<int>(cp_world_size);
  a.cp_rank = static_cast<int>(cp_rank);
  flashseek::validate(a);

  const flashseek::LaunchPlan plan = flashseek::make_plan(a, flashseek::query_device(q.get_device()));
  at::Tensor workspace;
  if (plan.workspace_bytes > 0) {
    workspace = at::empty({static_cast<int64_t>(plan.workspace_bytes)}, q.options().dtype(at::kByte));
  }
  flashseek::run(a, plan, workspace.defined() ? workspace.data_ptr() : nullptr, current_stream());
  return {*out, lse};
}

flashseek::DType dtype_from_name(const std::string& name) {
  if (name == "bfloat16") return DType::kBFloat16;
  if (name == "float16" || name == "half") return DType::kFloat16;
  if (name == "float8_e4m3fn") return DType::kFloat8E4M3;
  throw flashseek::Error(flashseek::Error::Kind::kType,
                         "qkv_dtype: expected torch.bfloat16 or torch.float16, got torch." + name);
}

at::Tensor scheduler_metadata(int64_t batch_size, int64_t max_seqlen_q, int64_t max_seqlen_k, int64_t num_heads_q,
                              int64_t num_heads_kv, int64_t headdim, int64_t headdim_v, const std::string& dtype,
                              const at::Tensor& cache_seqlens, const OptTensor& cu_seqlens_q, int64_t page_size,
                              bool causal, int64_t window_left, int64_t window_right, bool has_softcap,
                              int64_t num_splits) {
  const c10::cuda::OptionalCUDAGuard guard(
      cache_seqlens.is_cuda() ? std::optional<c10::Device>(cache_seqlens.device()) : std::nullopt);
  flashseek::SchedulerArgs s;
  s.batch_size = static_cast<int>(batch_size);
  s.max_seqlen_q = max_seqlen_q;
  s.max_seqlen_k = max_seqlen_k;
  s.num_heads_q = static_cast<int>(num_heads_q);
  s.num_heads_kv = static_cast<int>(num_heads_kv);
  s.headdim = static_cast<int>(headdim);
  s.headdim_v = static_cast<int>(headdim_v);
  s.qkv_dtype = dtype_from_name(dtype);
  s.cache_seqlens = view(cache_seqlens);
  s.cu_seqlens_q = view(cu_seqlens_q);
  s.page_size = static_cast<int>(page_size);
  s.causal = causal;
  s.window_left = static_cast<int>(window_left);
  s.window_right = static_cast<int>(window_right);
  s.has_softcap = has_softcap;
  s.num_splits = static_cast<int>(num_splits);
  const int64_t ints = flashseek::SchedulerMetadataLayout::total_ints(std::max<int64_t>(batch_size, 0));
  at::Tensor metadata = at::empty({ints}, cache_seqlens.options().dtype(at::kInt));
  s.metadata_out = view(metadata);
  flashseek::validate(s);
  const flashseek::LaunchPlan plan = flashseek::make_plan(s, flashseek::query_device(cache_seqlens.get_device()));
  flashseek::compute_scheduler_metadata(s, plan, current_stream());
  return metadata;
}

void merge_attn_states(const at::Tensor& out, const at::Tensor& prefix_out, const at::Tensor& prefix_lse,
                       const at::Tensor& suffix_out, const at::Tensor& suffix_lse, const OptTensor& out_lse) {
  const c10::cuda::OptionalCUDAGuard guard(out.is_cuda() ? std::optional<c10::Device>(out.device()) : std::nullopt);
  flashseek::MergeArgs m;
  m.out = view(out);
  m.prefix_out = view(prefix_out);
  m.prefix_lse = view(prefix_lse);
  m.suffix_out = view(suffix_out);
  m.suffix_lse = view(suffix_lse);
  m.out_lse = view(out_lse);
  flashseek::validate(m);
  flashseek::run(m, current_stream());
}

at::Tensor append_kv(const at::Tensor& q, const at::Tensor& k_cache, const at::Tensor& v_cache, const OptTensor& k,
                     const OptTensor& v, const OptTensor& block_table, const at::Tensor& cache_seqlens,
                     const OptTensor& cache_batch_idx, const OptTensor& leftpad_k, const OptTensor& rotary_cos,
                     const OptTensor& rotary_sin, bool rotary_interleaved, bool q_positions_advance) {
  const c10::cuda::OptionalCUDAGuard guard(q.is_cuda() ? std::optional<c10::Device>(q.device()) : std::nullopt);
  flashseek::AppendKVArgs a;
  a.k_cache = view(k_cache);
  a.v_cache = view(v_cache);
  a.k_new = view(k);
  a.v_new = view(v);
  a.block_table = view(block_table);
  a.cache_seqlens = view(cache_seqlens);
  a.cache_batch_idx = view(cache_batch_idx);
  a.leftpad_k = view(leftpad_k);
  a.q = view(q);
  a.rotary_cos = view(rotary_cos);
  a.rotary_sin = view(rotary_sin);
  a.rotary_interleaved = rotary_interleaved;
  a.causal = q_positions_advance;
  at::Tensor q_rotated;
  if (rotary_cos.has_value()) {
    q_rotated = at::empty_like(q);
    a.q_rotated = view(q_rotated);
  }
  flashseek::validate(a);
  flashseek::run(a, current_stream());
  return q_rotated.defined() ? q_rotated : q;
}

}  // namespace

PYBIND11_MODULE(_C, m) {
  m.doc() = "flashseek kernels (Hopper forward attention)";
  pybind11::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const flashseek::Error& e) {
      switch (e.kind()) {
        case flashseek::Error::Kind::kType: PyErr_SetString(PyExc_TypeError, e.what()); break;
        case flashseek::Error::Kind::kValue: PyErr_SetString(PyExc_ValueError, e.what()); break;
        case flashseek::Error::Kind::kNotSupported: PyErr_SetString(PyExc_NotImplementedError, e.what()); break;
        default: PyErr_SetString(PyExc_RuntimeError, e.what()); break;
      }
    }
  });
  m.def("varlen_fwd", &varlen_fwd);
  m.def("scheduler_metadata", &scheduler_metadata);
  m.def("merge_attn_states", &merge_attn_states);
  m.def("append_kv", &append_kv);
}
