// Bandwidth of the runtime's fused elementwise chains against the device's own copy bandwidth
// (cuMemcpyDtoD of the same bytes), the measure of issue #6's "≥ 90 % of the copy bandwidth".
// Usage: fused_chain_bench [ELEMENTS]   (default 2^26 per array). Prints one line per chain and type.
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

#include "advisor/runtime/cuda_driver.h"
#include "advisor/runtime/fused_chain.h"
#include "advisor/runtime/half_float.h"
#include "tests/bench/cuda_timer.h"

using namespace gpuscope::runtime;

namespace {

// Standard normal values of the chain's type in every buffer, as torch_compile_chains.py's torch.randn
// (math such as erf may take other paths on zeros).
void fillRandom(const CudaDriver& cu, const std::vector<CUdeviceptr>& buffers, int64_t n, DType dtype) {
  std::mt19937 rng(1);
  std::normal_distribution<float> normal;
  std::vector<uint16_t> half(dtype == DType::kF32 ? 0 : n);
  std::vector<float> full(dtype == DType::kF32 ? n : 0);
  for (CUdeviceptr b : buffers) {
    for (int64_t i = 0; i < n; ++i) {
      const float f = normal(rng);
      if (dtype == DType::kF32)
        full[i] = f;
      else
        half[i] = dtype == DType::kBF16 ? floatToBf16(f) : floatToFp16(f);
    }
    if (dtype == DType::kF32)
      cu.memcpyHtoD(b, full.data(), full.size() * 4);
    else
      cu.memcpyHtoD(b, half.data(), half.size() * 2);
  }
}

}  // namespace

int main(int argc, char** argv) {
  const int64_t n = argc > 1 ? std::atoll(argv[1]) : int64_t{1} << 26;
  gpuscope::Result<const CudaDriver*> driver = cudaDriver();
  if (!driver || !ensureContext(**driver)) {
    std::fprintf(stderr, "fused_chain_bench: %s\n", driver ? "no context" : driver.status().message().c_str());
    return 1;
  }
  const CudaDriver& cu = **driver;
  std::vector<CUdeviceptr> buffers(4);
  for (CUdeviceptr& b : buffers) {
    cu.memAlloc(&b, static_cast<size_t>(n) * 4);
    cu.memsetD8(b, 0, static_cast<size_t>(n) * 4);
  }
  const size_t copy_bytes = static_cast<size_t>(n) * 4;
  const float copy_ms = medianMs(cu, [&] { cu.memcpyDtoDAsync(buffers[1], buffers[0], copy_bytes, nullptr); });
  const double copy_gbps = 2.0 * static_cast<double>(copy_bytes) / (copy_ms * 1e6);
  std::printf("copy: %lld bytes read and written in %.4f ms: %.1f GB/s\n", static_cast<long long>(copy_bytes), copy_ms,
              copy_gbps);
  for (const char* expression : {"x * w + b", "gelu(x)", "gelu(x * w + b) * sigmoid(w)"}) {
    for (DType d : {DType::kF32, DType::kBF16, DType::kF16}) {
      fillRandom(cu, std::vector<CUdeviceptr>(buffers.begin(), buffers.begin() + 3), n, d);
      gpuscope::Result<FusedChain> chain = FusedChain::create(expression, d);
      if (!chain) {
        std::fprintf(stderr, "fused_chain_bench: %s\n", chain.status().message().c_str());
        return 1;
      }
      std::vector<CUdeviceptr> inputs(buffers.begin(), buffers.begin() + static_cast<long>(chain->inputCount()));
      const float ms = medianMs(cu, [&] { (void)chain->launch(inputs, buffers[3], n, nullptr); });
      const double bytes = static_cast<double>(n) * elementBytes(d) * static_cast<double>(chain->inputCount() + 1);
      const double gbps = bytes / (ms * 1e6);
      std::printf("chain \"%s\" %s: %lld elements, %.4f ms, %.1f GB/s, %.1f %% of copy\n", expression,
                  std::string(toString(d)).c_str(), static_cast<long long>(n), ms, gbps, 100.0 * gbps / copy_gbps);
    }
  }
  for (CUdeviceptr b : buffers) cu.memFree(b);
  return 0;
}
