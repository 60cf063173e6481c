// Host cost of validate() and make_plan() for the small-decode call (L8 q1s1k, page 16: one sequence, 32 query
// heads on 8 KV heads, d 128), per call, on the CPU alone (no GPU, no binding). The eager-call host target
// (issue 6) is a ratio of whole calls; this isolates the library's share before run().
//   build/<dir>/bench_validate_plan [iterations]
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <initializer_list>

#include "dense_view.h"
#include "flashseek/flashseek.h"

namespace {

using flashseek::DType;
using flashseek::TensorView;
using flashseek::dense_view;

}  // namespace

int main(int argc, char** argv) {
  const int iterations = argc > 1 ? std::atoi(argv[1]) : 200000;
  flashseek::AttentionArgs a;
  a.q = dense_view(DType::kBFloat16, {1, 32, 128}, 0x10000);
  a.k = dense_view(DType::kBFloat16, {4096, 16, 8, 128}, 0x20000);
  a.v = dense_view(DType::kBFloat16, {4096, 16, 8, 128}, 0x30000);
  a.out = dense_view(DType::kBFloat16, {1, 32, 128}, 0x40000);
  a.cu_seqlens_q = dense_view(DType::kInt32, {2}, 0x50000);
  a.seqused_k = dense_view(DType::kInt32, {1}, 0x60000);
  a.block_table = dense_view(DType::kInt32, {1, 64}, 0x70000);
  a.max_seqlen_q = 1;
  a.max_seqlen_k = 1024;
  a.causal = true;
  const flashseek::DeviceInfo device;

  flashseek::validate(a);
  const flashseek::LaunchPlan plan = flashseek::make_plan(a, device);
  int sink = 0;
  const auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < iterations; ++i) {
    flashseek::AttentionArgs b = a;
    flashseek::validate(b);
    sink += b.batch_size;
  }
  const auto t1 = std::chrono::steady_clock::now();
  for (int i = 0; i < iterations; ++i) sink += flashseek::make_plan(a, device).num_splits;
  const auto t2 = std::chrono::steady_clock::now();
  const double validate_us = std::chrono::duration<double, std::micro>(t1 - t0).count() / iterations;
  const double plan_us = std::chrono::duration<double, std::micro>(t2 - t1).count() / iterations;
  std::printf("small decode (L8 q1s1k p16): %d splits, block_m %d; validate %.3f us, make_plan %.3f us per call "
              "(%d iterations; checksum %d)\n",
              plan.num_splits, plan.block_m, validate_us, plan_us, iterations, sink);
  return 0;
}
