// Programmatic dependent launch (PDL): a kernel launched as the programmatic dependent of the one before it on the
// stream may start (CTA launch, barrier set-up) while that one finishes; it must wait (pdl_wait) before it reads
// anything an earlier kernel wrote. A kernel may let its dependents launch early (pdl_trigger): they then take the
// SMs it leaves free and sit in their wait until it completes and its memory is visible.
#pragma once

#include <cuda_runtime.h>

#include <utility>

namespace flashseek::sm90 {

// Returns at once in a kernel not launched as a programmatic dependent.
__device__ __forceinline__ void pdl_wait() { asm volatile("griddepcontrol.wait;\n" ::: "memory"); }

__device__ __forceinline__ void pdl_trigger() { asm volatile("griddepcontrol.launch_dependents;\n" ::: "memory"); }

// kernel<<<grid, block, smem, stream>>>(args...), as the programmatic dependent of the stream's previous kernel
// where `programmatic`, in thread-block clusters of (1, cluster_y, 1) CTAs where cluster_y > 1 (grid.y a multiple).
template <class... Params, class... Args>
cudaError_t launch_kernel_in_clusters(void (*kernel)(Params...), dim3 grid, dim3 block, size_t smem,
                                      cudaStream_t stream, bool programmatic, unsigned cluster_y, Args&&... args) {
  cudaLaunchConfig_t config = {};
  config.gridDim = grid;
  config.blockDim = block;
  config.dynamicSmemBytes = smem;
  config.stream = stream;
  cudaLaunchAttribute attributes[2];
  unsigned count = 0;
  if (programmatic) {
    attributes[count].id = cudaLaunchAttributeProgrammaticStreamSerialization;
    attributes[count].val.programmaticStreamSerializationAllowed = 1;
    ++count;
  }
  if (cluster_y > 1) {
    attributes[count].id = cudaLaunchAttributeClusterDimension;
    attributes[count].val.clusterDim.x = 1;
    attributes[count].val.clusterDim.y = cluster_y;
    attributes[count].val.clusterDim.z = 1;
    ++count;
  }
  config.attrs = attributes;
  config.numAttrs = count;
  return cudaLaunchKernelEx(&config, kernel, std::forward<Args>(args)...);
}

template <class... Params, class... Args>
cudaError_t launch_kernel(void (*kernel)(Params...), dim3 grid, dim3 block, size_t smem, cudaStream_t stream,
                          bool programmatic, Args&&... args) {
  return launch_kernel_in_clusters(kernel, grid, block, smem, stream, programmatic, 1u, std::forward<Args>(args)...);
}

}  // namespace flashseek::sm90
