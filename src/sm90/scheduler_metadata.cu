// get_scheduler_metadata's device side: the buffer is filled by a kernel (not a host copy) so that it can be
// produced inside a captured CUDA graph and never needs host memory that outlives the call.
#include "launch.h"

namespace flashseek::sm90 {
namespace {

struct MetadataHeader {
  int values[8];
};

__global__ void write_metadata_kernel(int* out, MetadataHeader header, int batch, int per_sequence_splits) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < 8) out[i] = header.values[i];
  if (i < batch) out[8 + i] = per_sequence_splits;
}

}  // namespace

cudaError_t launch_write_scheduler_metadata(int* out, const int (&header)[8], int batch, int per_sequence_splits,
                                            cudaStream_t stream) {
  MetadataHeader h;
  for (int i = 0; i < 8; ++i) h.values[i] = header[i];
  const int n = batch > 8 ? batch : 8;
  write_metadata_kernel<<<(n + 255) / 256, 256, 0, stream>>>(out, h, batch, per_sequence_splits);
  return cudaGetLastError();
}

}  // namespace flashseek::sm90
