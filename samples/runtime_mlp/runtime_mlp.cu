// An MLP forward loop in CUDA C++ on gpuscope's runtime, written the plain way first: each layer is a GEMM
// (cuBLASLt), then a bias kernel, then a GELU kernel. Run with GPUSCOPE_PLAN=plan.json (written by
// `gpuscope advise --plan` from a recording of this program) it asks the plan, layer by layer, whether to
// fuse the bias and the GELU into the GEMM's epilogue, and prints what it applied. Each step is an NVTX
// range "step"; the median step time is printed as JSON.
#include <nvtx3/nvToolsExt.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <vector>

#include "../common/sample_check.h"
#include "advisor/runtime/gemm_epilogue.h"
#include "advisor/runtime/half_float.h"
#include "advisor/runtime/plan_runtime.h"

using namespace gpuscope::runtime;

// bf16 as 16 bits, converted in fp32 (as the runtime's generated kernels do).
__device__ float toFloat(unsigned short h) { return __uint_as_float(static_cast<unsigned>(h) << 16); }
__device__ unsigned short toBf16(float f) {
  unsigned u = __float_as_uint(f);
  u += 0x7fffu + ((u >> 16) & 1u);
  return static_cast<unsigned short>(u >> 16);
}

extern "C" __global__ void mlp_add_bias(unsigned short* y, const unsigned short* bias, long long rows, long long cols) {
  const long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x;
  if (i < rows * cols) y[i] = toBf16(toFloat(y[i]) + toFloat(bias[i % cols]));
}

extern "C" __global__ void mlp_gelu(unsigned short* y, long long n) {  // tanh form, as cuBLASLt's epilogue
  const long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x;
  if (i >= n) return;
  const float v = toFloat(y[i]);
  y[i] = toBf16(0.5f * v * (1.0f + tanhf(0.79788456f * (v + 0.044715f * v * v * v))));
}

int main() {
  constexpr int kLayers = 6, kSteps = 20;
  constexpr int64_t kTokens = 8192, kWidth = 1024;
  gpuscope::Result<PlanRuntime> plan = PlanRuntime::fromEnvironment();
  if (!plan) return std::fprintf(stderr, "runtime_mlp: %s\n", plan.status().message().c_str()), 2;
  const bool fuse = plan->shouldFuseAfterGemm({"mlp_add_bias", "mlp_gelu"});
  const GemmShape shape{kTokens, kWidth, kWidth};
  gpuscope::Result<GemmEpilogue> gemm =
      GemmEpilogue::create(shape, fuse ? Epilogue::kBiasGelu : Epilogue::kNone, DType::kBF16);
  if (!gemm) return std::fprintf(stderr, "runtime_mlp: %s\n", gemm.status().message().c_str()), 2;

  std::vector<unsigned short> host(kWidth * kWidth);
  // Small weights (|w| ≤ 0.002 over 1,024 inputs) keep every layer's output in range.
  for (size_t i = 0; i < host.size(); ++i) host[i] = floatToBf16(((i * 7919) % 2001 - 1000.0f) * 2e-6f);
  std::vector<unsigned short*> weights(kLayers), biases(kLayers);
  for (int l = 0; l < kLayers; ++l) {
    SAMPLE_CUDA(cudaMalloc(&weights[l], host.size() * 2));
    SAMPLE_CUDA(cudaMemcpy(weights[l], host.data(), host.size() * 2, cudaMemcpyHostToDevice));
    SAMPLE_CUDA(cudaMalloc(&biases[l], kWidth * 2));
    SAMPLE_CUDA(cudaMemcpy(biases[l], host.data() + l * kWidth, kWidth * 2, cudaMemcpyHostToDevice));
  }
  std::vector<unsigned short> input(kTokens * kWidth);
  for (size_t i = 0; i < input.size(); ++i) input[i] = floatToBf16(((i * 104729) % 2001 - 1000.0f) * 1e-3f);
  unsigned short *batch, *a, *b;
  for (unsigned short** p : {&batch, &a, &b}) SAMPLE_CUDA(cudaMalloc(p, input.size() * 2));
  SAMPLE_CUDA(cudaMemcpy(batch, input.data(), input.size() * 2, cudaMemcpyHostToDevice));

  const long long n = kTokens * kWidth;
  const unsigned blocks = static_cast<unsigned>((n + 255) / 256);
  std::vector<double> times;
  for (int step = 0; step < kSteps; ++step) {
    const auto start = std::chrono::steady_clock::now();
    nvtxRangePushA("step");
    SAMPLE_CUDA(cudaMemcpyAsync(a, batch, input.size() * 2, cudaMemcpyDeviceToDevice));  // this step's input
    unsigned short *x = a, *y = b;
    for (int l = 0; l < kLayers; ++l) {
      auto ptr = [](const void* p) { return reinterpret_cast<CUdeviceptr>(p); };
      if (!gemm->run(ptr(x), ptr(weights[l]), ptr(biases[l]), ptr(y), 0, nullptr)) return 2;
      if (!fuse) {
        mlp_add_bias<<<blocks, 256>>>(y, biases[l], kTokens, kWidth);
        mlp_gelu<<<blocks, 256>>>(y, n);
      }
      std::swap(x, y);
    }
    SAMPLE_CUDA(cudaDeviceSynchronize());
    nvtxRangePop();
    times.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
  }
  std::vector<unsigned short> out(16);
  SAMPLE_CUDA(cudaMemcpy(out.data(), a, out.size() * 2, cudaMemcpyDeviceToHost));
  double checksum = 0;
  for (unsigned short h : out) checksum += bf16ToFloat(h);
  std::sort(times.begin() + 3, times.end());
  std::printf("{\"fused\": %s, \"median_step_ms\": %.4f, \"checksum\": %.6f}\n", fuse ? "true" : "false",
              times[3 + (times.size() - 3) / 2], checksum);
  std::fprintf(stderr, "%s", plan->report().c_str());
  return sampleResult("runtime_mlp", std::isfinite(checksum) && checksum != 0.0, "the output is finite and non-zero");
}
