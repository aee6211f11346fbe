// The checkpoint executor on a real GPU: a stack of elementwise layers run plain and under several
// segmentations (uneven, one layer per segment, a long first segment) gives the same output and input
// gradient, bit for bit, since recomputation repeats the same kernels. Skips where there is no GPU.
#include "advisor/runtime/checkpoint_executor.h"

#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "advisor/runtime/cuda_driver.h"
#include "advisor/runtime/fused_chain.h"

namespace gpuscope::runtime {
namespace {

constexpr int64_t kN = 4096;

// y = x + c·tanh(x), saving tanh(x); dx = dy·(1 + c·(1 - t²)).
class TanhLayer : public CheckpointLayer {
 public:
  explicit TanhLayer(float c)
      : save_(*FusedChain::create("tanh(x)", DType::kF32)),
        out_(*FusedChain::create("x + " + std::to_string(c) + " * t", DType::kF32)),
        grad_(*FusedChain::create("dy * (1 + " + std::to_string(c) + " * (1 - t * t))", DType::kF32)) {}
  int64_t savedBytes() const override { return kN * 4; }
  Status forward(CUdeviceptr in, CUdeviceptr out, CUdeviceptr saved, CUstream stream) override {
    GPUSCOPE_RETURN_IF_ERROR(save_.launch({in}, saved, kN, stream));
    return out_.launch({in, saved}, out, kN, stream);
  }
  Status backward(CUdeviceptr, CUdeviceptr saved, CUdeviceptr grad_out, CUdeviceptr grad_in, CUstream stream) override {
    ++backward_calls;
    return grad_.launch({grad_out, saved}, grad_in, kN, stream);
  }
  int backward_calls = 0;

 private:
  FusedChain save_, out_, grad_;
};

struct StackResult {
  std::vector<float> output, grad_input;
};

StackResult runWith(const CudaDriver& cu, std::vector<CheckpointLayer*> stack, std::vector<size_t> starts,
                    Allocation allocation = Allocation::kOnce) {
  std::vector<float> x(kN), dy(kN);
  for (int64_t i = 0; i < kN; ++i) x[i] = std::sin(0.01f * i) * 2, dy[i] = std::cos(0.003f * i);
  CUdeviceptr dx_in = 0, dy_in = 0, out = 0, grad = 0;
  for (CUdeviceptr* p : {&dx_in, &dy_in, &out, &grad}) cu.memAlloc(p, kN * 4);
  cu.memcpyHtoD(dx_in, x.data(), kN * 4);
  cu.memcpyHtoD(dy_in, dy.data(), kN * 4);
  cu.memsetD8(out, 0xff, kN * 4);  // NaN: an element left unwritten cannot pass
  cu.memsetD8(grad, 0xff, kN * 4);
  StackResult r{std::vector<float>(kN), std::vector<float>(kN)};
  {
    Result<CheckpointExecutor> e = CheckpointExecutor::create(stack, kN * 4, starts, allocation);
    EXPECT_TRUE(e) << e.status().message();
    if (e) {
      EXPECT_FALSE(e->backward(dy_in, grad, nullptr));  // no forward yet
      EXPECT_TRUE(e->forward(dx_in, out, nullptr));
      EXPECT_TRUE(e->backward(dy_in, grad, nullptr));
      EXPECT_TRUE(cu.check(cu.ctxSynchronize(), "cuCtxSynchronize"));
    }
  }
  cu.memcpyDtoH(r.output.data(), out, kN * 4);
  cu.memcpyDtoH(r.grad_input.data(), grad, kN * 4);
  for (CUdeviceptr p : {dx_in, dy_in, out, grad}) cu.memFree(p);
  return r;
}

TEST(CheckpointExecutorGpu, EverySegmentationGivesThePlainResult) {
  Result<const CudaDriver*> driver = cudaDriver();
  if (!driver || !ensureContext(**driver)) GTEST_SKIP() << "no CUDA driver or GPU";
  std::vector<std::unique_ptr<TanhLayer>> layers;
  std::vector<CheckpointLayer*> stack;
  for (int l = 0; l < 7; ++l) {
    layers.push_back(std::make_unique<TanhLayer>(0.5f + 0.1f * l));
    stack.push_back(layers.back().get());
  }
  const StackResult plain = runWith(**driver, stack, {0});
  // The host's own result for the output, so the plain path is checked too.
  double y = std::sin(0.01f * 100) * 2;
  for (int l = 0; l < 7; ++l) y = y + (0.5 + 0.1 * l) * std::tanh(y);
  EXPECT_NEAR(plain.output[100], y, 1e-4);
  for (const std::vector<size_t>& starts :
       std::vector<std::vector<size_t>>{{0, 3}, {0, 1, 2, 3, 4, 5, 6}, {0, 5}, {0, 1, 5}}) {
    SCOPED_TRACE("segments starting at " + std::to_string(starts.size()));
    for (auto& l : layers) l->backward_calls = 0;
    const StackResult checkpointed = runWith(**driver, stack, starts);
    EXPECT_EQ(checkpointed.output, plain.output);
    EXPECT_EQ(checkpointed.grad_input, plain.grad_input);
    for (auto& l : layers) EXPECT_EQ(l->backward_calls, 1);
  }
  // Buffers allocated on each forward pass and freed after its backward pass, stream-ordered.
  const StackResult per_step = runWith(**driver, stack, {0, 2, 4}, Allocation::kPerStep);
  EXPECT_EQ(per_step.output, plain.output);
  EXPECT_EQ(per_step.grad_input, plain.grad_input);
}

}  // namespace
}  // namespace gpuscope::runtime
