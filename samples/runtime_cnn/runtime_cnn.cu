// A CNN inference loop in CUDA C++ on gpuscope's runtime, written the plain way first: each layer is a
// 3×3 convolution (cuDNN), then a batch-norm kernel, then a ReLU kernel, in fp32. Run with GPUSCOPE_PLAN=
// plan.json (from `gpuscope advise --plan` on a recording of this program), it asks the plan whether to fuse
// the batch-norm and the ReLU after each convolution: batch-norm is then folded into the convolution's
// weights and bias, and the bias and ReLU run in cuDNN's fused epilogue. Each step is an NVTX range "step";
// the median step time is printed as JSON. --compare runs both ways, alternating, and compares them.
// Usage: sample_runtime_cnn [--compare] [LAYERS=8] [BATCH=32] [CHANNELS=64] [SIZE=56] [STEPS=20]
#include <nvtx3/nvToolsExt.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <vector>

#include "../common/sample_check.h"
#include "../common/sample_runtime.h"
#include "advisor/runtime/conv_bn_fold.h"
#include "advisor/runtime/conv_epilogue.h"
#include "advisor/runtime/plan_runtime.h"

using namespace gpuscope::runtime;

extern "C" __global__ void cnn_batch_norm(float* y, const float* scale, const float* shift, long long n,
                                          long long plane, long long channels) {
  const long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x;
  if (i >= n) return;
  const long long c = (i / plane) % channels;
  y[i] = y[i] * scale[c] + shift[c];
}

extern "C" __global__ void cnn_relu(float* y, long long n) {
  const long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x;
  if (i < n) y[i] = fmaxf(y[i], 0.0f);
}

namespace {

constexpr char kSample[] = "runtime_cnn";

float* upload(const std::vector<float>& v) {
  float* p = nullptr;
  SAMPLE_CUDA(cudaMalloc(&p, v.size() * 4));
  SAMPLE_CUDA(cudaMemcpy(p, v.data(), v.size() * 4, cudaMemcpyHostToDevice));
  return p;
}

CUdeviceptr ptr(const void* p) { return reinterpret_cast<CUdeviceptr>(p); }

// One layer's parameters on the device, both ways: the convolution with batch-norm's per-channel scale and
// shift for the plain path, and the folded weights and bias for the fused one.
struct Layer {
  float *weight, *scale, *shift, *folded_weight, *folded_bias;
};

Layer makeLayer(int64_t channels, std::mt19937& rng) {
  std::uniform_real_distribution<float> u(-1, 1);
  ConvWeights conv{channels, channels, 3, 3, std::vector<float>(channels * channels * 9), {}};
  const float bound = std::sqrt(3.0f / (channels * 9));  // keeps the activations' scale through the layers
  for (float& w : conv.weight) w = u(rng) * bound;
  BatchNormStats bn;
  for (int64_t c = 0; c < channels; ++c) {
    bn.gamma.push_back(1.0f + 0.2f * u(rng)), bn.beta.push_back(0.1f * u(rng));
    bn.running_mean.push_back(0.1f * u(rng)), bn.running_var.push_back(1.0f + 0.5f * u(rng));
  }
  std::vector<float> scale(channels), shift(channels);
  for (int64_t c = 0; c < channels; ++c) {
    scale[c] = bn.gamma[c] / std::sqrt(bn.running_var[c] + bn.eps);
    shift[c] = bn.beta[c] - bn.running_mean[c] * scale[c];
  }
  const ConvWeights folded = orExit(foldBatchNorm(conv, bn), kSample, "folding batch-norm");
  return {upload(conv.weight), upload(scale), upload(shift), upload(folded.weight), upload(folded.bias)};
}

struct Network {
  ConvShape shape;
  ConvEpilogue plain, fused;
  std::vector<Layer> layers;
  float *input, *a, *b;

  // One forward pass; returns the buffer holding the output.
  float* forward(bool fuse) {
    const long long n = shape.batch * shape.out_channels * shape.height * shape.width;
    const unsigned blocks = static_cast<unsigned>((n + 255) / 256);
    float *x = input, *y = a;
    for (const Layer& l : layers) {
      if (fuse) {
        if (!fused.run(ptr(x), ptr(l.folded_weight), ptr(l.folded_bias), ptr(y), nullptr)) std::exit(2);
      } else {
        if (!plain.run(ptr(x), ptr(l.weight), 0, ptr(y), nullptr)) std::exit(2);
        cnn_batch_norm<<<blocks, 256>>>(y, l.scale, l.shift, n, shape.height * shape.width, shape.out_channels);
        cnn_relu<<<blocks, 256>>>(y, n);
      }
      x = y;
      y = y == a ? b : a;
    }
    return x;
  }

  double stepMs(bool fuse) {
    SAMPLE_CUDA(cudaDeviceSynchronize());
    const auto start = std::chrono::steady_clock::now();
    nvtxRangePushA("step");
    forward(fuse);
    SAMPLE_CUDA(cudaDeviceSynchronize());
    nvtxRangePop();
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  }
};

std::vector<float> download(const float* p, size_t n) {
  std::vector<float> v(n);
  SAMPLE_CUDA(cudaMemcpy(v.data(), p, n * 4, cudaMemcpyDeviceToHost));
  return v;
}

}  // namespace

int main(int argc, char** argv) {
  const bool compare = argc > 1 && std::strcmp(argv[1], "--compare") == 0;
  const int first = compare ? 2 : 1;
  auto arg = [&](int i, long long fallback) { return argc > first + i ? std::atoll(argv[first + i]) : fallback; };
  const int64_t layers = arg(0, 8), batch = arg(1, 32), channels = arg(2, 64), size = arg(3, 56), steps = arg(4, 20);
  if (layers < 1 || batch < 1 || channels < 1 || size < 3 || steps < 1) {
    std::fprintf(stderr, "usage: sample_runtime_cnn [--compare] [LAYERS] [BATCH] [CHANNELS] [SIZE>=3] [STEPS]\n");
    return 2;
  }
  PlanRuntime plan = orExit(PlanRuntime::fromEnvironment(), kSample, "plan");
  // The advisor names the chain after the convolution; it is applied by moving it into the convolution.
  const bool fuse = plan.shouldFuseIntoProducer({"cnn_batch_norm", "cnn_relu"});
  SAMPLE_CUDA(cudaFree(nullptr));
  const ConvShape shape{batch, channels, size, size, channels, 3, 3, 1, 1};
  std::mt19937 rng(5);
  Network net{shape,
              orExit(ConvEpilogue::create(shape, ConvEpilogueKind::kNone), kSample, "convolution"),
              orExit(ConvEpilogue::create(shape, ConvEpilogueKind::kBiasRelu), kSample, "fused convolution"),
              {},
              nullptr,
              nullptr,
              nullptr};
  for (int64_t l = 0; l < layers; ++l) net.layers.push_back(makeLayer(channels, rng));
  const size_t n = batch * channels * size * size;
  std::vector<float> input(n);
  std::normal_distribution<float> normal;
  for (float& v : input) v = normal(rng);
  net.input = upload(input);
  SAMPLE_CUDA(cudaMalloc(&net.a, n * 4));
  SAMPLE_CUDA(cudaMalloc(&net.b, n * 4));

  // Both ways on the same input: folding changes only the rounding (fp32 relative error < 1e-5).
  // Poisoned (NaN) before each run, so an element left unwritten cannot pass.
  auto poison = [&] {
    for (float* p : {net.a, net.b}) SAMPLE_CUDA(cudaMemset(p, 0xff, n * 4));
  };
  poison();
  const std::vector<float> plain_out = download(net.forward(false), n);
  poison();
  const std::vector<float> fused_out = download(net.forward(true), n);
  const double error = relativeError(plain_out, fused_out);

  std::vector<double> mine, other;
  for (int64_t s = 0; s < steps; ++s) {
    mine.push_back(net.stepMs(fuse));
    if (compare) other.push_back(net.stepMs(!fuse));
  }
  std::printf("{\"fused\": %s, \"median_step_ms\": %.4f", fuse ? "true" : "false", median(mine));
  if (compare) std::printf(", \"%s_step_ms\": %.4f", fuse ? "plain" : "fused", median(other));
  std::printf(", \"relative_error\": %.3g}\n", error);
  std::fprintf(stderr, "%s", plan.report().c_str());
  return sampleResult("runtime_cnn", error < 1e-5, "the fused and plain outputs agree (fp32, relative error < 1e-5)");
}
