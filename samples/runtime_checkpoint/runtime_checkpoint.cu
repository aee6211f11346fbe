// Training steps (forward and backward) of a stack of transformer MLP blocks, y = x + GELU(x·W1 + b1)·W2 + b2,
// in CUDA C++ on gpuscope's runtime: cuBLASLt GEMMs with their epilogues, NVRTC-fused elementwise chains,
// and the checkpoint executor. The same layers run plain (every activation kept) and checkpointed (segments
// from the planner, or GPUSCOPE_PLAN's count), alternating; the gradients of both are compared, and the
// activation memory and median step time of each are printed as JSON (--compare). Without --compare it runs
// one way, as a training program would: plain, or checkpointed as GPUSCOPE_PLAN says, its buffers allocated
// each step, each step ending with an SGD update of every weight (a fused chain, in place); recorded, gpuscope's
// advisor sees the activations and plans the checkpointing. Usage: sample_runtime_checkpoint [--compare] [LAYERS=24]
// [TOKENS=8192] [WIDTH=1024] [STEPS=10]
#include <nvtx3/nvToolsExt.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <optional>
#include <random>
#include <tuple>
#include <vector>

#include "../common/sample_check.h"
#include "../common/sample_runtime.h"
#include "advisor/runtime/checkpoint_executor.h"
#include "advisor/runtime/checkpoint_planner.h"
#include "advisor/runtime/elementwise_expr.h"
#include "advisor/runtime/fused_chain.h"
#include "advisor/runtime/gemm_epilogue.h"
#include "advisor/runtime/half_float.h"
#include "advisor/runtime/plan_runtime.h"

using namespace gpuscope::runtime;
using gpuscope::Status;

namespace {

constexpr char kSample[] = "runtime_checkpoint";

CUdeviceptr deviceRandom(size_t n, float scale, std::mt19937& rng) {
  std::uniform_real_distribution<float> dist(-scale, scale);
  std::vector<uint16_t> host(n);
  for (uint16_t& h : host) h = floatToBf16(dist(rng));
  void* p = nullptr;
  SAMPLE_CUDA(cudaMalloc(&p, n * 2));
  SAMPLE_CUDA(cudaMemcpy(p, host.data(), n * 2, cudaMemcpyHostToDevice));
  return reinterpret_cast<CUdeviceptr>(p);
}

CUdeviceptr deviceBuffer(size_t bytes) {
  void* p = nullptr;
  SAMPLE_CUDA(cudaMalloc(&p, bytes));
  return reinterpret_cast<CUdeviceptr>(p);
}

// The optimizer step, one fused chain per parameter, in place: w ← w − lr·g with lr = 1e-4.
constexpr const char* kSgdStep = "w - 0.0001 * g";

// The GEMMs and chains every block uses (the blocks have one shape), and the scratch their backward needs.
struct BlockKernels {
  int64_t m, d, h;  // tokens, width, hidden width (4·d)
  GemmEpilogue up, down, grad_w2, grad_b2, grad_h, grad_w1, grad_b1, grad_x;
  FusedChain add, gelu_grad, sgd;
  bool gelu_grad_dy_first = true;
  CUdeviceptr ones, io_scratch, dh, dpre;

  static std::unique_ptr<BlockKernels> create(int64_t m, int64_t d) {
    const int64_t h = 4 * d;
    auto gemm = [](GemmShape s, Epilogue e) {
      return orExit(GemmEpilogue::create(s, e, DType::kBF16), kSample, "GEMM");
    };
    const Backward gelu = orExit(backwardChains("gelu_tanh(p)"), kSample, "GELU backward");
    const ParsedExpr parsed = orExit(parseExpr(gelu.chains[0].expression), kSample, "GELU backward");
    auto k = std::unique_ptr<BlockKernels>(
        new BlockKernels{m, d, h, gemm({m, h, d}, Epilogue::kBiasGeluAux),  // pre = x·W1 + b1, h = GELU(pre)
                         gemm({m, d, h}, Epilogue::kBias),                  // h·W2 + b2
                         gemm({h, d, m, true, false}, Epilogue::kNone),     // dW2 = hᵀ·dy
                         gemm({1, d, m}, Epilogue::kNone),                  // db2 = 1ᵀ·dy
                         gemm({m, h, d, false, true}, Epilogue::kNone),     // dh = dy·W2ᵀ
                         gemm({d, h, m, true, false}, Epilogue::kNone),     // dW1 = xᵀ·dpre
                         gemm({1, h, m}, Epilogue::kNone),                  // db1 = 1ᵀ·dpre
                         gemm({m, d, h, false, true}, Epilogue::kNone),     // dpre·W1ᵀ
                         orExit(FusedChain::create("a + b", DType::kBF16), kSample, "add"),
                         orExit(FusedChain::create(gelu.chains[0].expression, DType::kBF16), kSample, "GELU backward"),
                         orExit(FusedChain::create(kSgdStep, DType::kBF16), kSample, "SGD step"),
                         parsed.inputs[0] == gelu.grad_name, 0, 0, 0, 0});
    std::vector<uint16_t> ones(m, floatToBf16(1.0f));
    k->ones = deviceBuffer(m * 2);
    SAMPLE_CUDA(cudaMemcpy(reinterpret_cast<void*>(k->ones), ones.data(), m * 2, cudaMemcpyHostToDevice));
    k->io_scratch = deviceBuffer(m * d * 2);
    k->dh = deviceBuffer(m * h * 2);
    k->dpre = deviceBuffer(m * h * 2);
    return k;
  }
};

class MlpBlock : public CheckpointLayer {
 public:
  MlpBlock(BlockKernels& k, std::mt19937& rng) : k_(k) {
    const float scale = 1.0f / std::sqrt(static_cast<float>(k.d));
    w1_ = deviceRandom(k.d * k.h, scale, rng), b1_ = deviceRandom(k.h, 0.02f, rng);
    w2_ = deviceRandom(k.h * k.d, scale * 0.5f, rng), b2_ = deviceRandom(k.d, 0.02f, rng);
    for (CUdeviceptr* g : {&dw1, &dw2}) *g = deviceBuffer(k.d * k.h * 2);
    db1 = deviceBuffer(k.h * 2), db2 = deviceBuffer(k.d * 2);
  }
  int64_t savedBytes() const override { return 2 * k_.m * k_.h * 2; }  // pre-activation and GELU output

  Status forward(CUdeviceptr in, CUdeviceptr out, CUdeviceptr saved, CUstream stream) override {
    const CUdeviceptr pre = saved, h = saved + k_.m * k_.h * 2;
    GPUSCOPE_RETURN_IF_ERROR(k_.up.run(in, w1_, b1_, h, pre, stream));
    GPUSCOPE_RETURN_IF_ERROR(k_.down.run(h, w2_, b2_, k_.io_scratch, 0, stream));
    return k_.add.launch({in, k_.io_scratch}, out, k_.m * k_.d, stream);
  }

  Status backward(CUdeviceptr in, CUdeviceptr saved, CUdeviceptr dy, CUdeviceptr dx, CUstream stream) override {
    const CUdeviceptr pre = saved, h = saved + k_.m * k_.h * 2;
    GPUSCOPE_RETURN_IF_ERROR(k_.grad_w2.run(h, dy, 0, dw2, 0, stream));
    GPUSCOPE_RETURN_IF_ERROR(k_.grad_b2.run(k_.ones, dy, 0, db2, 0, stream));
    GPUSCOPE_RETURN_IF_ERROR(k_.grad_h.run(dy, w2_, 0, k_.dh, 0, stream));
    const std::vector<CUdeviceptr> gelu_in =
        k_.gelu_grad_dy_first ? std::vector<CUdeviceptr>{k_.dh, pre} : std::vector<CUdeviceptr>{pre, k_.dh};
    GPUSCOPE_RETURN_IF_ERROR(k_.gelu_grad.launch(gelu_in, k_.dpre, k_.m * k_.h, stream));
    GPUSCOPE_RETURN_IF_ERROR(k_.grad_w1.run(in, k_.dpre, 0, dw1, 0, stream));
    GPUSCOPE_RETURN_IF_ERROR(k_.grad_b1.run(k_.ones, k_.dpre, 0, db1, 0, stream));
    GPUSCOPE_RETURN_IF_ERROR(k_.grad_x.run(k_.dpre, w1_, 0, k_.io_scratch, 0, stream));
    return k_.add.launch({dy, k_.io_scratch}, dx, k_.m * k_.d, stream);  // the residual's gradient
  }

  Status sgdStep(CUstream stream) {
    for (auto [w, g, n] :
         {std::tuple{w1_, dw1, k_.d * k_.h}, {b1_, db1, k_.h}, {w2_, dw2, k_.h * k_.d}, {b2_, db2, k_.d}}) {
      GPUSCOPE_RETURN_IF_ERROR(k_.sgd.launch({w, g}, w, n, stream));
    }
    return Status::ok();
  }

  CUdeviceptr dw1 = 0, db1 = 0, dw2 = 0, db2 = 0;

 private:
  BlockKernels& k_;
  CUdeviceptr w1_ = 0, b1_ = 0, w2_ = 0, b2_ = 0;
};

std::vector<float> download(CUdeviceptr p, size_t n) {
  std::vector<uint16_t> bits(n);
  SAMPLE_CUDA(cudaMemcpy(bits.data(), reinterpret_cast<void*>(p), n * 2, cudaMemcpyDeviceToHost));
  std::vector<float> out(n);
  for (size_t i = 0; i < n; ++i) out[i] = bf16ToFloat(bits[i]);
  return out;
}

size_t deviceMemoryUsed() {
  size_t free = 0, total = 0;
  SAMPLE_CUDA(cudaMemGetInfo(&free, &total));
  return total - free;
}

// One training step; `blocks`, when given, are updated by an SGD step after the backward pass.
double stepMs(CheckpointExecutor& e, CUdeviceptr x, CUdeviceptr y, CUdeviceptr dy, CUdeviceptr dx, const char* name,
              const std::vector<std::unique_ptr<MlpBlock>>* blocks = nullptr) {
  SAMPLE_CUDA(cudaDeviceSynchronize());
  const auto start = std::chrono::steady_clock::now();
  nvtxRangePushA(name);
  nvtxRangePushA("forward");
  if (!e.forward(x, y, nullptr)) std::exit(2);
  nvtxRangePop();
  nvtxRangePushA("backward");
  if (Status s = e.backward(dy, dx, nullptr); !s) std::fprintf(stderr, "%s\n", s.message().c_str()), std::exit(2);
  nvtxRangePop();
  if (blocks) {
    nvtxRangePushA("optimizer");
    for (const auto& b : *blocks) {
      if (Status s = b->sgdStep(nullptr); !s) std::fprintf(stderr, "%s\n", s.message().c_str()), std::exit(2);
    }
    nvtxRangePop();
  }
  SAMPLE_CUDA(cudaDeviceSynchronize());
  nvtxRangePop();
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
}

// Everything both ways share: the blocks, their costs for the planner, the input and its gradient.
struct Stack {
  int64_t io = 0, width = 0;
  std::unique_ptr<BlockKernels> kernels;
  std::vector<std::unique_ptr<MlpBlock>> blocks;
  std::vector<CheckpointLayer*> layers;
  std::vector<LayerCost> costs;
  CUdeviceptr x = 0, dy = 0, y = 0, dx = 0;

  Stack(int layer_count, int64_t tokens, int64_t w, std::mt19937& rng) : io(tokens * w), width(w) {
    kernels = BlockKernels::create(tokens, w);
    for (int l = 0; l < layer_count; ++l) {
      blocks.push_back(std::make_unique<MlpBlock>(*kernels, rng));
      layers.push_back(blocks.back().get());
      costs.push_back({io * 2 + blocks.back()->savedBytes(), io * 2, 1});
    }
    x = deviceRandom(io, 1.0f, rng), dy = deviceRandom(io, 0.01f, rng);
    y = deviceBuffer(io * 2), dx = deviceBuffer(io * 2);
  }
};

// --compare: plain and checkpointed side by side, buffers allocated once, gradients compared.
int compareBothWays(Stack& st, PlanRuntime& plan, int steps) {
  const CheckpointPlan chosen = planUniform(st.costs, static_cast<size_t>(plan.checkpointSegments().value_or(0)));
  size_t before = deviceMemoryUsed();
  CheckpointExecutor plain = orExit(CheckpointExecutor::create(st.layers, st.io * 2, {0}), kSample, "plain stack");
  const size_t plain_device = deviceMemoryUsed() - before;
  before = deviceMemoryUsed();
  CheckpointExecutor checkpointed =
      orExit(CheckpointExecutor::create(st.layers, st.io * 2, chosen.segment_starts), kSample, "segments");
  const size_t checkpointed_device = deviceMemoryUsed() - before;

  // The same step both ways on the same inputs: the gradients must agree. Outputs are poisoned (NaN)
  // before each run, so an element left unwritten cannot pass.
  const size_t dw1_size = st.width * 4 * st.width;
  auto poison = [&] {
    for (CUdeviceptr p : {st.y, st.dx}) SAMPLE_CUDA(cudaMemset(reinterpret_cast<void*>(p), 0xff, st.io * 2));
    SAMPLE_CUDA(cudaMemset(reinterpret_cast<void*>(st.blocks[0]->dw1), 0xff, dw1_size * 2));
  };
  poison();
  stepMs(plain, st.x, st.y, st.dy, st.dx, "plain");
  const std::vector<float> dx_plain = download(st.dx, st.io), dw1_plain = download(st.blocks[0]->dw1, dw1_size);
  const std::vector<float> y_plain = download(st.y, st.io);
  poison();
  stepMs(checkpointed, st.x, st.y, st.dy, st.dx, "checkpointed");
  const double dx_error = relativeError(dx_plain, download(st.dx, st.io));
  const double dw1_error = relativeError(dw1_plain, download(st.blocks[0]->dw1, dw1_size));
  const double y_error = relativeError(y_plain, download(st.y, st.io));

  std::vector<double> plain_ms, checkpointed_ms;
  for (int s = 0; s < steps; ++s) {
    plain_ms.push_back(stepMs(plain, st.x, st.y, st.dy, st.dx, "plain"));
    checkpointed_ms.push_back(stepMs(checkpointed, st.x, st.y, st.dy, st.dx, "checkpointed"));
  }
  const double p = median(plain_ms), c = median(checkpointed_ms);
  std::printf(
      "{\"layers\": %zu, \"segments\": %zu, \"plain_step_ms\": %.3f, \"checkpointed_step_ms\": %.3f, "
      "\"extra_time\": %.4f, \"plain_activation_bytes\": %lld, \"checkpointed_activation_bytes\": %lld, "
      "\"activation_ratio\": %.4f, \"plain_device_bytes\": %zu, \"checkpointed_device_bytes\": %zu, "
      "\"predicted_peak_bytes\": %lld, \"predicted_baseline_bytes\": %lld, \"output_error\": %.3g, "
      "\"dx_error\": %.3g, \"dw1_error\": %.3g}\n",
      st.layers.size(), checkpointed.segments(), p, c, c / p - 1, static_cast<long long>(plain.activationBytes()),
      static_cast<long long>(checkpointed.activationBytes()),
      static_cast<double>(checkpointed.activationBytes()) / plain.activationBytes(), plain_device, checkpointed_device,
      static_cast<long long>(chosen.peak_bytes), static_cast<long long>(chosen.baseline_bytes), y_error, dx_error,
      dw1_error);
  std::fprintf(stderr, "%s", plan.report().c_str());
  const bool ok = y_error < 1e-2 && dx_error < 1e-2 && dw1_error < 1e-2 && std::isfinite(p);
  return sampleResult("runtime_checkpoint", ok,
                      "checkpointed output and gradients match the plain stack's (bf16 < 1e-2)");
}

// The program's own way: plain, or checkpointed in the segments GPUSCOPE_PLAN asks for, with the buffers
// allocated on each forward pass and freed after the backward pass, as a framework's allocator would.
int runAsPlanned(Stack& st, PlanRuntime& plan, int steps) {
  cudaMemPool_t pool;  // keep freed blocks in the pool between steps, as PyTorch's caching allocator does
  SAMPLE_CUDA(cudaDeviceGetDefaultMemPool(&pool, 0));
  uint64_t keep = UINT64_MAX;
  SAMPLE_CUDA(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &keep));
  const std::optional<int64_t> segments = plan.checkpointSegments();
  const std::vector<size_t> starts =
      segments ? planUniform(st.costs, static_cast<size_t>(*segments)).segment_starts : std::vector<size_t>{0};
  CheckpointExecutor e =
      orExit(CheckpointExecutor::create(st.layers, st.io * 2, starts, Allocation::kPerStep), kSample, "stack");
  std::vector<double> times;
  for (int s = 0; s < steps; ++s) times.push_back(stepMs(e, st.x, st.y, st.dy, st.dx, "step", &st.blocks));
  const std::vector<float> dx = download(st.dx, st.io);
  double sum = 0;
  for (float v : dx) sum += std::fabs(v);
  std::printf(
      "{\"segments\": %zu, \"median_step_ms\": %.3f, \"activation_bytes\": %lld, \"input_grad_abs_sum\": %.6g}\n",
      e.segments(), median(times), static_cast<long long>(e.activationBytes()), sum);
  std::fprintf(stderr, "%s", plan.report().c_str());
  return sampleResult("runtime_checkpoint", std::isfinite(sum) && sum > 0, "the input gradient is finite and non-zero");
}

}  // namespace

int main(int argc, char** argv) {
  const bool compare = argc > 1 && std::strcmp(argv[1], "--compare") == 0;
  const int first = compare ? 2 : 1;
  auto arg = [&](int i, long long fallback) { return argc > first + i ? std::atoll(argv[first + i]) : fallback; };
  const int layers = static_cast<int>(arg(0, 24)), steps = static_cast<int>(arg(3, 10));
  const int64_t tokens = arg(1, 8192), width = arg(2, 1024);
  if (layers < 1 || tokens < 1 || width < 8 || width % 8 != 0 || steps < 1) {
    std::fprintf(stderr,
                 "usage: sample_runtime_checkpoint [--compare] [LAYERS] [TOKENS] [WIDTH, a multiple of 8] [STEPS]\n");
    return 2;
  }
  PlanRuntime plan = orExit(PlanRuntime::fromEnvironment(), kSample, "plan");
  SAMPLE_CUDA(cudaFree(nullptr));
  std::mt19937 rng(11);
  Stack st(layers, tokens, width, rng);
  return compare ? compareBothWays(st, plan, steps) : runAsPlanned(st, plan, steps);
}
