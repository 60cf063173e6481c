// FLASHSEEK_HOST_DEVICE: a function both the kernels and the CPU tests compile (plain C++ headers of sm90/).
#pragma once

#ifdef __CUDACC__
#define FLASHSEEK_HOST_DEVICE __host__ __device__
#else
#define FLASHSEEK_HOST_DEVICE
#endif
