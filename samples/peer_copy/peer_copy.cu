// Two GPUs in one process: a buffer filled on GPU 0 is copied to GPU 1 with cudaMemcpyPeerAsync 100 times, each
// copy summed on GPU 1, as a model split across two GPUs hands its activations on. Needs two GPUs.
#include "../common/sample_check.h"

constexpr int kN = 16 << 20;  // floats: 64 MiB a copy
constexpr int kCopies = 100;

__global__ void fill(float* x, int n, float v) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) x[i] = v;
}

// Adds every element of x to *sum (one atomic a block, the block's partial sum first).
__global__ void accumulate(const float* x, int n, double* sum) {
  __shared__ double part[256];
  double s = 0;
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) s += x[i];
  part[threadIdx.x] = s;
  __syncthreads();
  for (int k = blockDim.x / 2; k > 0; k /= 2) {
    if (threadIdx.x < k) part[threadIdx.x] += part[threadIdx.x + k];
    __syncthreads();
  }
  if (threadIdx.x == 0) atomicAdd(sum, part[0]);
}

int main() {
  int devices = 0;
  SAMPLE_CUDA(cudaGetDeviceCount(&devices));
  if (devices < 2) return sampleResult("peer_copy", false, "two GPUs are needed");
  float *a, *b;
  double* sum;
  cudaStream_t s0, s1;
  SAMPLE_CUDA(cudaSetDevice(0));
  SAMPLE_CUDA(cudaMalloc(&a, kN * sizeof(float)));
  SAMPLE_CUDA(cudaStreamCreate(&s0));
  cudaEvent_t copied;  // recorded on GPU 0's stream: made while GPU 0 is current
  SAMPLE_CUDA(cudaEventCreateWithFlags(&copied, cudaEventDisableTiming));
  SAMPLE_CUDA(cudaSetDevice(1));
  SAMPLE_CUDA(cudaMalloc(&b, kN * sizeof(float)));
  SAMPLE_CUDA(cudaMalloc(&sum, sizeof(double)));
  SAMPLE_CUDA(cudaMemset(sum, 0, sizeof(double)));
  SAMPLE_CUDA(cudaStreamCreate(&s1));
  int can = 0;
  SAMPLE_CUDA(cudaDeviceCanAccessPeer(&can, 1, 0));
  if (can) SAMPLE_CUDA(cudaDeviceEnablePeerAccess(0, 0));

  for (int i = 0; i < kCopies; ++i) {
    SAMPLE_CUDA(cudaSetDevice(0));
    fill<<<528, 256, 0, s0>>>(a, kN, static_cast<float>(i % 4));
    SAMPLE_CUDA(cudaMemcpyPeerAsync(b, 1, a, 0, kN * sizeof(float), s0));
    SAMPLE_CUDA(cudaEventRecord(copied, s0));
    SAMPLE_CUDA(cudaSetDevice(1));
    SAMPLE_CUDA(cudaStreamWaitEvent(s1, copied, 0));
    accumulate<<<528, 256, 0, s1>>>(b, kN, sum);
    SAMPLE_CUDA(cudaStreamSynchronize(s1));  // the next fill must not overwrite a before the copy is summed
  }
  double total = 0;
  SAMPLE_CUDA(cudaMemcpy(&total, sum, sizeof(double), cudaMemcpyDeviceToHost));
  const double expected = static_cast<double>(kN) * (0 + 1 + 2 + 3) * (kCopies / 4);
  std::printf("%d peer copies of %d MiB (peer access %s), sum %.0f (expected %.0f)\n", kCopies,
              static_cast<int>(kN * sizeof(float) >> 20), can ? "on" : "off", total, expected);
  return sampleResult("peer_copy", total == expected, "the sum of every copy on GPU 1 matches");
}
