// gpuscope-calibrate: the host time one kernel launch takes on this machine, which `gpuscope record` measures
// after the program, plain and with the collector injected, so that the advisor can take off what recording
// added to each launch of the program (analysis::recordingCostPerLaunch). An empty kernel, loaded from PTX so
// that the driver builds it for whatever GPU is there, is launched through the CUDA runtime as programs launch
// theirs; prints the median over batches of the host nanoseconds per launch, one number.
// Usage: gpuscope-calibrate [BATCHES] [LAUNCHES_PER_BATCH]
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

namespace {

constexpr char kEmptyKernelPtx[] =
    ".version 7.0\n"
    ".target sm_75\n"
    ".address_size 64\n"
    ".visible .entry gpuscope_calibration_empty()\n"
    "{\n"
    "  ret;\n"
    "}\n";

int fail(const char* what, cudaError_t error) {
  std::fprintf(stderr, "gpuscope-calibrate: %s: %s\n", what, cudaGetErrorString(error));
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  const int batches = argc > 1 ? std::atoi(argv[1]) : 20;
  const int launches = argc > 2 ? std::atoi(argv[2]) : 500;
  if (batches < 1 || launches < 1) {
    std::fprintf(stderr, "usage: gpuscope-calibrate [BATCHES>0] [LAUNCHES_PER_BATCH>0]\n");
    return 2;
  }
  cudaLibrary_t library = nullptr;
  if (cudaError_t e = cudaLibraryLoadData(&library, kEmptyKernelPtx, nullptr, nullptr, 0, nullptr, nullptr, 0)) {
    return fail("no usable GPU", e);
  }
  cudaKernel_t kernel = nullptr;
  if (cudaError_t e = cudaLibraryGetKernel(&kernel, library, "gpuscope_calibration_empty")) {
    return fail("the empty kernel did not load", e);
  }
  std::vector<double> per_launch_ns;
  for (int b = 0; b < batches + 2; ++b) {  // the first two batches warm up
    cudaDeviceSynchronize();
    const auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < launches; ++i) {
      cudaLaunchKernel(reinterpret_cast<const void*>(kernel), dim3(1), dim3(32), nullptr, 0, nullptr);
    }
    const auto end = std::chrono::steady_clock::now();
    cudaDeviceSynchronize();
    if (b >= 2) per_launch_ns.push_back(std::chrono::duration<double, std::nano>(end - start).count() / launches);
  }
  if (cudaError_t e = cudaGetLastError()) return fail("the launches failed", e);
  std::nth_element(per_launch_ns.begin(), per_launch_ns.begin() + batches / 2, per_launch_ns.end());
  std::printf("%.0f\n", per_launch_ns[static_cast<size_t>(batches / 2)]);
  cudaLibraryUnload(library);
  return 0;
}
