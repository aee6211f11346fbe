// Convolution with its bias and ReLU applied in cuDNN's fused epilogue (cudnnConvolutionBiasActivationForward):
// y = relu(conv(x, W) + bias) in one call instead of a convolution and passes over its output. fp32 NCHW
// tensors, fp32 arithmetic (no TF32), so results compare with the unfused path at fp32 precision. With
// ConvEpilogueKind::kNone it is the plain convolution, the unfused path's first step.
#pragma once

#include <cuda.h>

#include <cstdint>
#include <memory>

#include "formats/status.h"

namespace gpuscope::runtime {

enum class ConvEpilogueKind { kNone, kBias, kBiasRelu };

struct ConvShape {
  int64_t batch = 0, in_channels = 0, height = 0, width = 0;  // x: batch × in × height × width
  int64_t out_channels = 0, kernel_h = 0, kernel_w = 0;       // W: out × in × kernel_h × kernel_w
  int64_t pad = 0, stride = 1;
  int64_t outHeight() const { return (height + 2 * pad - kernel_h) / stride + 1; }
  int64_t outWidth() const { return (width + 2 * pad - kernel_w) / stride + 1; }
};

class ConvEpilogue {
 public:
  // Chooses cuDNN's algorithm for the shape once (for kBias, the one algorithm cuDNN fuses a bias without
  // activation with); an error when cuDNN cannot run it.
  static Result<ConvEpilogue> create(ConvShape shape, ConvEpilogueKind kind);
  ~ConvEpilogue();
  ConvEpilogue(ConvEpilogue&&) noexcept;
  ConvEpilogue& operator=(ConvEpilogue&&) noexcept;

  // Device pointers; bias (out_channels floats) may be 0 for kNone.
  Status run(CUdeviceptr x, CUdeviceptr w, CUdeviceptr bias, CUdeviceptr y, CUstream stream) const;

 private:
  ConvEpilogue() = default;
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace gpuscope::runtime
