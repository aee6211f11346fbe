// Host time per device allocation and release, the cost a tracer adds to a program that allocates in its loop
// (the advisor's allocation_churn reads the GPU's idle time while the host allocates). Times, on an idle GPU,
// cudaMalloc + cudaFree pairs and the driver's virtual memory cycle that XLA's platform allocator and PyTorch's
// expandable segments use (cuMemCreate, cuMemAddressReserve, cuMemMap, cuMemSetAccess, then cuMemUnmap,
// cuMemAddressFree, cuMemRelease), and prints the medians over batches in microseconds, so that a run under a
// tracer can be set beside a plain run (tests/bench/alloc_cost.sh).
// Usage: alloc_cost [BATCHES] [CYCLES_PER_BATCH] [MIB]
#include <cuda.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <vector>

namespace {

double medianUs(int batches, int cycles, const std::function<bool()>& cycle) {
  std::vector<double> per_cycle_us;
  for (int b = 0; b < batches + 2; ++b) {  // the first two batches warm up
    const auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < cycles; ++i) {
      if (!cycle()) return -1;
    }
    const auto end = std::chrono::steady_clock::now();
    if (b >= 2) per_cycle_us.push_back(std::chrono::duration<double, std::micro>(end - start).count() / cycles);
  }
  std::sort(per_cycle_us.begin(), per_cycle_us.end());
  return per_cycle_us[per_cycle_us.size() / 2];
}

// One allocation and release through the driver's virtual memory API, as a mapping allocator makes them.
bool mappedCycle(size_t bytes, const CUmemAllocationProp& prop, const CUmemAccessDesc& access) {
  CUmemGenericAllocationHandle handle;
  CUdeviceptr address;
  if (cuMemCreate(&handle, bytes, &prop, 0) != CUDA_SUCCESS) return false;
  bool ok = cuMemAddressReserve(&address, bytes, 0, 0, 0) == CUDA_SUCCESS;
  ok = ok && cuMemMap(address, bytes, 0, handle, 0) == CUDA_SUCCESS;
  ok = ok && cuMemSetAccess(address, bytes, &access, 1) == CUDA_SUCCESS;
  ok = ok && cuMemUnmap(address, bytes) == CUDA_SUCCESS;
  ok = ok && cuMemAddressFree(address, bytes) == CUDA_SUCCESS;
  return cuMemRelease(handle) == CUDA_SUCCESS && ok;
}

}  // namespace

int main(int argc, char** argv) {
  const int batches = argc > 1 ? std::atoi(argv[1]) : 20;
  const int cycles = argc > 2 ? std::atoi(argv[2]) : 200;
  const int mib = argc > 3 ? std::atoi(argv[3]) : 8;
  if (batches < 1 || cycles < 1 || mib < 2 || mib % 2 != 0) {
    std::fprintf(stderr, "usage: alloc_cost [BATCHES>0] [CYCLES_PER_BATCH>0] [MIB: even, >= 2]\n");
    return 2;
  }
  if (cudaFree(nullptr) != cudaSuccess) {
    std::fprintf(stderr, "alloc_cost: no usable GPU\n");
    return 1;
  }
  const size_t bytes = static_cast<size_t>(mib) << 20;  // a multiple of the 2 MiB mapping granularity
  const double runtime_us = medianUs(batches, cycles, [&] {
    void* p = nullptr;
    return cudaMalloc(&p, bytes) == cudaSuccess && cudaFree(p) == cudaSuccess;
  });
  CUmemAllocationProp prop = {};
  prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
  prop.location = {CU_MEM_LOCATION_TYPE_DEVICE, 0};
  CUmemAccessDesc access = {};
  access.location = prop.location;
  access.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
  const double mapped_us = medianUs(batches, cycles, [&] { return mappedCycle(bytes, prop, access); });
  if (runtime_us < 0 || mapped_us < 0) {
    std::fprintf(stderr, "alloc_cost: an allocation failed\n");
    return 1;
  }
  std::printf("{\"malloc_free_us_median\": %.3f, \"mapped_cycle_us_median\": %.3f, \"cycles\": %d, \"mib\": %d}\n",
              runtime_us, mapped_us, batches * cycles, mib);
  return 0;
}
