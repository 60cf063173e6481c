// setmaxnreg: a 384-thread CTA whose producer warpgroup gives registers to two consumer warpgroups that then
// keep more live values than the entry cap (168) allows, with no spills (the build warns on spills).
#include "prim_test_util.h"
#include "sm90/prims/wgmma.h"

using namespace flashseek::sm90;

constexpr int kLive = 200;  // live floats per consumer thread, above the 168-register entry cap

__global__ void __launch_bounds__(384, 1) realloc_kernel(const float* in, float* out) {
  const int wg = threadIdx.x / 128;
  if (wg == 0) {
    warpgroup_reg_dealloc<40>();
    out[threadIdx.x] = in[threadIdx.x] * 2.f;
  } else {
    warpgroup_reg_alloc<232>();
    float acc[kLive];
#pragma unroll
    for (int i = 0; i < kLive; ++i) acc[i] = in[(threadIdx.x + i) % 384];
#pragma unroll 1
    for (int round = 0; round < 4; ++round) {
#pragma unroll
      for (int i = 0; i < kLive; ++i) acc[i] = acc[i] * 0.5f + acc[(i + 1) % kLive];
    }
    float sum = 0.f;
#pragma unroll
    for (int i = 0; i < kLive; ++i) sum += acc[i] * float(i + 1);
    out[threadIdx.x] = sum;
  }
}

int main() {
  require_hopper_or_skip();
  std::vector<float> in(384);
  for (int i = 0; i < 384; ++i) in[i] = float((i * 37) % 11) - 5.f;
  std::vector<float> want(384);
  for (int t = 0; t < 384; ++t) {
    if (t < 128) {
      want[t] = in[t] * 2.f;
      continue;
    }
    std::vector<float> acc(kLive);
    for (int i = 0; i < kLive; ++i) acc[i] = in[(t + i) % 384];
    for (int round = 0; round < 4; ++round) {
      std::vector<float> next(kLive);
      // In-place update in index order: element i reads the already updated i+1 only for i = kLive-1 (wraps).
      for (int i = 0; i < kLive; ++i) acc[i] = acc[i] * 0.5f + acc[(i + 1) % kLive];
    }
    double sum = 0;
    for (int i = 0; i < kLive; ++i) sum += double(acc[i]) * (i + 1);
    want[t] = float(sum);
  }
  float* d_in = to_device(in);
  float* d_out = nullptr;
  PRIM_CHECK(cudaMalloc(&d_out, 384 * sizeof(float)));
  realloc_kernel<<<1, 384>>>(d_in, d_out);
  PRIM_CHECK(cudaGetLastError());
  std::vector<float> got(384);
  PRIM_CHECK(cudaMemcpy(got.data(), d_out, 384 * sizeof(float), cudaMemcpyDeviceToHost));
  return all_close(got, want, 1e-2f, "setmaxnreg 40 / 232 with 200 live floats per consumer") ? 0 : 1;
}
