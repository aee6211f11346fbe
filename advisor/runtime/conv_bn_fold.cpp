#include "advisor/runtime/conv_bn_fold.h"

#include <cmath>
#include <string>

namespace gpuscope::runtime {

Result<ConvWeights> foldBatchNorm(const ConvWeights& conv, const BatchNormStats& bn) {
  const int64_t k = conv.out_channels;
  const int64_t per_channel = conv.in_channels * conv.kernel_h * conv.kernel_w;
  if (k <= 0 || per_channel <= 0 || static_cast<int64_t>(conv.weight.size()) != k * per_channel) {
    return Status(ErrorKind::kUsage, "convolution weights must hold out × in × kernel_h × kernel_w values");
  }
  if (!conv.bias.empty() && static_cast<int64_t>(conv.bias.size()) != k) {
    return Status(ErrorKind::kUsage, "the convolution's bias must have one value per output channel");
  }
  for (const std::vector<float>* v : {&bn.gamma, &bn.beta, &bn.running_mean, &bn.running_var}) {
    if (static_cast<int64_t>(v->size()) != k) {
      return Status(ErrorKind::kUsage,
                    "batch-norm statistics must have one value per output channel (" + std::to_string(k) + ")");
    }
  }
  ConvWeights folded = conv;
  folded.bias.assign(k, 0.0f);
  for (int64_t c = 0; c < k; ++c) {
    const double var = bn.running_var[c] + static_cast<double>(bn.eps);
    if (!(var > 0)) return Status(ErrorKind::kUsage, "batch-norm variance + eps must be positive");
    const double scale = bn.gamma[c] / std::sqrt(var);
    for (int64_t i = 0; i < per_channel; ++i) {
      folded.weight[c * per_channel + i] = static_cast<float>(conv.weight[c * per_channel + i] * scale);
    }
    const double bias = conv.bias.empty() ? 0.0 : conv.bias[c];
    folded.bias[c] = static_cast<float>((bias - bn.running_mean[c]) * scale + bn.beta[c]);
  }
  return folded;
}

}  // namespace gpuscope::runtime
