// Micro-benchmark: how fast one CTA (one SM) streams a paged KV cache into shared memory with bulk copies, against
// box size, stages in flight, issuing lanes and CTAs per GPU. The question: is the decode kernel's ~33 GB/s per CTA
// (bf16, page 16, 3 stages of 64 KB) and ~18 GB/s for e4m3 a per-SM limit of TMA (cost per box, latency) or the
// pipeline's? Nothing but copies and barriers runs: one producer warp issues the boxes of each key block (K and V)
// into a ring of stages, one consumer warpgroup waits for each stage, reads two words of it into a checksum, can
// spin to stand in for compute, and frees it.
//   build: nvcc -std=c++17 -O3 -gencode=arch=compute_90a,code=sm_90a -Isrc bench/micro/tma_stream.cu -o build/tma_stream
//   run:   build/tma_stream [--keys N per CTA (4096)] [--compute-ns N per block (0)] [--reps N (11)] [--heads-only]
// Multi-head boxes (the "heads" column; --heads-only runs just those): the cache holds H KV heads per row, as an NHD
// cache does ([pages][page_size][H][row bytes]), and one box takes all H heads of a page's rows (tensor map
// dims ordered columns, rows, heads, pages: the box lands head by head, each head's rows a whole swizzle atom
// group). The question: do H x fewer, H x larger boxes lift e4m3 at page 16 from one SM's box rate to the DRAM's?
#include <cuda.h>  // CUtensorMap and its enums (types only: no -lcuda)
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <numeric>
#include <random>
#include <vector>

#include "host/tensor_map.h"  // tensor_map_encoder(): cuTensorMapEncodeTiled through the runtime's entry point
#include "sm90/prims/async_copy.h"
#include "sm90/prims/mbarrier.h"
#include "sm90/prims/tma.h"

using namespace flashseek::sm90;

namespace {

constexpr int kConsumerThreads = 128;            // one warpgroup
constexpr int kThreads = kConsumerThreads + 32;  // + the producer warp
constexpr int kMaxStages = 8;
constexpr int kMaxPagesPerCta = 1024;          // a CTA's page ids, read into shared memory before the clock starts
constexpr uint64_t kHangNs = 2'000'000'000;    // a stage still not full after 2 s is a broken copy: trap, not hang
constexpr size_t kFlushBytes = size_t{256} << 20;  // written between repeats: 5x the L2
constexpr uint32_t kSaltK = 1, kSaltV = 2;

enum class Copy : int { kTensor, kBulk };

// One run's shape. Derived sizes are methods so that the kernel, the host check and the table agree.
struct Shape {
  int page_size, row_bytes, block_n, stages, keys_per_cta;
  long long compute_cycles;  // consumer spin per block
  Copy copy;
  bool swizzle128;    // tensor copies: 128-byte swizzle, so boxes are 128 bytes wide (two per 256-byte row)
  bool lane_per_box;  // each lane issues one box; else lane 0 issues all boxes of a block, one after the other
  int heads = 1;      // KV heads per cache row and per box (tensor copies only)
  __host__ __device__ int col_bytes() const { return copy == Copy::kTensor && swizzle128 ? 128 : row_bytes; }
  __host__ __device__ int column_blocks() const { return row_bytes / col_bytes(); }
  __host__ __device__ int box_rows() const { return page_size < block_n ? page_size : block_n; }
  __host__ __device__ int box_bytes() const { return box_rows() * col_bytes() * heads; }
  __host__ __device__ int boxes_per_tile() const { return block_n / box_rows() * column_blocks(); }
  __host__ __device__ int boxes_per_block() const { return 2 * boxes_per_tile(); }  // K and V
  __host__ __device__ int tile_bytes() const { return block_n * row_bytes * heads; }
  __host__ __device__ int stage_bytes() const { return 2 * tile_bytes(); }
  __host__ __device__ int blocks() const { return keys_per_cta / block_n; }
  __host__ __device__ int pages_per_cta() const { return keys_per_cta / page_size; }
  int issuing_lanes() const { return lane_per_box ? std::min(boxes_per_block(), 32) : 1; }
  size_t smem_bytes() const { return size_t(stages) * stage_bytes() + 1024; }  // + slack to align the ring
};

struct Cache {
  const uint8_t* k;         // [pages][page_size][heads][row_bytes]
  const uint8_t* v;
  const int* block_table;  // [grid][pages_per_cta] physical page ids, as vLLM's
};

// The word every 4 bytes of cache row `row` hold. Constant along a row, so a row reads the same wherever a swizzle
// moved its 16-byte chunks, and the host can predict the checksum from the block table alone.
__host__ __device__ inline uint32_t row_word(uint32_t salt, uint64_t row) {
  uint64_t x = row * 0x9E3779B97F4A7C15ull + salt;
  x ^= x >> 31;
  x *= 0xBF58476D1CE4E5B9ull;
  x ^= x >> 29;
  return static_cast<uint32_t>(x);
}

__global__ void fill_rows(uint32_t* words, size_t n_words, int words_per_row, uint32_t salt) {
  for (size_t i = blockIdx.x * size_t{blockDim.x} + threadIdx.x; i < n_words; i += size_t{gridDim.x} * blockDim.x)
    words[i] = row_word(salt, i / words_per_row);
}

__device__ __forceinline__ uint64_t global_ns() {
  uint64_t t;
  asm volatile("mov.u64 %0, %%globaltimer;\n" : "=l"(t));
  return t;
}

__device__ __forceinline__ uint32_t ld_shared(uint32_t addr) {
  uint32_t v;
  asm volatile("ld.shared.b32 %0, [%1];\n" : "=r"(v) : "r"(addr) : "memory");
  return v;
}

// The producer's arrival and the stage's byte count in one operation.
__device__ __forceinline__ void arrive_expect_tx(uint32_t bar, uint32_t bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(bar), "r"(bytes) : "memory");
}

__device__ __forceinline__ bool try_wait(uint32_t bar, uint32_t parity) {
  uint32_t done;
  asm volatile(
      "{\n.reg .pred p;\nmbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\nselp.u32 %0, 1, 0, p;\n}\n"
      : "=r"(done)
      : "r"(bar), "r"(parity)
      : "memory");
  return done != 0;
}

// prims' mbarrier_wait, but a phase that never completes (bytes that never land) fails the run instead of hanging it.
__device__ __forceinline__ void wait_phase(uint32_t bar, uint32_t parity) {
  if (try_wait(bar, parity)) return;
  const uint64_t t0 = global_ns();
  while (!try_wait(bar, parity))
    if (global_ns() - t0 > kHangNs) __trap();
}

// Plain (non-tensor) bulk copy of contiguous bytes; needs 16-byte aligned addresses and sizes.
__device__ __forceinline__ void bulk_load(uint32_t dst, const void* src, uint32_t bytes, uint32_t bar) {
  asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];\n" ::"r"(dst),
               "l"(src), "r"(bytes), "r"(bar)
               : "memory");
}

// Where one box of a key block lands and what it reads. Box order: K boxes then V boxes; within a tile, row groups
// (a page, or block_n rows of a larger page), each split into 128-byte column blocks under the swizzle. Tile layout:
// column block major, then rows (prims/smem_tile.h's SwizzledTile); a multi-head box holds its heads one after the
// other, each box_rows rows.
struct Box {
  uint32_t dst;  // shared address
  int kv, col, row, page;
};

// Lane `i`'s box of block b: every lane works one out in parallel (the block's at most 32 boxes), so that a single
// issuing lane pays only for the issue itself, not for index arithmetic.
__device__ __forceinline__ Box box_of(const Shape& s, const int* page_ids, uint32_t stage_smem, int b, int i) {
  const int kv = i / s.boxes_per_tile(), r = i % s.boxes_per_tile();
  const int group = r / s.column_blocks(), cb = r % s.column_blocks();
  const int key = b * s.block_n + group * s.box_rows();
  return {stage_smem + kv * s.tile_bytes() + cb * s.block_n * s.heads * s.col_bytes() + group * s.box_bytes(), kv,
          cb * s.col_bytes(), key % s.page_size, page_ids[key / s.page_size]};
}

__device__ __forceinline__ Box shfl_box(const Box& x, int from) {
  return {__shfl_sync(~0u, x.dst, from), __shfl_sync(~0u, x.kv, from), __shfl_sync(~0u, x.col, from),
          __shfl_sync(~0u, x.row, from), __shfl_sync(~0u, x.page, from)};
}

__device__ __forceinline__ void issue(const Box& x, const Shape& s, const CUtensorMap* k_map, const CUtensorMap* v_map,
                                      const Cache& cache, uint32_t full_bar) {
  if (s.copy == Copy::kBulk) {
    const uint8_t* src = (x.kv ? cache.v : cache.k) + (size_t(x.page) * s.page_size + x.row) * s.row_bytes;
    bulk_load(x.dst, src, s.box_bytes(), full_bar);
  } else {
    tma_load_4d(x.dst, x.kv ? v_map : k_map, x.col, x.row, 0, x.page, full_bar);  // dims: cols, rows, heads, pages
  }
}

__global__ void __launch_bounds__(kThreads) stream_kv(const __grid_constant__ CUtensorMap k_map,
                                                      const __grid_constant__ CUtensorMap v_map, Cache cache, Shape s,
                                                      uint32_t* checksums, unsigned long long* cta_ns) {
  __shared__ uint64_t bars[2 * kMaxStages];  // full[kMaxStages], then empty[kMaxStages]
  __shared__ int page_ids[kMaxPagesPerCta];
  extern __shared__ uint8_t dyn_smem[];
  const uint32_t ring = (smem_addr(dyn_smem) + 1023) & ~1023u;  // the 128-byte swizzle wants 1024-byte aligned boxes
  const uint32_t full0 = smem_addr(bars), empty0 = full0 + 8 * kMaxStages;
  // The real producer reads the block table a block ahead, off the critical path; reading it up front does the same.
  const int* table = cache.block_table + size_t{blockIdx.x} * s.pages_per_cta();
  for (int i = threadIdx.x; i < s.pages_per_cta(); i += kThreads) page_ids[i] = table[i];
  if (threadIdx.x == 0) {
    for (int st = 0; st < s.stages; ++st) {
      mbarrier_init(full0 + 8 * st, 1);  // the producer's arrive.expect_tx; then the bytes
      mbarrier_init(empty0 + 8 * st, kConsumerThreads);
    }
    mbarrier_init_fence();
  }
  __syncthreads();
  const uint64_t t0 = global_ns();

  if (threadIdx.x >= kConsumerThreads) {  // producer warp
    const int lane = threadIdx.x % 32;
    const int n_boxes = s.boxes_per_block();  // <= 32 (checked on the host)
    if (lane == 0 && s.copy == Copy::kTensor) {
      prefetch_tensormap(&k_map);
      prefetch_tensormap(&v_map);
    }
    for (int b = 0; b < s.blocks(); ++b) {
      const int st = b % s.stages;
      const uint32_t full = full0 + 8 * st;
      const Box mine = box_of(s, page_ids, ring + st * s.stage_bytes(), b, lane);  // before the wait: off the path
      wait_phase(empty0 + 8 * st, ((b / s.stages) & 1) ^ 1);  // a fresh barrier reads as parity 1 completed
      if (lane == 0) arrive_expect_tx(full, s.stage_bytes());
      __syncwarp();
      if (s.lane_per_box) {
        if (lane < n_boxes) issue(mine, s, &k_map, &v_map, cache, full);
      } else {
        for (int i = 0; i < n_boxes; ++i) {
          const Box x = shfl_box(mine, i);
          if (lane == 0) issue(x, s, &k_map, &v_map, cache, full);
        }
      }
    }
  } else {  // consumer warpgroup
    // Column block 0 of one row of head 0: its box group, then the row inside the group's first head.
    const int t = threadIdx.x % s.block_n;
    const uint32_t row_offset = (t / s.box_rows()) * s.box_bytes() + (t % s.box_rows()) * s.col_bytes();
    uint32_t sum = 0;
    for (int b = 0; b < s.blocks(); ++b) {
      const int st = b % s.stages;
      wait_phase(full0 + 8 * st, (b / s.stages) & 1);
      const uint32_t k_tile = ring + st * s.stage_bytes();
      sum += ld_shared(k_tile + row_offset) + ld_shared(k_tile + s.tile_bytes() + row_offset);
      if (s.compute_cycles > 0) {
        const long long c0 = clock64();
        while (clock64() - c0 < s.compute_cycles) {
        }
      }
      mbarrier_arrive(empty0 + 8 * st);  // release: the reads above are done before the producer refills the stage
    }
    atomicAdd(&checksums[blockIdx.x], sum);
    if (threadIdx.x == 0) cta_ns[blockIdx.x] = global_ns() - t0;
  }
}

#define CHECK(call) check_cuda((call), #call, __LINE__)
void check_cuda(cudaError_t e, const char* what, int line) {
  if (e == cudaSuccess) return;
  std::fprintf(stderr, "tma_stream.cu:%d: %s failed: %s\n", line, what, cudaGetErrorString(e));
  std::exit(1);
}

// uint8 elements: dims (row bytes, page rows, heads, pages), box (col_bytes, box_rows, heads, 1): a box lands head by
// head. Under the 128-byte swizzle a box is at most 128 bytes wide (two boxes per 256-byte row); without swizzle a
// box is the whole row.
CUtensorMap encode_map(const uint8_t* base, const Shape& s, int64_t pages) {
  CUtensorMap map{};
  if (s.copy != Copy::kTensor) return map;
  auto encode = flashseek::tensor_map_encoder();
  if (encode == nullptr) {
    std::fprintf(stderr, "cuTensorMapEncodeTiled not available from the driver\n");
    std::exit(1);
  }
  const cuuint64_t dims[4] = {cuuint64_t(s.row_bytes), cuuint64_t(s.page_size), cuuint64_t(s.heads),
                              cuuint64_t(pages)};
  const cuuint64_t strides[3] = {cuuint64_t(s.heads) * s.row_bytes, cuuint64_t(s.row_bytes),
                                 cuuint64_t(s.page_size) * s.heads * s.row_bytes};
  const cuuint32_t box[4] = {cuuint32_t(s.col_bytes()), cuuint32_t(s.box_rows()), cuuint32_t(s.heads), 1};
  const cuuint32_t elem_strides[4] = {1, 1, 1, 1};
  const CUresult r = encode(&map, CU_TENSOR_MAP_DATA_TYPE_UINT8, 4, const_cast<uint8_t*>(base), dims, strides, box,
                            elem_strides, CU_TENSOR_MAP_INTERLEAVE_NONE,
                            s.swizzle128 ? CU_TENSOR_MAP_SWIZZLE_128B : CU_TENSOR_MAP_SWIZZLE_NONE,
                            CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (r != CUDA_SUCCESS) {
    std::fprintf(stderr, "cuTensorMapEncodeTiled failed (%d): row %d B, box %d x %d\n", int(r), s.row_bytes,
                 s.col_bytes(), s.box_rows());
    std::exit(1);
  }
  return map;
}

// What each CTA's consumer must sum: written independently of the kernel's box arithmetic, from the block table.
std::vector<uint32_t> expected_checksums(const Shape& s, const std::vector<int>& table, int grid) {
  std::vector<uint32_t> sums(grid, 0);
  for (int c = 0; c < grid; ++c)
    for (int b = 0; b < s.blocks(); ++b)
      for (int t = 0; t < kConsumerThreads; ++t) {
        const int key = b * s.block_n + t % s.block_n;
        // head 0's row of this key: cache rows are (page, row in page, head)
        const uint64_t row = (uint64_t(table[size_t(c) * s.pages_per_cta() + key / s.page_size]) * s.page_size +
                              key % s.page_size) * s.heads;
        sums[c] += row_word(kSaltK, row) + row_word(kSaltV, row);
      }
  return sums;
}

struct Timing {
  double event_us, cta_us;  // medians over repeats: launch to finish, and the mean CTA's own streaming time
  bool ok;
};

struct Buffers {
  Cache cache;
  uint8_t* flush;
  uint32_t* checksums;
  unsigned long long* cta_ns;
};

Timing measure(const Shape& s, int grid, int64_t pages, const Buffers& buf, const std::vector<uint32_t>& expected,
               int reps) {
  const CUtensorMap k_map = encode_map(buf.cache.k, s, pages), v_map = encode_map(buf.cache.v, s, pages);
  cudaEvent_t start, stop;
  CHECK(cudaEventCreate(&start));
  CHECK(cudaEventCreate(&stop));
  std::vector<double> event_us, cta_us;
  std::vector<unsigned long long> ns(grid);
  std::vector<uint32_t> sums(grid);
  for (int rep = -2; rep < reps; ++rep) {  // two warm-up launches
    CHECK(cudaMemsetAsync(buf.flush, rep & 0xff, kFlushBytes));
    CHECK(cudaMemsetAsync(buf.checksums, 0, grid * sizeof(uint32_t)));
    CHECK(cudaEventRecord(start));
    stream_kv<<<grid, kThreads, s.smem_bytes()>>>(k_map, v_map, buf.cache, s, buf.checksums, buf.cta_ns);
    CHECK(cudaGetLastError());
    CHECK(cudaEventRecord(stop));
    CHECK(cudaEventSynchronize(stop));
    if (rep < 0) continue;
    float ms = 0;
    CHECK(cudaEventElapsedTime(&ms, start, stop));
    CHECK(cudaMemcpy(ns.data(), buf.cta_ns, grid * sizeof(ns[0]), cudaMemcpyDeviceToHost));
    event_us.push_back(ms * 1e3);
    cta_us.push_back(std::accumulate(ns.begin(), ns.end(), 0.0) / grid / 1e3);
  }
  CHECK(cudaMemcpy(sums.data(), buf.checksums, grid * sizeof(uint32_t), cudaMemcpyDeviceToHost));
  CHECK(cudaEventDestroy(start));
  CHECK(cudaEventDestroy(stop));
  auto median = [](std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
  };
  return {median(event_us), median(cta_us), sums == expected};
}

bool has_flag(int argc, char** argv, const char* name) {
  for (int i = 1; i < argc; ++i)
    if (std::strcmp(argv[i], name) == 0) return true;
  return false;
}

int arg_int(int argc, char** argv, const char* name, int fallback) {
  for (int i = 1; i + 1 < argc; ++i)
    if (std::strcmp(argv[i], name) == 0) return std::atoi(argv[i + 1]);
  return fallback;
}

}  // namespace

int main(int argc, char** argv) {
  const int keys = arg_int(argc, argv, "--keys", 4096), compute_ns = arg_int(argc, argv, "--compute-ns", 0);
  const int reps = std::max(arg_int(argc, argv, "--reps", 11), 10);
  if (keys <= 0 || keys % 128 != 0 || keys / 16 > kMaxPagesPerCta) {
    std::fprintf(stderr, "--keys must be a multiple of 128 and at most %d, got %d\n", 16 * kMaxPagesPerCta, keys);
    return 2;
  }
  int dev = 0, sms = 0, clock_khz = 0, max_optin = 0, major = 0;
  CHECK(cudaGetDevice(&dev));
  CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
  CHECK(cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, dev));
  CHECK(cudaDeviceGetAttribute(&max_optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev));
  CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev));
  if (major != 9) {
    std::fprintf(stderr, "needs an sm_90 GPU (compute capability 9.x), got %d.x\n", major);
    return 2;
  }
  cudaFuncAttributes attrs{};
  CHECK(cudaFuncGetAttributes(&attrs, stream_kv));
  const int max_dynamic = max_optin - int(attrs.sharedSizeBytes);
  CHECK(cudaFuncSetAttribute(stream_kv, cudaFuncAttributeMaxDynamicSharedMemorySize, max_dynamic));
  CHECK(cudaFuncSetAttribute(stream_kv, cudaFuncAttributePreferredSharedMemoryCarveout, 100));
  const long long compute_cycles = (long long)compute_ns * clock_khz / 1000000;  // at the peak clock

  // One cache large enough for every CTA of the largest grid (2 per SM) at the most heads per row; smaller grids use
  // its first sequences.
  const bool heads_only = has_flag(argc, argv, "--heads-only");
  constexpr int kMaxHeads = 8;
  const int max_grid = 2 * sms;
  const int64_t rows = int64_t(max_grid) * keys;
  Buffers buf{};
  uint8_t *k = nullptr, *v = nullptr;
  int* table_dev = nullptr;
  CHECK(cudaMalloc(&k, rows * 256 * kMaxHeads));
  CHECK(cudaMalloc(&v, rows * 256 * kMaxHeads));
  CHECK(cudaMalloc(&table_dev, rows / 16 * sizeof(int)));
  CHECK(cudaMalloc(&buf.flush, kFlushBytes));
  CHECK(cudaMalloc(&buf.checksums, max_grid * sizeof(uint32_t)));
  CHECK(cudaMalloc(&buf.cta_ns, max_grid * sizeof(unsigned long long)));
  buf.cache = {k, v, table_dev};

  std::printf("# tma_stream: %d SMs, %d keys per CTA, consumer spin %d ns per block, median of %d repeats, L2 flushed\n",
              sms, keys, compute_ns, reps);
  std::printf("%5s %3s %4s %4s %5s %4s %3s %5s %-9s %5s %6s %5s %9s %8s %8s %8s %7s %7s %5s\n", "grid", "cps",
              "page", "rowB", "heads", "blkn", "stg", "flyKB", "copy", "lanes", "boxB", "boxes", "event_us", "cta_us",
              "GBs/cta", "GBs_tot", "ns/box", "lat_us", "check");
  bool all_ok = true;
  // Whether a shape's stages fit shared memory at its CTAs per SM, with a block's boxes one per lane at most.
  auto runs = [&](const Shape& s, int ctas_per_sm) {
    int fits = 0;
    CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&fits, stream_kv, kThreads, s.smem_bytes()));
    return int(s.smem_bytes()) <= max_dynamic && fits >= ctas_per_sm && s.boxes_per_block() <= 32;
  };
  auto print_row = [&](const Shape& s, int grid, int ctas_per_sm, const char* name, const Timing& t) {
    const double cta_bytes = double(s.blocks()) * s.stage_bytes();
    std::printf("%5d %3d %4d %4d %5d %4d %3d %5d %-9s %5d %6d %5d %9.1f %8.1f %8.1f %8.1f %7.1f %7.2f %5s\n", grid,
                ctas_per_sm, s.page_size, s.row_bytes, s.heads, s.block_n, s.stages, s.stages * s.stage_bytes() / 1024,
                name, s.issuing_lanes(), s.box_bytes(), s.boxes_per_block(), t.event_us, t.cta_us,
                cta_bytes / t.cta_us / 1e3, grid * cta_bytes / t.event_us / 1e3,
                t.cta_us * 1e3 / (double(s.blocks()) * s.boxes_per_block()), t.cta_us * s.stages / s.blocks(),
                t.ok ? "ok" : "BAD");
    std::fflush(stdout);
  };
  for (const int row_bytes : {256, 128}) {  // bf16 d128, e4m3 d128
    if (heads_only) break;
    fill_rows<<<4 * sms, 256>>>(reinterpret_cast<uint32_t*>(k), rows * row_bytes / 4, row_bytes / 4, kSaltK);
    fill_rows<<<4 * sms, 256>>>(reinterpret_cast<uint32_t*>(v), rows * row_bytes / 4, row_bytes / 4, kSaltV);
    CHECK(cudaGetLastError());
    for (const int page_size : {16, 64, 128}) {
      const int64_t pages = rows / page_size;
      std::vector<int> table(pages);  // pages in random order, sequence after sequence
      std::iota(table.begin(), table.end(), 0);
      std::shuffle(table.begin(), table.end(), std::mt19937(1234 + page_size));
      CHECK(cudaMemcpy(table_dev, table.data(), pages * sizeof(int), cudaMemcpyHostToDevice));
      for (const int grid : {1, 32, sms, 2 * sms}) {
        const int ctas_per_sm = grid > sms ? 2 : 1;
        const int block_n = 128 / ctas_per_sm;  // two CTAs per SM: half blocks, so that their stages fit
        Shape s{page_size, row_bytes, block_n, 2, keys, compute_cycles, Copy::kTensor, true, false};
        const std::vector<uint32_t> expected = expected_checksums(s, table, grid);
        for (const int stages : {2, 3, 4, 6}) {
          s.stages = stages;
          if (!runs(s, ctas_per_sm)) continue;
          const struct { Copy copy; bool swizzle128; const char* name; } variants[] = {
              {Copy::kTensor, true, "tma-sw128"}, {Copy::kTensor, false, "tma-none"}, {Copy::kBulk, false, "bulk"}};
          for (const auto& variant : variants) {
            if (row_bytes == 128 && !variant.swizzle128 && variant.copy == Copy::kTensor) continue;  // same boxes
            for (const bool lane_per_box : {false, true}) {
              s.copy = variant.copy;
              s.swizzle128 = variant.swizzle128;
              s.lane_per_box = lane_per_box;
              const Timing t = measure(s, grid, pages, buf, expected, reps);
              all_ok = all_ok && t.ok;
              print_row(s, grid, ctas_per_sm, variant.name, t);
            }
          }
        }
      }
    }
  }
  // Multi-head boxes at page 16: one box per page and operand takes `heads` KV heads (the rows of an NHD page), so a
  // CTA streams `heads` heads of its sequence with heads x fewer boxes per byte. heads 1 is the per-head baseline
  // in the same layout. A stage holds 128 / heads keys (one page at least; half of that at two CTAs per SM).
  for (const int row_bytes : {128, 256}) {
    for (const int heads : {1, 4, kMaxHeads}) {
      const int64_t cache_rows = rows * heads;
      fill_rows<<<4 * sms, 256>>>(reinterpret_cast<uint32_t*>(k), cache_rows * row_bytes / 4, row_bytes / 4, kSaltK);
      fill_rows<<<4 * sms, 256>>>(reinterpret_cast<uint32_t*>(v), cache_rows * row_bytes / 4, row_bytes / 4, kSaltV);
      CHECK(cudaGetLastError());
      const int page_size = 16;
      const int64_t pages = rows / page_size;
      std::vector<int> table(pages);
      std::iota(table.begin(), table.end(), 0);
      std::shuffle(table.begin(), table.end(), std::mt19937(4321 + heads));
      CHECK(cudaMemcpy(table_dev, table.data(), pages * sizeof(int), cudaMemcpyHostToDevice));
      for (const int grid : {sms, 2 * sms}) {
        const int ctas_per_sm = grid > sms ? 2 : 1;
        const int block_n = std::max(page_size, 128 / heads / ctas_per_sm);
        Shape s{page_size, row_bytes, block_n, 2, keys, compute_cycles, Copy::kTensor, true, false};
        s.heads = heads;
        const std::vector<uint32_t> expected = expected_checksums(s, table, grid);
        for (const int stages : {2, 3, 4, 6}) {
          s.stages = stages;
          if (!runs(s, ctas_per_sm)) continue;
          for (const bool lane_per_box : {false, true}) {
            s.lane_per_box = lane_per_box;
            const Timing t = measure(s, grid, pages, buf, expected, reps);
            all_ok = all_ok && t.ok;
            print_row(s, grid, ctas_per_sm, "tma-sw128", t);
          }
        }
      }
    }
  }
  if (!all_ok) std::printf("# CHECKSUM MISMATCH: some copies did not deliver the expected rows (lines marked BAD)\n");
  return all_ok ? 0 : 1;
}
