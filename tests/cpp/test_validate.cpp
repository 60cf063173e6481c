// CPU tests of the argument validation: valid calls of each KV mode pass and set batch_size; a table of bad
// calls, each breaking one rule, must fail with the right Error::Kind and a message naming the argument, the
// rule and what came. No device memory is touched: data pointers are fake addresses.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <limits>
#include <ostream>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "../../bench/host/dense_view.h"
#include "flashseek/flashseek.h"

namespace flashseek {
namespace {

using Kind = Error::Kind;

constexpr DType kF16 = DType::kFloat16;
constexpr DType kBF16 = DType::kBFloat16;
constexpr DType kF32 = DType::kFloat32;
constexpr DType kI32 = DType::kInt32;
constexpr DType kI64 = DType::kInt64;
constexpr DType kFP8 = DType::kFloat8E4M3;

// Each tensor gets its own fake, 16-byte aligned address, so a mixed-up pointer would show in a debugger.
uintptr_t next_address() {
  static uintptr_t address = 0x10000;
  return address += 0x100000;
}

void set_contiguous_strides(TensorView& t) {
  int64_t stride = 1;
  for (int i = t.rank - 1; i >= 0; --i) {
    t.stride[i] = stride;
    stride *= t.shape[i];
  }
}

TensorView tensor(DType dtype, std::initializer_list<int64_t> shape, int device = 0) {
  return dense_view(dtype, shape, next_address(), device);
}

// Changes one size and keeps the tensor contiguous.
void resize(TensorView& t, int dim, int64_t size) {
  t.shape[dim < 0 ? t.rank + dim : dim] = size;
  set_contiguous_strides(t);
}

// A batch of B=3 sequences of 4 queries, Hq=8, Hkv=2, d=dv=128, bf16.
constexpr int64_t kB = 3, kSq = 4, kTotalQ = kB * kSq, kHq = 8, kHkv = 2, kD = 128;
constexpr int64_t kTotalK = 100, kNumBlocks = 16, kPageSize = 16, kMaxBlocks = 5, kCacheLen = 64;

enum class Mode { kVarlen, kPaged, kBatched };

AttentionArgs make_args(Mode mode) {
  AttentionArgs a;
  a.q = tensor(kBF16, {kTotalQ, kHq, kD});
  a.out = tensor(kBF16, {kTotalQ, kHq, kD});
  a.softmax_lse = tensor(kF32, {kHq, kTotalQ});
  a.cu_seqlens_q = tensor(kI32, {kB + 1});
  a.max_seqlen_q = kSq;
  a.max_seqlen_k = kCacheLen;
  switch (mode) {
    case Mode::kVarlen:
      a.k = tensor(kBF16, {kTotalK, kHkv, kD});
      a.cu_seqlens_k = tensor(kI32, {kB + 1});
      break;
    case Mode::kPaged:
      a.k = tensor(kBF16, {kNumBlocks, kPageSize, kHkv, kD});
      a.block_table = tensor(kI32, {kB, kMaxBlocks});
      a.seqused_k = tensor(kI32, {kB});
      break;
    case Mode::kBatched:
      a.k = tensor(kBF16, {kB, kCacheLen, kHkv, kD});
      a.seqused_k = tensor(kI32, {kB});
      break;
  }
  a.v = a.k;
  a.v.data = reinterpret_cast<void*>(next_address());
  return a;
}

// Runs `call`, which must throw Error of `kind` whose message contains every one of `parts`.
void expect_error(const std::function<void()>& call, Kind kind, const std::vector<std::string>& parts) {
  try {
    call();
  } catch (const Error& e) {
    EXPECT_EQ(static_cast<int>(e.kind()), static_cast<int>(kind)) << "message: " << e.what();
    for (const std::string& part : parts)
      EXPECT_NE(std::string(e.what()).find(part), std::string::npos)
          << "message \"" << e.what() << "\" lacks \"" << part << "\"";
    return;
  }
  ADD_FAILURE() << "no Error thrown";
}

// ---- valid calls ----------------------------------------------------------------------------------------------

TEST(ValidateAttention, ValidCallsOfEachModePassAndSetBatchSize) {
  for (Mode mode : {Mode::kVarlen, Mode::kPaged, Mode::kBatched}) {
    AttentionArgs a = make_args(mode);
    EXPECT_NO_THROW(validate(a)) << "mode " << static_cast<int>(mode);
    EXPECT_EQ(a.batch_size, kB);
  }
}

TEST(ValidateAttention, ValidVariantsPass) {
  const std::vector<std::pair<const char*, std::function<void(AttentionArgs&)>>> variants = {
      {"empty batch", [](AttentionArgs& a) {
         resize(a.cu_seqlens_q, 0, 1);
         resize(a.cu_seqlens_k, 0, 1);
         resize(a.q, 0, 0);
         resize(a.out, 0, 0);
         resize(a.softmax_lse, 1, 0);
         a.max_seqlen_q = 0;
         a.max_seqlen_k = 0;
       }},
      {"MLA prefill head dims (192, 128)", [](AttentionArgs& a) {
         resize(a.q, -1, 192);
         resize(a.k, -1, 192);
         resize(a.v, -1, 128);
         resize(a.out, -1, 128);
       }},
      {"head dim 40, MQA", [](AttentionArgs& a) {
         for (TensorView* t : {&a.q, &a.k, &a.v, &a.out}) resize(*t, -1, 40);
         resize(a.k, 1, 1);
         resize(a.v, 1, 1);
       }},
      {"q, out as views of padded buffers", [](AttentionArgs& a) {
         a.q.stride[0] = 3 * kHq * kD;
         a.out.stride[0] = 2 * kHq * kD + 8;
       }},
      {"varlen with seqused_k too", [](AttentionArgs& a) { a.seqused_k = tensor(kI32, {kB}); }},
      {"no lse, sinks, scheduler metadata, leftpad", [](AttentionArgs& a) {
         a.softmax_lse = TensorView{};
         a.s_aux = tensor(kBF16, {kHq});
         a.scheduler_metadata = tensor(kI32, {SchedulerMetadataLayout::total_ints(kB)});
         a.leftpad_k = tensor(kI32, {kB});
       }},
      {"fp8: e4m3 q, k, v, bf16 out, (B, Hkv) descales", [](AttentionArgs& a) {
         a.q.dtype = a.k.dtype = a.v.dtype = kFP8;
         a.out.dtype = kBF16;
         a.q_descale = tensor(kF32, {kB, kHkv});
         a.k_descale = tensor(kF32, {kB, kHkv});
         a.v_descale = tensor(kF32, {kB, kHkv});
       }},
      {"fp8: stride-0 descales (a broadcast scalar) and size-1 dims", [](AttentionArgs& a) {
         a.q.dtype = a.k.dtype = a.v.dtype = kFP8;
         a.q_descale = tensor(kF32, {kB, kHkv});
         a.q_descale.stride[0] = a.q_descale.stride[1] = 0;
         a.k_descale = tensor(kF32, {1, kHkv});
         a.v_descale = tensor(kF32, {kB, 1});
       }},
      {"fp8 head dim 40 (8-byte rows)", [](AttentionArgs& a) {
         a.q.dtype = a.k.dtype = a.v.dtype = kFP8;
         for (TensorView* t : {&a.q, &a.k, &a.v, &a.out}) resize(*t, -1, 40);
         a.q.data = reinterpret_cast<void*>(0x10008);  // a head-offset view: 8-byte aligned is enough for e4m3
       }},
      {"bf16 q against an fp8 cache", [](AttentionArgs& a) {
         a.k.dtype = a.v.dtype = kFP8;
         a.k_descale = tensor(kF32, {kB, kHkv});
         a.v_descale = tensor(kF32, {kB, kHkv});
       }},
      {"fp16 q against an fp8 cache", [](AttentionArgs& a) {
         a.q.dtype = a.out.dtype = kF16;
         a.k.dtype = a.v.dtype = kFP8;
       }},
      {"descales with a bf16 call (ignored, as FA3 does)", [](AttentionArgs& a) {
         a.q_descale = tensor(kF32, {kB, kHkv});
         a.k_descale = tensor(kF32, {kB, kHkv});
       }},
      {"scalars at their limits", [](AttentionArgs& a) {
         a.softmax_scale = -1.f;
         a.softcap = 30.f;
         a.window_left = 127;
         a.window_right = 0;
         a.causal = true;
         a.num_splits = 1024;
       }},
  };
  for (const auto& [name, change] : variants) {
    AttentionArgs a = make_args(Mode::kVarlen);
    change(a);
    EXPECT_NO_THROW(validate(a)) << name;
    EXPECT_EQ(a.batch_size, a.cu_seqlens_q.shape[0] - 1) << name;
  }
}

TEST(ValidateAttention, PagedHeadMajorCacheAndWideBlockTableView) {
  AttentionArgs a = make_args(Mode::kPaged);
  // HND cache: (num_blocks, page, Hkv, d) viewed from a (num_blocks, Hkv, page, d) buffer.
  for (TensorView* t : {&a.k, &a.v}) {
    t->stride[0] = kHkv * kPageSize * kD;
    t->stride[1] = kD;
    t->stride[2] = kPageSize * kD;
  }
  a.block_table.stride[0] = kMaxBlocks + 11;  // a column view of a wider table
  EXPECT_NO_THROW(validate(a));
  a = make_args(Mode::kPaged);
  resize(a.k, 1, 1);  // page size 1
  resize(a.v, 1, 1);
  EXPECT_NO_THROW(validate(a));
}

TEST(ValidateAttention, BatchedQueryAndCacheBatchIdx) {
  AttentionArgs a = make_args(Mode::kBatched);
  a.cu_seqlens_q = TensorView{};
  a.fixed_seqlen_q = kSq;
  resize(a.k, 0, 1);  // fewer cache rows than sequences: cache_batch_idx picks them
  resize(a.v, 0, 1);
  a.cache_batch_idx = tensor(kI32, {kB});
  EXPECT_NO_THROW(validate(a));
  EXPECT_EQ(a.batch_size, kB);
}

// ---- MLA decode (q_v) and context parallel ------------------------------------------------------------------

// MLA decode as vLLM calls it: q (T, Hq, 64), q_v (T, Hq, 512), k and v overlapping views of one paged
// (num_blocks, page, 1, 576) cache: v = row[..., :512], k = row[..., 512:].
AttentionArgs make_mla_args() {
  AttentionArgs a = make_args(Mode::kPaged);
  const TensorView row = tensor(kBF16, {kNumBlocks, kPageSize, 1, 576});
  a.v = row;
  a.v.shape[3] = 512;
  a.k = row;
  a.k.shape[3] = 64;
  a.k.data = static_cast<char*>(row.data) + 512 * 2;
  a.q = tensor(kBF16, {kTotalQ, kHq, 64});
  a.q_v = tensor(kBF16, {kTotalQ, kHq, 512});
  a.out = tensor(kBF16, {kTotalQ, kHq, 512});
  return a;
}

TEST(ValidateMla, DecodeCallsPass) {
  AttentionArgs a = make_mla_args();
  EXPECT_NO_THROW(validate(a));
  a = make_mla_args();
  a.cp_world_size = 8;
  a.cp_rank = 7;
  a.cp_tot_seqused_k = tensor(kI32, {kB});
  a.causal = true;
  a.num_splits = 32;
  EXPECT_NO_THROW(validate(a)) << "context parallel with splits";
  a = make_mla_args();
  a.q_v.stride[0] = 3 * kHq * 512;  // a view of a wider buffer
  a.window_left = 100;              // the mask's window works for the MLA kernel too
  EXPECT_NO_THROW(validate(a));
  a = make_args(Mode::kPaged);  // context parallel for the normal kernel
  a.cp_world_size = 2;
  a.cp_rank = 1;
  a.cp_tot_seqused_k = tensor(kI32, {kB});
  EXPECT_NO_THROW(validate(a));
}

TEST(ValidateMla, BadCallsFail) {
  using A = AttentionArgs;
  const std::vector<std::tuple<const char*, std::function<void(A&)>, Kind, std::vector<std::string>>> table = {
      {"q_v dtype", [](A& a) { a.q_v.dtype = kF16; }, Kind::kType, {"q_v: expected dtype bfloat16 (the dtype of q)"}},
      {"q_v shape", [](A& a) { resize(a.q_v, 1, kHq / 2); }, Kind::kValue,
       {"q_v: expected shape (12, 8, 512) (total_q, Hq, dv)", "got (12, 4, 512)"}},
      {"q_v last dim strided", [](A& a) { a.q_v.stride[2] = 2; }, Kind::kValue,
       {"q_v: expected the last dim contiguous"}},
      {"q_v on another device", [](A& a) { a.q_v.device = 1; }, Kind::kValue, {"q_v: expected a CUDA tensor on cuda:0"}},
      {"softcap", [](A& a) { a.softcap = 30.f; }, Kind::kNotSupported,
       {"softcap: expected 0 with q_v", "got 30"}},
      {"sinks", [](A& a) { a.s_aux = tensor(kF32, {kHq}); }, Kind::kNotSupported, {"s_aux: expected None with q_v"}},
      {"q_v missing for 64/512", [](A& a) { a.q_v = TensorView{}; }, Kind::kValue,
       {"q_v: expected a tensor (total_q, Hq, 512)", "got None"}},
      {"d 128 with q_v", [](A& a) { resize(a.q, -1, 128); resize(a.k, -1, 128); }, Kind::kNotSupported,
       {"q_v: expected head dims d=64", "got d=128, dv=512"}},
  };
  for (const auto& [name, breaks, kind, parts] : table) {
    SCOPED_TRACE(name);
    A a = make_mla_args();
    breaks(a);
    expect_error([&] { validate(a); }, kind, parts);
  }
}

TEST(ValidateMla, SchedulerAcceptsMlaHeadDims) {
  SchedulerArgs s;
  s.batch_size = kB;
  s.max_seqlen_q = 1;
  s.max_seqlen_k = 4096;
  s.num_heads_q = 128;
  s.num_heads_kv = 1;
  s.headdim = 64;
  s.headdim_v = 512;
  s.cache_seqlens = tensor(kI32, {kB});
  s.page_size = 64;
  EXPECT_NO_THROW(validate(s));
}

// ---- the table of bad calls -------------------------------------------------------------------------------

struct BadCall {
  const char* name;  // the test's name: letters, digits and underscores
  Mode mode;
  std::function<void(AttentionArgs&)> breaks;
  Kind kind;
  std::vector<std::string> message_has;
};

void set_head_dim(AttentionArgs& a, int64_t d) {
  for (TensorView* t : {&a.q, &a.k, &a.v, &a.out}) resize(*t, -1, d);
}

const std::vector<BadCall>& bad_calls() {
  const Mode V = Mode::kVarlen, P = Mode::kPaged, C = Mode::kBatched;
  const Kind kValue = Kind::kValue, kType = Kind::kType, kNS = Kind::kNotSupported;
  static const std::vector<BadCall> table = {
      // Missing arguments.
      {"q_missing", V, [](AttentionArgs& a) { a.q = TensorView{}; }, kValue, {"q: expected a tensor", "got None"}},
      {"k_missing", V, [](AttentionArgs& a) { a.k = TensorView{}; }, kValue, {"k: expected a tensor", "got None"}},
      {"out_missing", V, [](AttentionArgs& a) { a.out = TensorView{}; }, kValue,
       {"out: expected a tensor", "allocates", "got None"}},
      // Not supported yet.
      {"q_v_with_d128", V, [](AttentionArgs& a) { a.q_v = tensor(kBF16, {kTotalQ, kHq, 128}); }, kNS,
       {"q_v: expected head dims d=64 (q, k) and dv=512", "got d=128, dv=128"}},
      {"context_parallel_without_totals", P, [](AttentionArgs& a) { a.cp_world_size = 2; }, kValue,
       {"cp_tot_seqused_k: expected a tensor when cp_world_size > 1", "got None"}},
      {"context_parallel_rank_out_of_range", P,
       [](AttentionArgs& a) {
         a.cp_world_size = 4;
         a.cp_rank = 4;
         a.cp_tot_seqused_k = tensor(kI32, {kB});
       },
       kValue, {"cp_rank: expected a rank in [0, cp_world_size=4)", "got 4"}},
      {"context_parallel_totals_wrong_size", P,
       [](AttentionArgs& a) {
         a.cp_world_size = 2;
         a.cp_tot_seqused_k = tensor(kI32, {kB + 1});
       },
       kValue, {"cp_tot_seqused_k: expected shape (3,)", "got (4,)"}},
      {"context_parallel_totals_int64", P,
       [](AttentionArgs& a) {
         a.cp_world_size = 2;
         a.cp_tot_seqused_k = tensor(kI64, {kB});
       },
       kType, {"cp_tot_seqused_k: expected dtype int32"}},
      {"context_parallel_with_window", P,
       [](AttentionArgs& a) {
         a.cp_world_size = 2;
         a.cp_tot_seqused_k = tensor(kI32, {kB});
         a.causal = true;
         a.window_left = 127;
         a.window_right = 0;
       },
       kNS, {"window_size: expected (-1, -1) when cp_world_size > 1", "got (127, 0)"}},
      {"cp_rank_without_cp", P, [](AttentionArgs& a) { a.cp_rank = 1; }, kValue,
       {"cp_rank: expected 0 when cp_world_size is 1", "got 1"}},
      {"dropout", V, [](AttentionArgs& a) { a.dropout_p = 0.1f; }, kNS,
       {"dropout_p: expected 0", "not supported yet", "got 0.1"}},
      {"alibi", V, [](AttentionArgs& a) { a.has_alibi = true; }, kNS,
       {"alibi_slopes: expected None", "not supported yet", "got a tensor"}},
      {"return_attn_probs", V, [](AttentionArgs& a) { a.return_attn_probs = true; }, kNS,
       {"return_attn_probs: expected False", "not supported yet", "got True"}},
      // Scalars.
      {"max_seqlen_q_negative", V, [](AttentionArgs& a) { a.max_seqlen_q = -1; }, kValue,
       {"max_seqlen_q: expected >= 0", "got -1"}},
      {"max_seqlen_k_negative", P, [](AttentionArgs& a) { a.max_seqlen_k = -3; }, kValue,
       {"max_seqlen_k: expected >= 0", "got -3"}},
      {"max_seqlen_q_zero_with_tokens", V, [](AttentionArgs& a) { a.max_seqlen_q = 0; }, kValue,
       {"max_seqlen_q: expected >= 1", "total_q=12", "got 0"}},
      {"window_left_below_minus_one", V, [](AttentionArgs& a) { a.window_left = -2; a.window_right = 0; }, kValue,
       {"window_size: expected", ">= -1", "got (-2, 0)"}},
      {"window_right_below_minus_one", P, [](AttentionArgs& a) { a.window_right = -5; }, kValue,
       {"window_size: expected", ">= -1", "got (-1, -5)"}},
      {"softcap_negative", V, [](AttentionArgs& a) { a.softcap = -1.f; }, kValue,
       {"softcap: expected a finite value >= 0", "got -1"}},
      {"softcap_infinite", V, [](AttentionArgs& a) { a.softcap = std::numeric_limits<float>::infinity(); }, kValue,
       {"softcap: expected a finite value", "got inf"}},
      {"softmax_scale_nan", V, [](AttentionArgs& a) { a.softmax_scale = std::nanf(""); }, kValue,
       {"softmax_scale: expected a finite value", "got nan"}},
      {"num_splits_negative", V, [](AttentionArgs& a) { a.num_splits = -1; }, kValue,
       {"num_splits: expected a value in [0, 1024]", "got -1"}},
      {"num_splits_too_many", P, [](AttentionArgs& a) { a.num_splits = 2000; }, kValue,
       {"num_splits: expected a value in [0, 1024]", "got 2000"}},
      // Dtypes.
      {"q_float32", V, [](AttentionArgs& a) { a.q.dtype = a.k.dtype = a.v.dtype = a.out.dtype = kF32; }, kType,
       {"q: expected dtype float16, bfloat16 or float8_e4m3fn", "got float32"}},
      {"k_dtype_differs", V, [](AttentionArgs& a) { a.k.dtype = kF16; }, kType,
       {"k: expected dtype bfloat16 (the dtype of q)", "got float16"}},
      {"v_dtype_differs", P, [](AttentionArgs& a) { a.v.dtype = kF16; }, kType,
       {"v: expected dtype bfloat16 (the dtype of q)", "got float16"}},
      {"out_dtype_differs", V, [](AttentionArgs& a) { a.out.dtype = kF32; }, kType,
       {"out: expected dtype bfloat16", "got float32"}},
      // fp8 dtype combinations and descales.
      {"fp8_q_bf16_k", V, [](AttentionArgs& a) { a.q.dtype = a.v.dtype = kFP8; }, kType,
       {"k: expected dtype float8_e4m3fn (q is float8_e4m3fn", "got bfloat16"}},
      {"fp8_q_bf16_v", P, [](AttentionArgs& a) { a.q.dtype = a.k.dtype = kFP8; }, kType,
       {"v: expected dtype float8_e4m3fn (q is float8_e4m3fn", "got bfloat16"}},
      {"fp8_q_fp16_out", V, [](AttentionArgs& a) { a.q.dtype = a.k.dtype = a.v.dtype = kFP8; a.out.dtype = kF16; },
       kType, {"out: expected dtype bfloat16 (the output of an fp8 q is bfloat16)", "got float16"}},
      {"bf16_q_fp8_k_bf16_v", P, [](AttentionArgs& a) { a.k.dtype = kFP8; }, kType,
       {"v: expected dtype float8_e4m3fn (the dtype of k: an fp8 cache holds k and v)", "got bfloat16"}},
      {"bf16_q_bf16_k_fp8_v", P, [](AttentionArgs& a) { a.v.dtype = kFP8; }, kType,
       {"v: expected dtype bfloat16 (the dtype of q)", "got float8_e4m3fn"}},
      {"k_fp16_with_bf16_q", V, [](AttentionArgs& a) { a.k.dtype = kF16; }, kType,
       {"k: expected dtype bfloat16 (the dtype of q) or float8_e4m3fn (an fp8 KV cache)", "got float16"}},
      {"q_descale_bf16", P, [](AttentionArgs& a) { a.q_descale = tensor(kBF16, {kB, kHkv}); }, kType,
       {"q_descale: expected dtype float32", "got bfloat16"}},
      {"k_descale_wrong_shape", P,
       [](AttentionArgs& a) { a.k.dtype = a.v.dtype = kFP8; a.k_descale = tensor(kF32, {kB, kHq}); }, kValue,
       {"k_descale: expected shape (B, Hkv) = (3, 2)", "got (3, 8)"}},
      {"v_descale_rank_1", V, [](AttentionArgs& a) { a.v_descale = tensor(kF32, {kB}); }, kValue,
       {"v_descale: expected shape (B, Hkv) = (3, 2)", "got (3,)"}},
      {"v_descale_negative_stride", V,
       [](AttentionArgs& a) { a.v_descale = tensor(kF32, {kB, kHkv}); a.v_descale.stride[0] = -2; }, kValue,
       {"v_descale: expected non-negative strides", "got strides (-2, 1)"}},
      {"q_descale_on_host", V, [](AttentionArgs& a) { a.q_descale = tensor(kF32, {kB, kHkv}, -1); }, kValue,
       {"q_descale: expected a CUDA tensor on cuda:0 (the device of q)", "got a host tensor"}},
      {"fp8_k_row_stride_not_8_bytes", P,
       [](AttentionArgs& a) { a.k.dtype = a.v.dtype = kFP8; a.k.stride[1] = 2 * kD + 4; }, kValue,
       {"k: expected", "multiples of 8 elements (8-byte aligned rows)"}},
      {"fp8_q_pointer_not_8_bytes", V,
       [](AttentionArgs& a) {
         a.q.dtype = a.k.dtype = a.v.dtype = kFP8;
         a.q.data = reinterpret_cast<void*>(0x10004);
       },
       kValue, {"q: expected a data pointer aligned to 8 bytes", "got 0x10004"}},
      {"lse_not_float32", V, [](AttentionArgs& a) { a.softmax_lse.dtype = kBF16; }, kType,
       {"softmax_lse: expected dtype float32", "got bfloat16"}},
      {"cu_seqlens_q_int64", V, [](AttentionArgs& a) { a.cu_seqlens_q.dtype = kI64; }, kType,
       {"cu_seqlens_q: expected dtype int32", "got int64"}},
      {"block_table_int64", P, [](AttentionArgs& a) { a.block_table.dtype = kI64; }, kType,
       {"block_table: expected dtype int32", "got int64"}},
      {"seqused_k_int64", C, [](AttentionArgs& a) { a.seqused_k.dtype = kI64; }, kType,
       {"seqused_k: expected dtype int32", "got int64"}},
      {"scheduler_metadata_int64", P,
       [](AttentionArgs& a) { a.scheduler_metadata = tensor(kI64, {SchedulerMetadataLayout::total_ints(kB)}); },
       kType, {"scheduler_metadata: expected dtype int32", "got int64"}},
      {"s_aux_int32", V, [](AttentionArgs& a) { a.s_aux = tensor(kI32, {kHq}); }, kType,
       {"s_aux: expected dtype float32, bfloat16 or float16", "got int32"}},
      // Devices.
      {"q_on_host", V, [](AttentionArgs& a) { a.q.device = -1; }, kValue,
       {"q: expected a CUDA tensor", "got a host tensor"}},
      {"v_on_other_device", V, [](AttentionArgs& a) { a.v.device = 1; }, kValue,
       {"v: expected a CUDA tensor on cuda:0 (the device of q)", "got cuda:1"}},
      {"seqused_k_on_host", P, [](AttentionArgs& a) { a.seqused_k.device = -1; }, kValue,
       {"seqused_k: expected a CUDA tensor on cuda:0", "got a host tensor"}},
      {"cu_seqlens_k_on_host", V, [](AttentionArgs& a) { a.cu_seqlens_k.device = -1; }, kValue,
       {"cu_seqlens_k: expected a CUDA tensor on cuda:0", "got a host tensor"}},
      {"s_aux_on_host", V, [](AttentionArgs& a) { a.s_aux = tensor(kF32, {kHq}, -1); }, kValue,
       {"s_aux: expected a CUDA tensor on cuda:0", "got a host tensor"}},
      // Ranks, strides, alignment.
      {"q_rank_2", V, [](AttentionArgs& a) { a.q.rank = 2; }, kValue,
       {"q: expected rank 3 (total_q, Hq, d)", "got rank 2 with shape (12, 8)"}},
      {"k_rank_2", V, [](AttentionArgs& a) { a.k.rank = 2; }, kValue,
       {"k: expected rank 3", "or rank 4", "got rank 2"}},
      {"v_shape_differs_from_k", V, [](AttentionArgs& a) { resize(a.v, 0, 99); }, kValue,
       {"v: expected shape (100, 2, dv) matching k", "got (99, 2, 128)"}},
      {"q_last_dim_strided", V, [](AttentionArgs& a) { a.q.stride[2] = 2; }, kValue,
       {"q: expected the last dim contiguous (stride 1)", "got strides (1024, 128, 2)"}},
      {"k_row_stride_unaligned", V, [](AttentionArgs& a) { a.k.stride[0] = 2 * kD + 4; }, kValue,
       {"k: expected", "multiples of 8 elements", "got strides (260, 128, 1)"}},
      {"out_negative_stride", V, [](AttentionArgs& a) { a.out.stride[1] = -128; }, kValue,
       {"out: expected non-negative strides", "got strides (1024, -128, 1)"}},
      {"q_pointer_unaligned", V, [](AttentionArgs& a) { a.q.data = reinterpret_cast<void*>(0x10008); }, kValue,
       {"q: expected a data pointer aligned to 16 bytes", "got 0x10008"}},
      // Head dims and heads.
      {"head_dim_not_multiple_of_8", V, [](AttentionArgs& a) { set_head_dim(a, 100); }, kValue,
       {"q: expected head dim d a multiple of 8 in [8, 256]", "got 100"}},
      {"head_dim_above_256", P, [](AttentionArgs& a) { set_head_dim(a, 264); }, kValue,
       {"q: expected head dim d a multiple of 8 in [8, 256]", "got 264"}},
      {"k_head_dim_differs", V, [](AttentionArgs& a) { resize(a.k, -1, 64); }, kValue,
       {"k: expected head dim equal to q's d=128", "got 64"}},
      {"v_head_dim_differs", V, [](AttentionArgs& a) { resize(a.v, -1, 64); }, kValue,
       {"v: expected head dim dv equal to d=128 (or 128 when d=192)", "got 64"}},
      {"hq_not_multiple_of_hkv", P, [](AttentionArgs& a) { resize(a.k, 2, 3); resize(a.v, 2, 3); }, kValue,
       {"q: expected", "multiple of Hkv=3", "got Hq=8"}},
      {"no_kv_heads", V, [](AttentionArgs& a) { resize(a.k, 1, 0); resize(a.v, 1, 0); }, kValue,
       {"k: expected at least one KV head", "got Hkv=0"}},
      // KV modes.
      {"neither_cu_seqlens_k_nor_seqused_k", V, [](AttentionArgs& a) { a.cu_seqlens_k = TensorView{}; }, kValue,
       {"cu_seqlens_k: expected cu_seqlens_k (varlen KV) or seqused_k", "got neither"}},
      {"varlen_k_without_cu_seqlens_k", V,
       [](AttentionArgs& a) { a.cu_seqlens_k = TensorView{}; a.seqused_k = tensor(kI32, {kB}); }, kValue,
       {"cu_seqlens_k: expected a tensor when k is rank 3", "got None"}},
      {"varlen_with_block_table", V, [](AttentionArgs& a) { a.block_table = tensor(kI32, {kB, kMaxBlocks}); },
       kValue, {"block_table: expected None when k is rank 3", "got a tensor of shape (3, 5)"}},
      {"varlen_with_cache_batch_idx", V, [](AttentionArgs& a) { a.cache_batch_idx = tensor(kI32, {kB}); }, kValue,
       {"cache_batch_idx: expected None when k is rank 3", "got a tensor of shape (3,)"}},
      {"paged_with_cache_batch_idx", P, [](AttentionArgs& a) { a.cache_batch_idx = tensor(kI32, {kB}); }, kValue,
       {"cache_batch_idx: expected None with block_table", "got a tensor of shape (3,)"}},
      {"cu_seqlens_k_with_rank4_k", P, [](AttentionArgs& a) { a.cu_seqlens_k = tensor(kI32, {kB + 1}); }, kValue,
       {"cu_seqlens_k: expected None when k is rank 4", "got a tensor of shape (4,)"}},
      {"page_size_zero", P, [](AttentionArgs& a) { resize(a.k, 1, 0); resize(a.v, 1, 0); }, kValue,
       {"k: expected page_size (k.shape[1]) >= 1", "got 0"}},
      // Batch size and the per-sequence tensors.
      {"cu_seqlens_q_empty", V, [](AttentionArgs& a) { resize(a.cu_seqlens_q, 0, 0); }, kValue,
       {"cu_seqlens_q: expected shape (B+1,)", "got (0,)"}},
      {"cu_seqlens_q_rank_2", V, [](AttentionArgs& a) { a.cu_seqlens_q = tensor(kI32, {2, 2}); }, kValue,
       {"cu_seqlens_q: expected shape (B+1,)", "got (2, 2)"}},
      {"cu_seqlens_q_strided", V, [](AttentionArgs& a) { a.cu_seqlens_q.stride[0] = 2; }, kValue,
       {"cu_seqlens_q: expected a contiguous tensor", "got strides (2,)"}},
      {"no_cu_seqlens_q_nor_fixed_seqlen_q", C, [](AttentionArgs& a) { a.cu_seqlens_q = TensorView{}; }, kValue,
       {"cu_seqlens_q: expected a tensor, or fixed_seqlen_q > 0", "got None with fixed_seqlen_q=0"}},
      {"total_q_not_multiple_of_fixed_seqlen_q", C,
       [](AttentionArgs& a) { a.cu_seqlens_q = TensorView{}; a.fixed_seqlen_q = 5; a.max_seqlen_q = 5; }, kValue,
       {"q: expected total_q = q.shape[0] a multiple of fixed_seqlen_q=5", "got total_q=12"}},
      {"max_seqlen_q_below_fixed_seqlen_q", C,
       [](AttentionArgs& a) { a.cu_seqlens_q = TensorView{}; a.fixed_seqlen_q = kSq; a.max_seqlen_q = 2; }, kValue,
       {"max_seqlen_q: expected >= fixed_seqlen_q=4", "got 2"}},
      {"seqused_k_disagrees_with_fixed_seqlen_q", C,
       [](AttentionArgs& a) { a.cu_seqlens_q = TensorView{}; a.fixed_seqlen_q = kSq; resize(a.seqused_k, 0, 4); },
       kValue, {"seqused_k: expected shape (3,)", "q.shape[0] / fixed_seqlen_q", "got (4,)"}},
      {"cu_seqlens_k_wrong_size", V, [](AttentionArgs& a) { resize(a.cu_seqlens_k, 0, 5); }, kValue,
       {"cu_seqlens_k: expected shape (4,)", "B=3 from cu_seqlens_q", "got (5,)"}},
      {"seqused_k_wrong_size", P, [](AttentionArgs& a) { resize(a.seqused_k, 0, 2); }, kValue,
       {"seqused_k: expected shape (3,)", "B=3", "got (2,)"}},
      {"seqused_k_strided", P, [](AttentionArgs& a) { a.seqused_k.stride[0] = 2; }, kValue,
       {"seqused_k: expected a contiguous tensor", "got strides (2,)"}},
      {"block_table_wrong_rows", P, [](AttentionArgs& a) { resize(a.block_table, 0, 2); }, kValue,
       {"block_table: expected shape (B, max_blocks) with B=3 from cu_seqlens_q", "got (2, 5)"}},
      {"block_table_rank_1", P, [](AttentionArgs& a) { a.block_table = tensor(kI32, {kB}); }, kValue,
       {"block_table: expected rank 2 (B, max_blocks)", "got rank 1 with shape (3,)"}},
      {"block_table_columns_strided", P, [](AttentionArgs& a) { a.block_table.stride[1] = 2; }, kValue,
       {"block_table: expected the last dim contiguous (stride 1)", "got strides (5, 2)"}},
      {"cache_leftpad_wrong_size", C, [](AttentionArgs& a) { a.leftpad_k = tensor(kI32, {kB - 1}); }, kValue,
       {"cache_leftpad: expected shape (3,)", "got (2,)"}},
      {"cache_batch_idx_wrong_size", C, [](AttentionArgs& a) { a.cache_batch_idx = tensor(kI32, {kB + 2}); },
       kValue, {"cache_batch_idx: expected shape (3,)", "got (5,)"}},
      {"batched_cache_too_few_rows", C, [](AttentionArgs& a) { resize(a.k, 0, 2); resize(a.v, 0, 2); }, kValue,
       {"k: expected at least B=3 cache rows", "got 2"}},
      // Outputs and extras.
      {"out_wrong_heads", V, [](AttentionArgs& a) { resize(a.out, 1, 4); }, kValue,
       {"out: expected shape (12, 8, 128) (total_q, Hq, dv)", "got (12, 4, 128)"}},
      {"out_head_dim_not_dv", V,
       [](AttentionArgs& a) {
         set_head_dim(a, 192);
         resize(a.v, -1, 128);
       },
       kValue, {"out: expected shape (12, 8, 128)", "got (12, 8, 192)"}},
      {"lse_transposed", V, [](AttentionArgs& a) { a.softmax_lse = tensor(kF32, {kTotalQ, kHq}); }, kValue,
       {"softmax_lse: expected shape (8, 12) (Hq, total_q)", "got (12, 8)"}},
      {"lse_not_contiguous", V, [](AttentionArgs& a) { a.softmax_lse.stride[0] = 1; a.softmax_lse.stride[1] = kHq; },
       kValue, {"softmax_lse: expected a contiguous tensor", "got strides (1, 8)"}},
      {"s_aux_wrong_size", P, [](AttentionArgs& a) { a.s_aux = tensor(kF32, {kHkv}); }, kValue,
       {"s_aux: expected shape (8,)", "got (2,)"}},
      {"scheduler_metadata_wrong_size", P,
       [](AttentionArgs& a) { a.scheduler_metadata = tensor(kI32, {SchedulerMetadataLayout::total_ints(kB + 1)}); },
       kValue, {"scheduler_metadata: expected shape (11,)", "get_scheduler_metadata", "got (12,)"}},
  };
  return table;
}

// gtest prints a failing parameter with this instead of its bytes.
void PrintTo(const BadCall& bad, std::ostream* os) { *os << bad.name; }

class BadAttentionCall : public ::testing::TestWithParam<BadCall> {};

TEST_P(BadAttentionCall, FailsNamingArgumentRuleAndValue) {
  const BadCall& bad = GetParam();
  AttentionArgs a = make_args(bad.mode);
  bad.breaks(a);
  expect_error([&] { validate(a); }, bad.kind, bad.message_has);
}

INSTANTIATE_TEST_SUITE_P(Table, BadAttentionCall, ::testing::ValuesIn(bad_calls()),
                         [](const ::testing::TestParamInfo<BadCall>& info) { return std::string(info.param.name); });

TEST(ValidateAttention, TableIsLarge) { EXPECT_GE(bad_calls().size(), 40u); }

// ---- get_scheduler_metadata ---------------------------------------------------------------------------------

SchedulerArgs make_scheduler_args() {
  SchedulerArgs s;
  s.batch_size = kB;
  s.max_seqlen_q = kSq;
  s.max_seqlen_k = kCacheLen;
  s.num_heads_q = kHq;
  s.num_heads_kv = kHkv;
  s.headdim = s.headdim_v = kD;
  s.cache_seqlens = tensor(kI32, {kB});
  s.cu_seqlens_q = tensor(kI32, {kB + 1});
  s.page_size = kPageSize;
  s.metadata_out = tensor(kI32, {SchedulerMetadataLayout::total_ints(kB)});
  return s;
}

template <class Args>
struct Bad {
  const char* name;
  std::function<void(Args&)> breaks;
  Kind kind;
  std::vector<std::string> message_has;
};

template <class Args>
void run_table(Args (*make)(), const std::vector<Bad<Args>>& table) {
  for (const Bad<Args>& bad : table) {
    SCOPED_TRACE(bad.name);
    Args args = make();
    bad.breaks(args);
    expect_error([&] { validate(args); }, bad.kind, bad.message_has);
  }
}

TEST(ValidateScheduler, ValidCallsPass) {
  SchedulerArgs s = make_scheduler_args();
  EXPECT_NO_THROW(validate(s));
  s.batch_size = 0;
  s.cache_seqlens = tensor(kI32, {0});
  s.cu_seqlens_q = TensorView{};
  s.metadata_out = TensorView{};
  s.page_size = 0;
  s.qkv_dtype = kF16;
  EXPECT_NO_THROW(validate(s));
  s.qkv_dtype = kFP8;  // an fp8 cache: the fp8 tiles
  EXPECT_NO_THROW(validate(s));
}

TEST(ValidateScheduler, BadCallsFail) {
  using S = SchedulerArgs;
  run_table<S>(make_scheduler_args, {
      {"negative batch", [](S& s) { s.batch_size = -1; }, Kind::kValue, {"batch_size: expected >= 0", "got -1"}},
      {"heads", [](S& s) { s.num_heads_q = 5; }, Kind::kValue,
       {"num_heads_q: expected a positive multiple of num_heads_kv=2", "got 5"}},
      {"no kv heads", [](S& s) { s.num_heads_kv = 0; }, Kind::kValue, {"num_heads_kv: expected >= 1", "got 0"}},
      {"float32", [](S& s) { s.qkv_dtype = kF32; }, Kind::kType,
       {"qkv_dtype: expected float16, bfloat16 or float8_e4m3fn", "got float32"}},
      {"headdim", [](S& s) { s.headdim = s.headdim_v = 100; }, Kind::kValue,
       {"headdim: expected head dim d a multiple of 8 in [8, 256]", "got 100"}},
      {"headdim_v", [](S& s) { s.headdim_v = 64; }, Kind::kValue,
       {"headdim_v: expected head dim dv equal to d=128", "got 64"}},
      {"page size", [](S& s) { s.page_size = -16; }, Kind::kValue, {"page_size: expected >= 0", "got -16"}},
      {"window", [](S& s) { s.window_left = -2; }, Kind::kValue, {"window_size: expected", "got (-2, -1)"}},
      {"splits", [](S& s) { s.num_splits = 1025; }, Kind::kValue, {"num_splits: expected", "got 1025"}},
      {"no cache_seqlens", [](S& s) { s.cache_seqlens = TensorView{}; }, Kind::kValue,
       {"cache_seqlens: expected a tensor", "got None"}},
      {"cache_seqlens int64", [](S& s) { s.cache_seqlens.dtype = kI64; }, Kind::kType,
       {"cache_seqlens: expected dtype int32", "got int64"}},
      {"cache_seqlens on host", [](S& s) { s.cache_seqlens.device = -1; }, Kind::kValue,
       {"cache_seqlens: expected a CUDA tensor", "got a host tensor"}},
      {"cache_seqlens size", [](S& s) { resize(s.cache_seqlens, 0, 4); }, Kind::kValue,
       {"cache_seqlens: expected shape (3,)", "got (4,)"}},
      {"cu_seqlens_q size", [](S& s) { resize(s.cu_seqlens_q, 0, 3); }, Kind::kValue,
       {"cu_seqlens_q: expected shape (4,)", "got (3,)"}},
      {"metadata device", [](S& s) { s.metadata_out.device = 2; }, Kind::kValue,
       {"scheduler_metadata: expected a CUDA tensor on cuda:0", "got cuda:2"}},
      {"metadata dtype", [](S& s) { s.metadata_out.dtype = kF32; }, Kind::kType,
       {"scheduler_metadata: expected dtype int32", "got float32"}},
      {"metadata size", [](S& s) { resize(s.metadata_out, 0, 3); }, Kind::kValue,
       {"scheduler_metadata: expected shape (11,)", "got (3,)"}},
  });
}

// ---- merge_attn_states --------------------------------------------------------------------------------------

constexpr int64_t kT = 10;

MergeArgs make_merge_args() {
  MergeArgs m;
  m.out = tensor(kBF16, {kT, kHq, kD});
  m.prefix_out = tensor(kBF16, {kT, kHq, kD});
  m.suffix_out = tensor(kBF16, {kT, kHq, kD});
  m.prefix_lse = tensor(kF32, {kHq, kT});
  m.suffix_lse = tensor(kF32, {kHq, kT});
  m.out_lse = tensor(kF32, {kHq, kT});
  return m;
}

TEST(ValidateMerge, ValidCallsPass) {
  MergeArgs m = make_merge_args();
  EXPECT_NO_THROW(validate(m));
  m.out_lse = TensorView{};
  for (TensorView* t : {&m.out, &m.prefix_out, &m.suffix_out}) t->dtype = kF32;
  m.prefix_out.stride[0] = 4 * kHq * kD;  // only the last dim must be contiguous
  EXPECT_NO_THROW(validate(m));
}

TEST(ValidateMerge, BadCallsFail) {
  using M = MergeArgs;
  run_table<M>(make_merge_args, {
      {"missing suffix_lse", [](M& m) { m.suffix_lse = TensorView{}; }, Kind::kValue,
       {"suffix_lse: expected a tensor", "got None"}},
      {"output int32", [](M& m) { m.out.dtype = kI32; }, Kind::kType,
       {"output: expected dtype float16, bfloat16 or float32", "got int32"}},
      {"prefix dtype", [](M& m) { m.prefix_out.dtype = kF16; }, Kind::kType,
       {"prefix_output: expected dtype bfloat16 (the dtype of output)", "got float16"}},
      {"lse dtype", [](M& m) { m.prefix_lse.dtype = kBF16; }, Kind::kType,
       {"prefix_lse: expected dtype float32", "got bfloat16"}},
      {"device", [](M& m) { m.suffix_out.device = 1; }, Kind::kValue,
       {"suffix_output: expected a CUDA tensor on cuda:0", "got cuda:1"}},
      {"host output", [](M& m) { m.out.device = -1; }, Kind::kValue, {"output: expected a CUDA tensor"}},
      {"rank", [](M& m) { m.out.rank = 2; }, Kind::kValue, {"output: expected rank 3 (T, H, d)", "got rank 2"}},
      {"suffix shape", [](M& m) { resize(m.suffix_out, 0, kT + 1); }, Kind::kValue,
       {"suffix_output: expected shape (10, 8, 128)", "got (11, 8, 128)"}},
      {"last dim strided", [](M& m) { m.prefix_out.stride[2] = 2; }, Kind::kValue,
       {"prefix_output: expected the last dim contiguous", "got strides (1024, 128, 2)"}},
      {"lse shape", [](M& m) { m.suffix_lse = tensor(kF32, {kT, kHq}); }, Kind::kValue,
       {"suffix_lse: expected shape (8, 10) (H, T)", "got (10, 8)"}},
      {"lse strided", [](M& m) { m.prefix_lse.stride[0] = kT + 6; }, Kind::kValue,
       {"prefix_lse: expected a contiguous tensor", "got strides (16, 1)"}},
      {"output_lse shape", [](M& m) { resize(m.out_lse, 0, 1); }, Kind::kValue,
       {"output_lse: expected shape (8, 10)", "got (1, 10)"}},
  });
}

// ---- flash_attn_with_kvcache: append and rotary --------------------------------------------------------------

constexpr int64_t kSNew = 2, kRotaryHalf = 32, kSMax = 256;

AppendKVArgs make_append_args() {
  AppendKVArgs p;
  p.k_cache = tensor(kBF16, {kB, kCacheLen, kHkv, kD});
  p.v_cache = tensor(kBF16, {kB, kCacheLen, kHkv, kD});
  p.k_new = tensor(kBF16, {kB, kSNew, kHkv, kD});
  p.v_new = tensor(kBF16, {kB, kSNew, kHkv, kD});
  p.cache_seqlens = tensor(kI32, {kB});
  p.q = tensor(kBF16, {kB, kSq, kHq, kD});
  p.q_rotated = tensor(kBF16, {kB, kSq, kHq, kD});
  p.rotary_cos = tensor(kBF16, {kSMax, kRotaryHalf});
  p.rotary_sin = tensor(kBF16, {kSMax, kRotaryHalf});
  return p;
}

TEST(ValidateAppendKV, ValidCallsPass) {
  AppendKVArgs p = make_append_args();
  EXPECT_NO_THROW(validate(p));
  // Paged, no rotary.
  p.k_cache = tensor(kBF16, {kNumBlocks, kPageSize, kHkv, kD});
  p.v_cache = tensor(kBF16, {kNumBlocks, kPageSize, kHkv, kD});
  p.block_table = tensor(kI32, {kB, kMaxBlocks});
  p.rotary_cos = p.rotary_sin = p.q_rotated = TensorView{};
  EXPECT_NO_THROW(validate(p));
  // Rotary only, one shared cache row picked by cache_batch_idx.
  p = make_append_args();
  p.k_new = p.v_new = TensorView{};
  resize(p.k_cache, 0, 1);
  resize(p.v_cache, 0, 1);
  p.cache_batch_idx = tensor(kI32, {kB});
  p.leftpad_k = tensor(kI32, {kB});
  EXPECT_NO_THROW(validate(p));
}

TEST(ValidateAppendKV, BadCallsFail) {
  using A = AppendKVArgs;
  run_table<A>(make_append_args, {
      {"k without v", [](A& p) { p.v_new = TensorView{}; }, Kind::kValue, {"v: expected a tensor", "got None"}},
      {"cos without sin", [](A& p) { p.rotary_sin = TensorView{}; }, Kind::kValue,
       {"rotary_sin: expected a tensor", "got None"}},
      {"fp8 cache", [](A& p) { p.k_cache.dtype = p.v_cache.dtype = kFP8; }, Kind::kNotSupported,
       {"k_cache: expected", "appending into an fp8 cache is not supported yet", "got float8_e4m3fn"}},
      {"rotary dtype", [](A& p) { p.rotary_cos.dtype = p.rotary_sin.dtype = kF32; }, Kind::kType,
       {"rotary_cos: expected dtype bfloat16", "got float32"}},
      {"cache_seqlens int64", [](A& p) { p.cache_seqlens.dtype = kI64; }, Kind::kType,
       {"cache_seqlens: expected dtype int32", "got int64"}},
      {"k_cache on other device", [](A& p) { p.k_cache.device = 3; }, Kind::kValue,
       {"k_cache: expected a CUDA tensor on cuda:0", "got cuda:3"}},
      {"k_cache rank 3", [](A& p) { p.k_cache.rank = 3; }, Kind::kValue, {"k_cache: expected rank 4", "got rank 3"}},
      {"q rank 3", [](A& p) { p.q.rank = 3; }, Kind::kValue, {"q: expected rank 4 (B, Sq, Hq, d)", "got rank 3"}},
      {"q head dim", [](A& p) { resize(p.q, 3, 64); resize(p.q_rotated, 3, 64); }, Kind::kValue,
       {"q: expected head dim equal to k_cache's d=128", "got 64"}},
      {"q heads", [](A& p) { resize(p.q, 2, 3); }, Kind::kValue, {"q: expected", "multiple of Hkv=2", "got Hq=3"}},
      {"new k heads", [](A& p) { resize(p.k_new, 2, 4); }, Kind::kValue,
       {"k: expected shape (3, 2, 2, 128)", "got (3, 2, 4, 128)"}},
      {"new v length", [](A& p) { resize(p.v_new, 1, 5); }, Kind::kValue,
       {"v: expected shape (3, 2, 2, 128)", "got (3, 5, 2, 128)"}},
      {"rotary too wide", [](A& p) { resize(p.rotary_cos, 1, 80); resize(p.rotary_sin, 1, 80); }, Kind::kValue,
       {"rotary_cos: expected rotary_dim = 2 * shape[1] in [2, d=128]", "got rotary_dim=160"}},
      {"rotary shapes differ", [](A& p) { resize(p.rotary_sin, 0, 128); }, Kind::kValue,
       {"rotary_sin: expected shape (256, 32) (the shape of rotary_cos)", "got (128, 32)"}},
      {"q_rotated missing", [](A& p) { p.q_rotated = TensorView{}; }, Kind::kValue,
       {"q_rotated: expected a tensor when rotary_cos is given", "got None"}},
      {"q_rotated shape", [](A& p) { resize(p.q_rotated, 1, 1); }, Kind::kValue,
       {"q_rotated: expected shape (3, 4, 8, 128)", "got (3, 1, 8, 128)"}},
      {"cache_seqlens size", [](A& p) { resize(p.cache_seqlens, 0, 2); }, Kind::kValue,
       {"cache_seqlens: expected shape (3,)", "got (2,)"}},
      {"cache_batch_idx with page_table", [](A& p) {
         p.block_table = tensor(kI32, {kB, kMaxBlocks});
         p.cache_batch_idx = tensor(kI32, {kB});
       }, Kind::kValue, {"cache_batch_idx: expected None with page_table", "got a tensor of shape (3,)"}},
      {"page_table rows", [](A& p) { p.block_table = tensor(kI32, {kB + 1, kMaxBlocks}); }, Kind::kValue,
       {"page_table: expected shape (B, max_blocks) with B=3", "got (4, 5)"}},
      {"too few cache rows", [](A& p) { resize(p.k_cache, 0, 2); resize(p.v_cache, 0, 2); }, Kind::kValue,
       {"k_cache: expected at least B=3 cache rows", "got 2"}},
  });
}

// ---- TensorView ----------------------------------------------------------------------------------------------

TEST(TensorView, DtypeNamesAndSizes) {
  const std::vector<std::tuple<DType, const char*, int>> dtypes = {
      {kF16, "float16", 2}, {kBF16, "bfloat16", 2}, {kFP8, "float8_e4m3fn", 1}, {kF32, "float32", 4},
      {kI32, "int32", 4},   {kI64, "int64", 8},     {DType::kOther, "other", 0}, {DType::kUndefined, "undefined", 0},
  };
  for (const auto& [dtype, name, bytes] : dtypes) {
    EXPECT_STREQ(dtype_name(dtype), name);
    EXPECT_EQ(dtype_bytes(dtype), bytes) << name;
  }
}

TEST(TensorView, ShapeString) {
  EXPECT_EQ(tensor(kBF16, {4, 8, 128}).shape_string(), "(4, 8, 128)");
  EXPECT_EQ(tensor(kI32, {5}).shape_string(), "(5,)");
  EXPECT_EQ(tensor(kF32, {}).shape_string(), "()");
  EXPECT_EQ(TensorView{}.shape_string(), "not given");
}

}  // namespace
}  // namespace flashseek
