// GEMM with its bias and activation applied in cuBLASLt's epilogue: Y = act(X·W + bias), one kernel instead
// of a GEMM and the elementwise kernels after it. Row-major bf16 or fp16 operands, fp32 accumulation. With
// kBiasGeluAux the pre-activation X·W + bias is also written out: what GELU's backward needs.
#pragma once

#include <cuda.h>

#include <cstdint>
#include <memory>

#include "advisor/runtime/fused_kernel_source.h"
#include "formats/status.h"

namespace gpuscope::runtime {

enum class Epilogue { kNone, kBias, kBiasRelu, kBiasGelu, kBiasGeluAux };

struct GemmShape {
  int64_t m = 0, n = 0, k = 0;  // X is m×k, W is k×n, Y and the aux output m×n, bias n
  // Operands stored transposed (X as k×m, W as n×k), as backward passes need: dW = Xᵀ·dY, dX = dY·Wᵀ.
  bool x_transposed = false, w_transposed = false;
};

class GemmEpilogue {
 public:
  // Chooses cuBLASLt's algorithm for the shape once; dtype is kBF16 or kF16.
  static Result<GemmEpilogue> create(GemmShape shape, Epilogue epilogue, DType dtype);
  ~GemmEpilogue();
  GemmEpilogue(GemmEpilogue&&) noexcept;
  GemmEpilogue& operator=(GemmEpilogue&&) noexcept;

  // Device pointers; bias and aux may be 0 when the epilogue does not use them.
  Status run(CUdeviceptr x, CUdeviceptr w, CUdeviceptr bias, CUdeviceptr y, CUdeviceptr aux, CUstream stream) const;

 private:
  GemmEpilogue() = default;
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace gpuscope::runtime
