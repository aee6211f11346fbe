// Stream-ordered allocation (cudaMallocAsync) from the device's default memory pool, in a pattern that
// fragments it: 32 buffers of 4 MiB, every other one freed, then 8 buffers of 8 MiB that fit none of the
// 4 MiB holes, so the pool reserves more than is allocated. Prints the pool's own reserved and used bytes
// at each point (cudaMemPoolGetAttribute), which gpuscope's pool analysis is checked against, then trims.
#include <cstdint>
#include <cstdio>
#include <vector>

#include "../common/sample_check.h"

__global__ void fill(char* x, char v, size_t n) {
  size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x;
  if (i < n) x[i] = v;
}

static void report(cudaMemPool_t pool, const char* when) {
  uint64_t reserved = 0, used = 0;
  SAMPLE_CUDA(cudaMemPoolGetAttribute(pool, cudaMemPoolAttrReservedMemCurrent, &reserved));
  SAMPLE_CUDA(cudaMemPoolGetAttribute(pool, cudaMemPoolAttrUsedMemCurrent, &used));
  std::printf("pool %s: reserved %llu bytes, used %llu bytes\n", when, static_cast<unsigned long long>(reserved),
              static_cast<unsigned long long>(used));
}

int main() {
  constexpr size_t kSmall = 4 << 20, kLarge = 8 << 20;
  cudaStream_t stream;
  SAMPLE_CUDA(cudaStreamCreate(&stream));
  cudaMemPool_t pool;
  SAMPLE_CUDA(cudaDeviceGetDefaultMemPool(&pool, 0));
  uint64_t keep_everything = UINT64_MAX;  // the pool keeps freed memory instead of releasing it at each sync
  SAMPLE_CUDA(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &keep_everything));

  std::vector<char*> small(32), large(8);
  for (char*& p : small) {
    SAMPLE_CUDA(cudaMallocAsync(reinterpret_cast<void**>(&p), kSmall, stream));
    fill<<<(kSmall + 255) / 256, 256, 0, stream>>>(p, 1, kSmall);
  }
  for (size_t i = 0; i < small.size(); i += 2) SAMPLE_CUDA(cudaFreeAsync(small[i], stream));
  SAMPLE_CUDA(cudaStreamSynchronize(stream));
  report(pool, "after freeing every other 4 MiB buffer");
  for (char*& p : large) {
    SAMPLE_CUDA(cudaMallocAsync(reinterpret_cast<void**>(&p), kLarge, stream));
    fill<<<(kLarge + 255) / 256, 256, 0, stream>>>(p, 2, kLarge);
  }
  SAMPLE_CUDA(cudaStreamSynchronize(stream));
  report(pool, "after 8 buffers of 8 MiB");
  for (size_t i = 1; i < small.size(); i += 2) SAMPLE_CUDA(cudaFreeAsync(small[i], stream));
  for (char* p : large) SAMPLE_CUDA(cudaFreeAsync(p, stream));
  SAMPLE_CUDA(cudaStreamSynchronize(stream));
  report(pool, "after freeing everything");
  SAMPLE_CUDA(cudaMemPoolTrimTo(pool, 0));
  report(pool, "after trimming");
  uint64_t used = 1;
  SAMPLE_CUDA(cudaMemPoolGetAttribute(pool, cudaMemPoolAttrUsedMemCurrent, &used));
  SAMPLE_CUDA(cudaStreamDestroy(stream));
  return sampleResult("memory_pool", used == 0, "the pool fragmented, then everything was freed and trimmed");
}
