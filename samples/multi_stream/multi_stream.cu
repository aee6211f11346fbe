// Four streams, each copying its own chunk in, computing on it and copying it out, from pinned memory:
// the copies of one stream overlap the kernels of another, the overlap gpuscope's timeline should show.
#include "../common/chunk_work.cuh"
#include "../common/sample_check.h"

int main() {
  constexpr int kStreams = 4;
  constexpr int kChunk = 1 << 22;
  constexpr int kRepeats = 8;
  float* host = nullptr;
  float* device = nullptr;
  SAMPLE_CUDA(cudaMallocHost(&host, kStreams * kChunk * sizeof(float)));
  SAMPLE_CUDA(cudaMalloc(&device, kStreams * kChunk * sizeof(float)));
  for (int i = 0; i < kStreams * kChunk; ++i) host[i] = 1.f;
  cudaStream_t streams[kStreams];
  for (auto& s : streams) SAMPLE_CUDA(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  for (int r = 0; r < kRepeats; ++r) {
    for (int s = 0; s < kStreams; ++s) {
      float* h = host + s * kChunk;
      float* d = device + s * kChunk;
      SAMPLE_CUDA(cudaMemcpyAsync(d, h, kChunk * sizeof(float), cudaMemcpyHostToDevice, streams[s]));
      work<<<(kChunk + 255) / 256, 256, 0, streams[s]>>>(d, kChunk, 200);
      SAMPLE_CUDA(cudaMemcpyAsync(h, d, kChunk * sizeof(float), cudaMemcpyDeviceToHost, streams[s]));
    }
  }
  SAMPLE_CUDA(cudaDeviceSynchronize());
  const bool ok = host[0] > 1.f && host[0] == host[kStreams * kChunk - 1];
  for (auto& s : streams) SAMPLE_CUDA(cudaStreamDestroy(s));
  SAMPLE_CUDA(cudaFree(device));
  SAMPLE_CUDA(cudaFreeHost(host));
  return sampleResult("multi_stream", ok, "4 streams x 8 rounds of copy, compute, copy gave equal results");
}
