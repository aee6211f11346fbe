// GEMM + bias + GELU in one cuBLASLt call against the sequence it replaces — the GEMM with its bias, then
// a GELU kernel (the runtime's own fused chain, at memory speed) — at transformer shapes in bf16: issue
// #6's "≥ 1.15× faster". Prints one line per shape.
#include <cstdio>

#include "advisor/runtime/cuda_driver.h"
#include "advisor/runtime/fused_chain.h"
#include "advisor/runtime/gemm_epilogue.h"
#include "tests/bench/cuda_timer.h"

using namespace gpuscope::runtime;

int main() {
  gpuscope::Result<const CudaDriver*> driver = cudaDriver();
  if (!driver || !ensureContext(**driver)) {
    std::fprintf(stderr, "gemm_epilogue_bench: %s\n", driver ? "no context" : driver.status().message().c_str());
    return 1;
  }
  const CudaDriver& cu = **driver;
  gpuscope::Result<FusedChain> gelu = FusedChain::create("gelu_tanh(y)", DType::kBF16);
  if (!gelu) return std::fprintf(stderr, "gemm_epilogue_bench: %s\n", gelu.status().message().c_str()), 1;
  // tokens × hidden → 4 × hidden: the first GEMM of a transformer MLP (GPT-2 small, 1024-wide, GPT-2 XL)
  for (GemmShape s : {GemmShape{8192, 3072, 768}, GemmShape{8192, 4096, 1024}, GemmShape{8192, 6400, 1600},
                      GemmShape{2048, 3072, 768}}) {
    gpuscope::Result<GemmEpilogue> fused = GemmEpilogue::create(s, Epilogue::kBiasGelu, DType::kBF16);
    gpuscope::Result<GemmEpilogue> biased = GemmEpilogue::create(s, Epilogue::kBias, DType::kBF16);
    if (!fused || !biased) {
      std::fprintf(stderr, "gemm_epilogue_bench: %s\n", (fused ? biased : fused).status().message().c_str());
      return 1;
    }
    CUdeviceptr x, w, bias, y, z;
    cu.memAlloc(&x, s.m * s.k * 2);
    cu.memAlloc(&w, s.k * s.n * 2);
    cu.memAlloc(&bias, s.n * 2);
    cu.memAlloc(&y, s.m * s.n * 2);
    cu.memAlloc(&z, s.m * s.n * 2);
    for (CUdeviceptr p : {x, w}) cu.memsetD8(p, 0x3c, (p == x ? s.m * s.k : s.k * s.n) * 2);  // ~0.01 each
    cu.memsetD8(bias, 0, s.n * 2);
    const float one = medianMs(cu, [&] { (void)fused->run(x, w, bias, y, 0, nullptr); });
    const float two = medianMs(cu, [&] {
      (void)biased->run(x, w, bias, y, 0, nullptr);
      (void)gelu->launch({y}, z, s.m * s.n, nullptr);
    });
    std::printf("m=%lld n=%lld k=%lld bf16: GEMM+bias+GELU %.4f ms, GEMM+bias then GELU %.4f ms: %.2fx\n",
                static_cast<long long>(s.m), static_cast<long long>(s.n), static_cast<long long>(s.k), one, two,
                two / one);
    for (CUdeviceptr p : {x, w, bias, y, z}) cu.memFree(p);
  }
  return 0;
}
