// Batch-norm folded into the convolution before it, for inference: BN(conv(x, W) + b) with fixed statistics
// is conv(x, W') + b' where, per output channel k, s = γ / √(var + ε), W'ₖ = Wₖ·s and b'ₖ = (bₖ − mean)·s + β.
// One convolution (with its bias and activation in cuDNN's epilogue) instead of a convolution and a
// normalisation pass over its output.
#pragma once

#include <cstdint>
#include <vector>

#include "formats/status.h"

namespace gpuscope::runtime {

struct ConvWeights {
  int64_t out_channels = 0, in_channels = 0, kernel_h = 0, kernel_w = 0;
  std::vector<float> weight;  // out × in × kernel_h × kernel_w (KCRS)
  std::vector<float> bias;    // out_channels, or empty for a convolution without bias
};

struct BatchNormStats {  // per output channel, as a framework's BatchNorm keeps them in eval mode
  std::vector<float> gamma, beta, running_mean, running_var;
  float eps = 1e-5f;
};

// The folded weights, always with a bias; a usage error when the sizes disagree or a variance is negative.
Result<ConvWeights> foldBatchNorm(const ConvWeights& conv, const BatchNormStats& bn);

}  // namespace gpuscope::runtime
