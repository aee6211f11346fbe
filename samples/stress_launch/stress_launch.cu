// Four host threads, each on its own stream, launch 250,000 tiny kernels apiece: one million launches as
// fast as the driver takes them. A collector must keep every record of such a burst (gpuscope's trace
// says how many were dropped, and that number must be 0).
#include <thread>
#include <vector>

#include "../common/sample_check.h"

__global__ void bump(unsigned long long* counter) { atomicAdd(counter, 1ULL); }

int main(int argc, char** argv) {
  const int per_thread = argc > 1 ? std::atoi(argv[1]) : 250000;
  constexpr int kThreads = 4;
  unsigned long long* counter = nullptr;
  SAMPLE_CUDA(cudaMalloc(&counter, sizeof *counter));
  SAMPLE_CUDA(cudaMemset(counter, 0, sizeof *counter));
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&] {
      cudaStream_t stream;
      SAMPLE_CUDA(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
      for (int i = 0; i < per_thread; ++i) bump<<<1, 1, 0, stream>>>(counter);
      SAMPLE_CUDA(cudaStreamSynchronize(stream));
      SAMPLE_CUDA(cudaStreamDestroy(stream));
    });
  }
  for (auto& t : threads) t.join();
  unsigned long long total = 0;
  SAMPLE_CUDA(cudaMemcpy(&total, counter, sizeof total, cudaMemcpyDeviceToHost));
  SAMPLE_CUDA(cudaFree(counter));
  const bool ok = total == static_cast<unsigned long long>(per_thread) * kThreads;
  return sampleResult("stress_launch", ok, "every launch of 4 threads x N ran once");
}
