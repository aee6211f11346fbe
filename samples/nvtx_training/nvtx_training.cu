// A training loop written with plain CUDA and annotated with NVTX the way frameworks annotate theirs:
// "step N" ranges holding "forward", "backward" and "optimizer". Its allocations are the four kinds
// gpuscope's memory analysis tells apart:
//   parameters       allocated once before the loop (inside "init"),
//   gradients        allocated in the first backward pass and kept,
//   optimizer state  (Adam's two moments) allocated at the first optimizer step and kept,
//   activations      allocated in every forward pass and freed at the end of its backward pass.
// The model is a stack of elementwise layers y = relu(w * x) fitted to a target; the loss must fall.
#include <nvtx3/nvToolsExt.h>

#include <cstdio>
#include <string>
#include <vector>

#include "../common/sample_check.h"

constexpr int kH = 1 << 20;  // elements per tensor (4 MiB of floats)
constexpr int kLayers = 4;
constexpr int kSteps = 20;
constexpr int kBlock = 256;
constexpr int kGrid = (kH + kBlock - 1) / kBlock;

__global__ void fill(float* x, float v) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < kH) x[i] = v + 0.001f * (i % 97);
}
__global__ void layer_forward(const float* w, const float* in, float* out) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < kH) out[i] = fmaxf(w[i] * in[i], 0.f);
}
__global__ void loss_and_grad(const float* y, const float* target, float* grad, float* loss) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= kH) return;
  const float d = y[i] - target[i];
  grad[i] = 2.f * d / kH;
  atomicAdd(loss, d * d / kH);
}
__global__ void layer_backward(const float* w, const float* in, const float* out, float* grad, float* grad_w) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= kH) return;
  const float g = out[i] > 0.f ? grad[i] : 0.f;
  grad_w[i] = g * in[i];
  grad[i] = g * w[i];  // becomes the gradient of the layer's input
}
__global__ void adam(float* w, const float* g, float* m, float* v, float lr, int step) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= kH) return;
  m[i] = 0.9f * m[i] + 0.1f * g[i];
  v[i] = 0.999f * v[i] + 0.001f * g[i] * g[i];
  const float mh = m[i] / (1.f - powf(0.9f, step)), vh = v[i] / (1.f - powf(0.999f, step));
  w[i] -= lr * mh / (sqrtf(vh) + 1e-8f);
}

float* allocate(float value) {
  float* p = nullptr;
  SAMPLE_CUDA(cudaMalloc(&p, kH * sizeof(float)));
  fill<<<kGrid, kBlock>>>(p, value);
  return p;
}

float* allocateZeros() {
  float* p = nullptr;
  SAMPLE_CUDA(cudaMalloc(&p, kH * sizeof(float)));
  SAMPLE_CUDA(cudaMemset(p, 0, kH * sizeof(float)));
  return p;
}

int main() {
  nvtxRangePushA("init");
  std::vector<float*> weights;
  for (int l = 0; l < kLayers; ++l) weights.push_back(allocate(0.9f));
  float* input = allocate(1.f);
  float* target = allocate(2.f);
  float* loss = nullptr;
  SAMPLE_CUDA(cudaMalloc(&loss, sizeof(float)));
  nvtxRangePop();

  std::vector<float*> grads, moments1, moments2;
  float first_loss = 0, last_loss = 0;
  for (int step = 1; step <= kSteps; ++step) {
    nvtxRangePushA(("step " + std::to_string(step)).c_str());
    nvtxRangePushA("forward");
    std::vector<float*> acts = {input};
    for (int l = 0; l < kLayers; ++l) {
      float* out = nullptr;
      SAMPLE_CUDA(cudaMalloc(&out, kH * sizeof(float)));
      layer_forward<<<kGrid, kBlock>>>(weights[l], acts.back(), out);
      acts.push_back(out);
    }
    nvtxRangePop();
    nvtxRangePushA("backward");
    float* grad = nullptr;
    SAMPLE_CUDA(cudaMalloc(&grad, kH * sizeof(float)));
    SAMPLE_CUDA(cudaMemset(loss, 0, sizeof(float)));
    loss_and_grad<<<kGrid, kBlock>>>(acts.back(), target, grad, loss);
    if (grads.empty()) {
      for (int l = 0; l < kLayers; ++l) grads.push_back(allocateZeros());
    }
    for (int l = kLayers - 1; l >= 0; --l)
      layer_backward<<<kGrid, kBlock>>>(weights[l], acts[l], acts[l + 1], grad, grads[l]);
    for (size_t a = 1; a < acts.size(); ++a) SAMPLE_CUDA(cudaFree(acts[a]));
    SAMPLE_CUDA(cudaFree(grad));
    nvtxRangePop();
    nvtxRangePushA("optimizer");
    if (moments1.empty()) {
      for (int l = 0; l < kLayers; ++l) moments1.push_back(allocateZeros()), moments2.push_back(allocateZeros());
    }
    for (int l = 0; l < kLayers; ++l)
      adam<<<kGrid, kBlock>>>(weights[l], grads[l], moments1[l], moments2[l], 0.01f, step);
    nvtxRangePop();
    float host_loss = 0;
    SAMPLE_CUDA(cudaMemcpy(&host_loss, loss, sizeof host_loss, cudaMemcpyDeviceToHost));
    if (step == 1) first_loss = host_loss;
    last_loss = host_loss;
    nvtxRangePop();
  }
  for (auto* list : {&weights, &grads, &moments1, &moments2}) {
    for (float* p : *list) SAMPLE_CUDA(cudaFree(p));
  }
  SAMPLE_CUDA(cudaFree(input));
  SAMPLE_CUDA(cudaFree(target));
  SAMPLE_CUDA(cudaFree(loss));
  std::printf("nvtx_training: loss %.4f -> %.4f over %d steps\n", first_loss, last_loss, kSteps);
  return sampleResult("nvtx_training", last_loss < 0.5f * first_loss, "the loss fell by more than half");
}
