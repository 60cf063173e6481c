// Shared helpers of the primitive tests: each test checks one primitive against plain CUDA / host arithmetic, and
// exits 77 (ctest: skipped) with a message when no sm_90 GPU is visible.
#pragma once

#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

#define PRIM_CHECK(call)                                                                              \
  do {                                                                                                \
    cudaError_t status_ = (call);                                                                     \
    if (status_ != cudaSuccess) {                                                                     \
      std::printf("FAIL: %s:%d %s: %s\n", __FILE__, __LINE__, #call, cudaGetErrorString(status_));    \
      std::exit(1);                                                                                   \
    }                                                                                                 \
  } while (0)

inline void require_hopper_or_skip() {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) {
    std::printf("SKIP: no CUDA device visible (GPU tests run on the GPU machine)\n");
    std::exit(77);
  }
  cudaDeviceProp prop;
  PRIM_CHECK(cudaGetDeviceProperties(&prop, 0));
  if (prop.major != 9) {
    std::printf("SKIP: needs an sm_90 GPU, found sm_%d%d\n", prop.major, prop.minor);
    std::exit(77);
  }
}

inline std::vector<float> random_bf16_values(size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> dist(0.f, 1.f);
  std::vector<float> v(n);
  for (auto& x : v) x = __bfloat162float(__float2bfloat16(dist(rng)));  // exactly representable
  return v;
}

inline std::vector<__nv_bfloat16> to_bf16(const std::vector<float>& v) {
  std::vector<__nv_bfloat16> out(v.size());
  for (size_t i = 0; i < v.size(); ++i) out[i] = __float2bfloat16(v[i]);
  return out;
}

template <class T>
T* to_device(const std::vector<T>& host) {
  T* d = nullptr;
  PRIM_CHECK(cudaMalloc(&d, host.size() * sizeof(T)));
  PRIM_CHECK(cudaMemcpy(d, host.data(), host.size() * sizeof(T), cudaMemcpyHostToDevice));
  return d;
}

// Max |got - want| over all elements, with the worst index printed on failure.
inline bool all_close(const std::vector<float>& got, const std::vector<float>& want, float tol, const char* what) {
  float worst = 0.f;
  size_t worst_i = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    const float err = std::isfinite(got[i]) ? std::fabs(got[i] - want[i]) : INFINITY;
    if (err > worst) {
      worst = err;
      worst_i = i;
    }
  }
  const bool ok = worst <= tol;
  std::printf("%s %s: max err %.3g at %zu (got %.6g want %.6g), tol %.3g\n", ok ? "ok  " : "FAIL", what, worst,
              worst_i, got.empty() ? 0.f : got[worst_i], want.empty() ? 0.f : want[worst_i], tol);
  return ok;
}
