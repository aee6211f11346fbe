// The host's side of a step: what the fixes leave of the host's own work per step (measured into
// Context::host), so that a predicted step is never shorter than the time its host needs to issue it.
#pragma once

#include <cstdint>
#include <string_view>

#include "advisor/context.h"

namespace gpuscope::advisor {

// Host time a torch.compile(mode="reduce-overhead") call still takes between its CUDA-graph replays (guards,
// the graph tree's bookkeeping, autograd): GPU idle measured on an H100 (docs/benchmarks.md) after `gpuscope
// apply` of a CUDA-graph plan, 0.86-1.75 ms per forward or backward call; the low end taken.
inline constexpr int64_t kCompiledCallHostNs = 860'000;
inline constexpr int64_t kCompiledCallsPerStep = 2;  // a training step's: the model's forward and its backward
// An inference forward (eval mode, no gradients) compiled the same way costs its host less: no autograd, nothing
// kept for a backward. At batch 1 on an H200 (tests/bench/torch_graph_call_cost.py --inference, 2026-12-03,
// docs/benchmarks.md): torchvision's ResNet-18 0.17 ms a call and MobileNetV3-Small 0.41 ms, their mean taken
// (ResNet-50, 0.38 ms, is the model of two corpus cases and was left out of it).
inline constexpr int64_t kCompiledInferenceCallHostNs = 290'000;
// Compiled in torch.compile's default mode (no CUDA graphs), a call still costs the host its guards and
// AOTAutograd's wrappers, whatever its kernels: a Linear + LayerNorm + GELU block, trained, took 0.50-0.56 ms a
// forward and 0.67-0.85 ms a backward compiled, against 0.21-0.27 and 0.51-0.66 eager (H200, 2026-12-02,
// tests/bench/torch_graph_call_cost.py --mode default, with and without autocast; docs/benchmarks.md); the low ends
// taken. A model called once a step launches more than that costs; a decoder called once per position does not.
inline constexpr int64_t kCompiledDefaultForwardHostNs = 500'000;
inline constexpr int64_t kCompiledDefaultBackwardHostNs = 670'000;
// A DistributedDataParallel model compiled the same way keeps work per parameter tensor in its calls (its
// reducer's gradient hooks and bucket copies, the compiled pieces' inputs): on an H100, residual MLPs of 64 and
// 256 parameter tensors wrapped in DDP took 9.5-10.1 and 34.7-38.1 ms of host time per compiled training step
// with 1 to 64 gradient buckets (3.9 and 13.3-13.9 ms of it in the forward), against 2.1 and 5.9 ms unwrapped
// (tests/bench/torch_graph_call_cost.py --ddp-caps, docs/benchmarks.md): 0.12 ms more per parameter tensor.
inline constexpr int64_t kDdpCompiledHostPerParameterNs = 120'000;
// Compiled code issues each kernel from Inductor's Python wrapper, which costs the host about as much per launch
// as eager code does: on an H200 plain (tests/bench/torch_host_costs.py, docs/benchmarks.md, 2026-12-01) the
// compiled forward and backward of a naive GPT, GPT-2 and ResNet-50 took 19.9, 28.6 and 28.7 us per launch, 27.3,
// 38.8 and 35.3 us under bf16 autocast (their eager ones 21.8-50.9 us). Where the eager model launched for less,
// its compiled launches cost at least the low end of these.
inline constexpr int64_t kCompiledLaunchHostNs = 19'900;
inline constexpr int64_t kCompiledHalfLaunchHostNs = 27'300;  // the model computes in bf16 or fp16

// What a set of fixes changes in the host's work.
struct HostChanges {
  bool graphs = false;                // CUDA graphs replay the forward and backward
  int64_t launches_removed = 0;       // per step, by fusion (torch.compile, the runtime's fused kernels)
  bool compiled = false;              // torch.compile runs the model (a checkpoint's recomputation is in its graph)
  bool checkpoint = false;            // the repeated blocks' forward runs again in the backward
  bool autocast = false;              // bf16 autocast: each fp32 GEMM's weight cast in the forward
  bool fused_optimizer = false;       // a per-parameter optimizer step becomes one fused step
  int64_t input_wait_removed_ns = 0;  // per step: the next batch is prepared by background workers
  bool allocate_once = false;         // device memory allocated before the loop, not in every step
  bool pin_once = false;              // pinned host buffers made before the loop, not in every step
  bool compile_once = false;          // kernels compiled in the steps are compiled once, before them
};

// The host's work per step after the changes (0 when the trace does not measure it).
int64_t hostStepAfter(const Context& context, const HostChanges& what);
// The optimizer step's host time per step after the changes (a fused step costs a quarter of a per-parameter one).
double optimizerHostAfter(const Context& context, const HostChanges& what);
// The host's time of one torch.compile call that replays CUDA graphs, without a DDP model's work per parameter (0
// outside PyTorch or where no call is made).
int64_t graphCallHost(const Context& context);
// The host's time per step in torch.compile's calls that replay CUDA graphs (0 outside PyTorch, where the graph is
// launched by one call of microseconds).
int64_t graphCallsHost(const Context& context);
// The step less the host's own work per step today: the most that shortening the GPU's side of the step (hiding
// communication, a rank that waits less) can win; the whole step where the host's work is not measured.
int64_t gpuSlack(const Context& context);

inline constexpr std::string_view kHostFloorBasis =
    "the host's own work per step (its step range less the time it waited for the GPU), with the forward and "
    "backward scaled by their launches (less those fusion removes, plus a compiled recomputation's and one cast "
    "per fp32 GEMM under autocast; compiled, at least 19.9 us per launch, 27.3 us in bf16 or fp16, and 0.50 ms "
    "per compiled forward and 0.67 ms per backward of each model call), a "
    "per-parameter optimizer step's host time divided by 4 "
    "when fused, 3.2× the blocks' forward host time added for eager recomputation, and 0.86 ms per compiled "
    "call with CUDA graphs (0.29 ms for an inference step's one call), plus 0.12 ms per parameter tensor of a "
    "DistributedDataParallel model "
    "(tests/bench/torch_host_costs.py, tests/bench/torch_graph_call_cost.py, docs/benchmarks.md)";

}  // namespace gpuscope::advisor
