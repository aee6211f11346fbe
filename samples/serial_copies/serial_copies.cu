// The work of samples/multi_stream — copy a chunk in from pinned memory, compute on it, copy it out — on one
// stream: every copy waits for the kernel before it and every kernel for its copy, so copies never overlap
// compute. Each round of four chunks is an NVTX range "step". multi_stream is the same work overlapped.
#include <nvtx3/nvToolsExt.h>

#include "../common/chunk_work.cuh"
#include "../common/sample_check.h"

int main() {
  constexpr int kChunks = 4;
  constexpr int kChunk = 1 << 22;
  constexpr int kRounds = 12;
  float* host = nullptr;
  float* device = nullptr;
  SAMPLE_CUDA(cudaMallocHost(&host, kChunks * kChunk * sizeof(float)));
  SAMPLE_CUDA(cudaMalloc(&device, kChunks * kChunk * sizeof(float)));
  for (int i = 0; i < kChunks * kChunk; ++i) host[i] = 1.f;
  cudaStream_t stream;
  SAMPLE_CUDA(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  for (int r = 0; r < kRounds; ++r) {
    nvtxRangePushA("step");
    for (int c = 0; c < kChunks; ++c) {
      float* h = host + c * kChunk;
      float* d = device + c * kChunk;
      SAMPLE_CUDA(cudaMemcpyAsync(d, h, kChunk * sizeof(float), cudaMemcpyHostToDevice, stream));
      work<<<(kChunk + 255) / 256, 256, 0, stream>>>(d, kChunk, 200);
      SAMPLE_CUDA(cudaMemcpyAsync(h, d, kChunk * sizeof(float), cudaMemcpyDeviceToHost, stream));
    }
    SAMPLE_CUDA(cudaStreamSynchronize(stream));
    nvtxRangePop();
  }
  const bool ok = host[0] > 1.f && host[0] == host[kChunks * kChunk - 1];
  SAMPLE_CUDA(cudaStreamDestroy(stream));
  SAMPLE_CUDA(cudaFree(device));
  SAMPLE_CUDA(cudaFreeHost(host));
  return sampleResult("serial_copies", ok, "12 rounds of copy, compute, copy on one stream gave equal results");
}
