// Kernel set-up that CUDA keeps per device context (host/per_device.h says why), keyed by the calling thread's
// current device: the binding's device guard makes that the device of the call's tensors.
#pragma once

#include <cuda_runtime_api.h>

#include "../host/per_device.h"

namespace flashseek::sm90 {

// -1 where the runtime cannot say (PerDevice then runs the set-up every call, which reports the same error).
inline int current_device() {
  int device = -1;
  return cudaGetDevice(&device) == cudaSuccess ? device : -1;
}

// setup() (a cudaError_t) once per device for the call site that owns `slots`; its status every call after.
template <class Setup>
cudaError_t once_per_device(PerDevice<cudaError_t>& slots, Setup&& setup) {
  return slots.get(current_device(), setup);
}

}  // namespace flashseek::sm90
