// A fused elementwise chain ready to launch: compiled once per (expression, type, GPU architecture) with
// NVRTC and kept for the life of the process, launched with 16-byte vectors where the pointers allow.
#pragma once

#include <cuda.h>

#include <string_view>
#include <vector>

#include "advisor/runtime/fused_kernel_source.h"
#include "formats/status.h"

namespace gpuscope::runtime {

class FusedChain {
 public:
  // Compiles for the current context's device (making device 0's primary context current if there is
  // none), or takes the chain from the cache.
  static Result<FusedChain> create(std::string_view expression, DType dtype);

  size_t inputCount() const { return inputs_; }
  DType dtype() const { return dtype_; }
  // out[i] = expression(inputs[0][i], inputs[1][i], ...) for i < n: device pointers, all of the chain's type.
  // out may be one of the inputs (in place): each element is read before it is written, by one thread.
  Status launch(const std::vector<CUdeviceptr>& inputs, CUdeviceptr out, int64_t n, CUstream stream) const;
  // The chain reduced along each row of rows × cols inputs (row-major): out[r] = sum, max or mean over c of
  // expression(inputs[0][r·cols + c], ...), accumulated in fp32; out holds rows values of the chain's type.
  Status reduceRows(const std::vector<CUdeviceptr>& inputs, CUdeviceptr out, int64_t rows, int64_t cols, Reduction op,
                    CUstream stream) const;
  // The backward of reduceRows: grad_inputs[i] (rows × cols, the chain's type) receives the gradient of
  // input i from dy (rows values) and the forward's output y (used by kMax: only elements equal to the row's
  // maximum receive a gradient). A grad_inputs entry of 0 skips that input.
  Status reduceRowsBackward(const std::vector<CUdeviceptr>& inputs, CUdeviceptr y, CUdeviceptr dy,
                            const std::vector<CUdeviceptr>& grad_inputs, int64_t rows, int64_t cols, Reduction op,
                            CUstream stream) const;

 private:
  Status checkInputs(const std::vector<CUdeviceptr>& inputs) const;

  CUfunction vector_ = nullptr, scalar_ = nullptr, rows_ = nullptr;
  std::vector<CUfunction> rows_grad_;  // one per input
  size_t inputs_ = 0;
  DType dtype_ = DType::kF32;
  int vectors_per_thread_ = 1;
};

// How many chains were compiled (not taken from the cache), for tests.
int64_t fusedChainsCompiled();

}  // namespace gpuscope::runtime
