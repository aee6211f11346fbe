// Iterations found from NVTX ranges, kernel patterns and host synchronisations, on the fixtures (whose
// programs know how many steps they ran) and on built traces.
#include "analyzer/iterations.h"
#include "analyzer/memory_timeline.h"
#include "analyzer/phases.h"

#include <gtest/gtest.h>

#include <functional>
#include <map>

#include "tests/analyzer/load_for_test.h"
#include "tests/support/sample_trace.h"
#include "tests/support/trace_builder.h"

namespace gpuscope::analysis {
namespace {

using schema::CopyKind;
using schema::MemoryKind;
using testing::TempDir;
using testing::TraceBuilder;

Iterations iterationsOf(const std::string& path) { return findIterations(loadForTest(path)); }

// Appends kernels one after another to b: each 8 us long, launched 10 us after the one before, 1 us ahead of its
// start.
std::function<void(const std::string&)> kernelSequence(TraceBuilder& b) {
  return [&b, t = int64_t{1'000'000}](const std::string& name) mutable {
    b.kernel(name, t + 1'000, t + 9'000, 7, t);
    t += 10'000;
  };
}

TEST(Iterations, NvtxStepsOfThePyTorchFixtures) {
  // overhead_bench.py ran one warm-up and four measured steps, each an NVTX range "step".
  for (const char* name : {"pytorch_gpt2_step.gpuscope", "pytorch_resnet_step.gpuscope"}) {
    SCOPED_TRACE(name);
    const Iterations it = iterationsOf(testing::fixturePath(name));
    EXPECT_EQ(it.source, IterationSource::kNvtx);
    EXPECT_EQ(it.marker, "step");
    ASSERT_EQ(it.list.size(), 5u);
    EXPECT_TRUE(it.list[0].warmup);
    EXPECT_EQ(it.warmupCount(), 1);
    for (size_t i = 2; i < it.list.size(); ++i) EXPECT_EQ(it.list[i].kernels, it.list[1].kernels);
    EXPECT_EQ(it.steady_duration.count, 4);
  }
  // The GPT-2 step is GPU-bound: its kernels run on after the host range ends, and the iteration's time
  // is the GPU's.
  const Iterations gpt = iterationsOf(testing::fixturePath("pytorch_gpt2_step.gpuscope"));
  EXPECT_GT(gpt.list[1].gpu_end_ns, gpt.list[1].end_ns);
  EXPECT_EQ(gpt.list[1].durationNs(), gpt.list[1].gpu_end_ns - gpt.list[1].start_ns);
}

TEST(Iterations, NumberedNvtxRangesAreOneRange) {
  const Iterations it = iterationsOf(testing::fixturePath("nvtx_training.gpuscope"));  // "step 0".."step 19"
  EXPECT_EQ(it.source, IterationSource::kNvtx);
  EXPECT_EQ(it.marker, "step #");
  EXPECT_EQ(it.list.size(), 20u);
}

TEST(Iterations, KernelPatternWithoutAnnotations) {
  const Iterations chain = iterationsOf(testing::fixturePath("elementwise_chain.gpuscope"));
  EXPECT_EQ(chain.source, IterationSource::kKernelPattern);
  EXPECT_EQ(chain.marker, "scale(float*, float, int)");  // the chain's first kernel opens each iteration
  EXPECT_EQ(chain.list.size(), 50u);
  for (const Iteration& i : chain.list) EXPECT_EQ(i.kernels, 4);
}

TEST(Iterations, GraphReplaysAreSteps) {
  const Iterations graph = iterationsOf(testing::fixturePath("graph_replay.gpuscope"));
  EXPECT_EQ(graph.source, IterationSource::kGraphLaunch);
  EXPECT_EQ(graph.list.size(), 200u);
  for (const Iteration& i : graph.list) EXPECT_EQ(i.kernels, graph.list.front().kernels);
}

TEST(Iterations, HostSynchronisationsEndSteps) {
  // Two alternating kernels, 1,000 of each per step, a synchronize around every step: the pattern alone
  // would give two-kernel iterations, the syncs give the steps.
  const Iterations it = iterationsOf(testing::fixturePath("pytorch_launch_loop.gpuscope"));
  EXPECT_EQ(it.source, IterationSource::kHostSync);
  ASSERT_EQ(it.list.size(), 4u);  // one warm-up and three measured steps; the set-up before them is not one
  for (const Iteration& i : it.list) EXPECT_EQ(i.kernels, 2000);
}

TEST(Iterations, JaxLoopWithoutAnnotationsAmidAutotuning) {
  // 50 jitted updates after thousands of autotuning kernels, then an op-by-op loss after the loop. The
  // autotuner's kernels lie inside XLA's annotated compiles and are left out; most of the rest are the update's
  // command buffer (a CUDA graph), whose launches open the steps; the stretch after the last one is not a step.
  const Iterations it = iterationsOf(testing::fixturePath("program_jax_mlp.gpuscope"));
  EXPECT_EQ(it.source, IterationSource::kGraphLaunch);
  EXPECT_GE(it.list.size(), 45u);
  EXPECT_LE(it.list.size(), 50u);
  for (const Iteration& i : it.list) EXPECT_EQ(i.kernels, it.list[it.list.size() / 2].kernels);
}

// A jitted train step over batches of two lengths, in no regular order (a Flax classifier padded to its longest
// review, H200, 2026-11-29): XLA compiled the step once per length, its autotuner timing candidate kernels
// between synchronisations inside the compile's range, and each length's executable names its kernels its own
// way, so no kernel opens every step. XLA's range around each execution of the step marks them.
TEST(Iterations, JaxStepsOfSeveralShapesFromXlasModuleRanges) {
  TempDir dir;
  TraceBuilder b(dir.path("t.gpuscope"));
  b.nvtx("XlaCompile:#module=jit_train_step#", 0, 900'000'000, 1, "TSL");
  for (int64_t t = 1'000'000; t < 880'000'000; t += 2'000'000) {  // the autotuner's candidates
    b.kernel("gemm_fusion_dot_candidate", t, t + 200'000, 9, t - 50'000);
    b.api("cuStreamSynchronize", t + 100'000, t + 250'000, 0, 5);
  }
  const bool shorter[] = {true,  false, false, true, false, true,  true, false, true, false, false, true,
                          false, true,  true,  true, false, false, true, false, true, false, true,  true};
  int64_t t = 1'000'000'000;
  for (int step = 0; step < 24; ++step, t += 5'000'000) {
    const std::string program = shorter[step] ? "7" : "9";
    b.nvtx("XlaModule:#hlo_module=jit_train_step,program_id=" + program + "#", t, t + 400'000, 1, "TSL");
    for (int k = 0; k < 6; ++k) {
      const int64_t at = t + 500'000 + k * 500'000;
      b.kernel((shorter[step] ? "loop_add_fusion_" : "input_reduce_fusion_") + std::to_string(k), at, at + 400'000, 7,
               t + 10'000 + k * 50'000);
    }
  }
  ASSERT_TRUE(b.finish());
  const Iterations it = iterationsOf(dir.path("t.gpuscope"));
  EXPECT_EQ(it.source, IterationSource::kXlaModule);
  EXPECT_EQ(it.marker, "jit_train_step");
  EXPECT_GE(it.list.size(), 22u);
  for (const Iteration& i : it.list) EXPECT_EQ(i.kernels, 6);  // none of the autotuner's
}

TEST(Iterations, NoneInProgramsWithoutALoop) {
  for (const char* name : {"torch_kernels.gpuscope", "cupy_kernels.gpuscope", "launch_bound.gpuscope"}) {
    EXPECT_EQ(iterationsOf(testing::fixturePath(name)).source, IterationSource::kNotFound) << name;
  }
  TempDir dir;
  ASSERT_TRUE(testing::writeEmptyTrace(dir.path("e.gpuscope")));
  EXPECT_TRUE(iterationsOf(dir.path("e.gpuscope")).list.empty());
}

// A cuBLAS MLP (bench/corpus/cuda_sgemm_fp32's twin): its weights filled layer by layer (fill, convert, fill
// the bias: three like stretches), then 25 forwards of a GEMM and a bias kernel per layer, no kernel once per
// forward. The set-up's stretches are no loop of the program's: they hold under a third of its kernels.
TEST(Iterations, ASetUpLoopBeforeAnUnmarkedLoopIsNoLoopOfSteps) {
  TempDir dir;
  TraceBuilder b(dir.path("t.gpuscope"));
  auto kernel = kernelSequence(b);
  for (int layer = 0; layer < 4; ++layer) {
    for (const char* name : {"fill_uniform", "to_bf16", "fill_uniform"}) kernel(name);
  }
  for (int forward = 0; forward < 25; ++forward) {
    for (int layer = 0; layer < 4; ++layer) {
      kernel("gemm");
      kernel("bias_relu");
    }
  }
  ASSERT_TRUE(b.finish());
  EXPECT_EQ(iterationsOf(dir.path("t.gpuscope")).source, IterationSource::kNotFound);
}

// Thrust binning every frame (bench/corpus/cuda_thrust_binning): CUB puts each algorithm call in an NVTX range
// of its own domain, "CCCL" ("cub::DeviceFor::Bulk" around one kernel, six a frame, a third of the frame's
// launches). Those ranges time a library call, not the frame: the frame is found from the kernels (an H200,
// 2026-11-29: 55 us read from the ranges for a 0.63 ms frame).
TEST(Iterations, ALibrarysOwnRangesAreNoSteps) {
  TempDir dir;
  TraceBuilder b(dir.path("t.gpuscope"));
  int64_t t = 1'000'000;
  auto kernel = [&b, &t](const std::string& name, const char* cub_range) {
    if (cub_range) b.nvtx(cub_range, t, t + 9'500, 1, "CCCL");
    b.kernel(name, t + 1'000, t + 9'000, 7, t);
    t += 10'000;
  };
  for (int frame = 0; frame < 60; ++frame) {
    kernel("transform_kernel", "cub::DeviceFor::Bulk");
    kernel("sequence_kernel", "cub::DeviceFor::Bulk");
    kernel("copy_kernel", "cub::DeviceFor::Bulk");
    for (const char* name : {"radix_upsweep", "radix_scan", "radix_downsweep", "radix_upsweep", "radix_downsweep"})
      kernel(name, nullptr);
    kernel("reduce_by_key", nullptr);
    kernel("fill_kernel", "cub::DeviceFor::Bulk");
    kernel("scatter_counts", nullptr);
    kernel("move", nullptr);
    kernel("uninitialized_fill", "cub::DeviceFor::Bulk");
    kernel("uninitialized_fill", "cub::DeviceFor::Bulk");
    t += 400'000;  // the frame's cudaMalloc and cudaFree calls
  }
  ASSERT_TRUE(b.finish());
  const Iterations it = iterationsOf(dir.path("t.gpuscope"));
  EXPECT_EQ(it.source, IterationSource::kKernelPattern);
  EXPECT_GE(it.list.size(), 55u) << it.marker;
  EXPECT_LE(it.list.size(), 60u) << it.marker;
}

// A CuPy script warms its smoothing kernel up on five frames, then runs fifty frames of a roll (two copies) and
// the kernel: the warm-up's one-kernel stretches are no steps, and the loop's three-kernel steps are found
// (bench/corpus/cupy_kernel_source_per_step, H200, 2026-11-29: no iterations were found, the run taken whole).
TEST(Iterations, AWarmUpOfPartOfTheStepIsNoStep) {
  TempDir dir;
  TraceBuilder b(dir.path("t.gpuscope"));
  auto kernel = kernelSequence(b);
  for (const char* name : {"generate_seed_pseudo", "gen_sequenced"}) kernel(name);
  for (int frame = 0; frame < 5; ++frame) kernel("smooth");
  for (int frame = 0; frame < 50; ++frame) {
    for (const char* name : {"cupy_copy__float32_float32", "cupy_copy__float32_float32", "smooth"}) kernel(name);
  }
  ASSERT_TRUE(b.finish());
  const Iterations it = iterationsOf(dir.path("t.gpuscope"));
  EXPECT_EQ(it.source, IterationSource::kKernelPattern);
  EXPECT_GE(it.list.size(), 48u) << it.marker;
  EXPECT_LE(it.list.size(), 50u) << it.marker;
  for (const Iteration& step : it.list) EXPECT_EQ(step.kernels, 3) << it.marker;
}

// A CuPy script fills its video frames one array at a time (a random-number kernel and a conversion each), warms
// its step up on three frames, then times 40: the set-up loop splits its kernels more evenly than any kernel of
// the steps (whose warm-up lacks the roll), but holds too little of the run to be the loop; the next most even
// kernel, once per step, marks the steps.
TEST(Iterations, AnEvenSetUpLoopGivesWayToTheLoopOfSteps) {
  TempDir dir;
  TraceBuilder b(dir.path("t.gpuscope"));
  auto kernel = kernelSequence(b);
  for (int frame = 0; frame < 8; ++frame) {
    for (const char* name : {"gen_sequenced", "random_x_mod_1"}) kernel(name);
  }
  for (int step = 0; step < 43; ++step) {
    if (step >= 3) kernel("cupy_roll");
    for (const char* name : {"cupy_gradient", "cupy_hypot", "cupy_arctan2", "cupy_sum", "norm"}) kernel(name);
  }
  ASSERT_TRUE(b.finish());
  const Iterations it = iterationsOf(dir.path("t.gpuscope"));
  EXPECT_EQ(it.source, IterationSource::kKernelPattern);
  EXPECT_NE(it.marker, "gen_sequenced");
  EXPECT_GE(it.list.size(), 40u);
}

// A jitted JAX training loop draws each epoch's batch order (an iota and a sort) and then runs 40 steps of the
// same kernels: the epoch's iota splits the run into perfectly even stretches, the step's first kernel nearly as
// evenly into forty times as many (its last stretch of each epoch holds the epoch's kernels). The steps are the
// loop the program times: 3.6 ms, not the 143 ms epoch (a Flax CNN on an H200, 2026-11-28).
TEST(Iterations, StepsInsideEpochsAreTheIterations) {
  TempDir dir;
  TraceBuilder b(dir.path("t.gpuscope"));
  auto kernel = kernelSequence(b);
  std::vector<std::string> step_kernels{"loop_multiply_fusion"};
  for (int layer = 0; layer < 6; ++layer) {
    for (const char* name : {"conv_fprop_", "loop_relu_fusion_", "conv_dgrad_"})
      step_kernels.push_back(name + std::to_string(layer));
  }
  step_kernels.push_back("loop_adam_fusion");  // 20 kernels a step
  for (int epoch = 0; epoch < 4; ++epoch) {
    for (const char* name : {"wrapped_iota", "sort_13_1", "sort_13_1__2", "wrapped_gather"}) kernel(name);
    for (int step = 0; step < 40; ++step) {
      for (const std::string& name : step_kernels) kernel(name);
    }
  }
  ASSERT_TRUE(b.finish());
  const Iterations it = iterationsOf(dir.path("t.gpuscope"));
  EXPECT_EQ(it.source, IterationSource::kKernelPattern);
  EXPECT_EQ(it.marker, "loop_multiply_fusion");
  EXPECT_GE(it.list.size(), 150u);
}

// A CuPy conjugate-gradient step computes two dot products: the reduction's kernels, twice a step, split it into
// halves of nine kernels as evenly as the sparse product's kernel, once a step, splits it, and more often; but
// the halves alternate between two sequences, and the step is the whole of both (cupyx CSR on an H200,
// 2026-11-28: 0.99 ms read, half the step).
TEST(Iterations, AlternatingHalvesAreOneStep) {
  TempDir dir;
  TraceBuilder b(dir.path("t.gpuscope"));
  auto kernel = kernelSequence(b);
  for (int steps : {20, 60}) {  // a warm-up solve, then the timed one
    // Each solve starts with r = b - A x and r.r: a sparse product and a reduction outside the steps.
    for (const char* name : {"csr_partition", "csrmv", "subtract", "copy", "cub_reduce", "cub_single_tile"})
      kernel(name);
    for (int step = 0; step < steps; ++step) {
      for (const char* name : {"cub_reduce", "cub_single_tile", "copy", "true_divide", "multiply", "add",
                               "csr_partition", "csrmv", "multiply"})
        kernel(name);
      for (const char* name : {"cub_reduce", "cub_single_tile", "copy", "true_divide", "multiply", "add", "multiply",
                               "subtract", "multiply"})
        kernel(name);
      if (step % 20 == 19) kernel("sqrt");  // the residual read back now and then
    }
  }
  ASSERT_TRUE(b.finish());
  const Iterations it = iterationsOf(dir.path("t.gpuscope"));
  EXPECT_EQ(it.source, IterationSource::kKernelPattern);
  EXPECT_LE(it.list.size(), 82u) << it.marker;
  EXPECT_GE(it.list.size(), 70u) << it.marker;
}

// A CUDA C++ video filter uploads each frame, filters it and reduces it: two kernels a frame, so no kernel comes
// once in three, and no synchronisation; the frame's upload, one size and direction, opens each iteration.
TEST(Iterations, AnUploadEachIterationOpensItWhereNoKernelDoes) {
  TempDir dir;
  TraceBuilder b(dir.path("t.gpuscope"));
  int64_t t = 1'000'000;
  for (int frame = 0; frame < 30; ++frame) {
    b.copy(CopyKind::kHostToDevice, MemoryKind::kPinned, 8 << 20, t + 1'000, t + 150'000);
    b.kernel("bilateral", t + 151'000, t + 190'000, 7, t + 2'000);
    b.kernel("brightness", t + 191'000, t + 199'000, 7, t + 3'000);
    t += 210'000;
  }
  ASSERT_TRUE(b.finish());
  const Iterations it = iterationsOf(dir.path("t.gpuscope"));
  EXPECT_EQ(it.source, IterationSource::kCopyPattern);
  EXPECT_EQ(it.marker, "HtoD copy of 8.0 MiB");
  EXPECT_GE(it.list.size(), 29u);
  for (const Iteration& i : it.list) EXPECT_EQ(i.kernels, 2);
}

// A camera pipeline uploads each frame, demosaics it with one kernel and reads the result back: one kernel a
// frame is still a loop of frames where an upload opens each one.
TEST(Iterations, OneKernelAFrameBetweenAnUploadAndAReadBackIsAStep) {
  TempDir dir;
  TraceBuilder b(dir.path("t.gpuscope"));
  int64_t t = 1'000'000;
  for (int frame = 0; frame < 30; ++frame) {
    b.copy(CopyKind::kHostToDevice, MemoryKind::kPinned, 16 << 20, t + 1'000, t + 400'000);
    b.kernel("demosaic", t + 401'000, t + 700'000, 7, t + 2'000);
    b.copy(CopyKind::kDeviceToHost, MemoryKind::kPinned, 24 << 20, t + 701'000, t + 1'300'000);
    t += 3'000'000;
  }
  ASSERT_TRUE(b.finish());
  const Iterations it = iterationsOf(dir.path("t.gpuscope"));
  EXPECT_EQ(it.source, IterationSource::kCopyPattern);
  EXPECT_GE(it.list.size(), 29u);
  for (const Iteration& i : it.list) EXPECT_EQ(i.kernels, 1);
}

// A simulation frame: the host writes its inputs, runs one kernel, synchronises and reads the result. One kernel a
// frame is a loop of frames where the host synchronises after each and works between them.
TEST(Iterations, OneKernelAFrameBetweenHostSynchronisationsIsAStep) {
  TempDir dir;
  TraceBuilder b(dir.path("t.gpuscope"));
  int64_t t = 1'000'000;
  for (int frame = 0; frame < 30; ++frame) {
    b.kernel("integrate(Particle*, float const*, int, float)", t + 40'000'000, t + 57'000'000, 7, t + 39'990'000);
    b.api("cudaDeviceSynchronize", t + 40'000'000, t + 57'010'000);
    t += 67'000'000;
  }
  ASSERT_TRUE(b.finish());
  const Iterations it = iterationsOf(dir.path("t.gpuscope"));
  EXPECT_EQ(it.source, IterationSource::kHostSync);
  EXPECT_GE(it.list.size(), 28u);
  for (const Iteration& i : it.list) EXPECT_EQ(i.kernels, 1);
}

// record --torch: the model's forward ranges imply steps (forward to forward, its backward and optimizer step
// between), but a program's own step ranges, when it has them, win.
TEST(Iterations, ModuleRangesGiveStepsUnlessTheProgramMarksItsOwn) {
  for (bool own_steps : {false, true}) {
    TempDir dir;
    TraceBuilder b(dir.path("t.gpuscope"));
    int64_t t = 1'000'000;
    for (int step = 0; step < 4; ++step) {
      if (own_steps) b.nvtx("train step", t - 500, t + 150'000);
      b.nvtx("Net (forward)", t, t + 40'000);
      b.nvtx("Net.fc (forward)", t + 1'000, t + 30'000);
      for (int k = 0; k < 3; ++k) b.kernel("fwd", t + 2'000 + k * 10'000, t + 9'000 + k * 10'000);
      b.nvtx("Net (backward)", t + 45'000, t + 90'000, 2);
      for (int k = 0; k < 3; ++k) b.kernel("bwd", t + 50'000 + k * 10'000, t + 57'000 + k * 10'000);
      b.nvtx("optimizer.step (SGD)", t + 100'000, t + 120'000);
      b.kernel("sgd", t + 101'000, t + 110'000);
      t += 200'000;
    }
    ASSERT_TRUE(b.finish());
    const Iterations it = iterationsOf(dir.path("t.gpuscope"));
    EXPECT_EQ(it.marker, own_steps ? "train step" : "Net (forward) to the next");
    ASSERT_EQ(it.list.size(), 4u);
    EXPECT_EQ(it.list[1].kernels, 7) << own_steps;  // forward, backward and the optimizer's
  }
}

// Gradient accumulation under record --torch: four forwards (micro-batches) per optimizer step make one step
// each, the optimizer's period, and each step says it holds four.
TEST(Iterations, MicroBatchesOfOneOptimizerStepAreOneStep) {
  TempDir dir;
  TraceBuilder b(dir.path("t.gpuscope"));
  int64_t t = 1'000'000;
  for (int step = 0; step < 5; ++step) {
    for (int micro = 0; micro < 4; ++micro) {
      b.nvtx("Net (forward)", t, t + 40'000);
      b.kernel("fwd", t + 2'000, t + 30'000);
      b.nvtx("Net (backward)", t + 45'000, t + 90'000, 2);
      b.kernel("bwd", t + 50'000, t + 80'000);
      t += 100'000;
    }
    b.nvtx("optimizer.step (AdamW)", t, t + 20'000);
    b.kernel("adam", t + 1'000, t + 10'000);
    t += 30'000;
  }
  ASSERT_TRUE(b.finish());
  const Iterations it = iterationsOf(dir.path("t.gpuscope"));
  EXPECT_EQ(it.marker, "Net (forward) to the next");
  ASSERT_EQ(it.list.size(), 5u);
  EXPECT_EQ(it.list[1].end_ns - it.list[1].start_ns, 430'000);
  for (const Iteration& step : it.list) EXPECT_EQ(step.forwards, 4);
  EXPECT_EQ(it.list[1].kernels, 9);  // four forwards, four backwards and the optimizer's
}

// Full-batch training epochs, each evaluated under no_grad before it trains: two forwards of the model between
// optimizer steps, one with a backward. The first three epochs are annotated (the root's backward range), the rest
// hook-free (the bridge's hooks gone: forward ranges only). One micro-batch a step, not gradient accumulation.
TEST(Iterations, AnEvaluationForwardIsNoMicroBatch) {
  TempDir dir;
  TraceBuilder b(dir.path("t.gpuscope"));
  int64_t t = 1'000'000;
  for (int step = 0; step < 8; ++step) {
    b.nvtx("GCN (forward)", t, t + 40'000);
    b.kernel("eval", t + 2'000, t + 30'000);
    b.nvtx("GCN (forward)", t + 50'000, t + 90'000);
    b.kernel("fwd", t + 52'000, t + 80'000);
    if (step < 3) b.nvtx("GCN (backward)", t + 95'000, t + 140'000, 2);
    b.kernel("bwd", t + 100'000, t + 130'000);
    b.nvtx("optimizer.step (Adam)", t + 150'000, t + 170'000);
    b.kernel("adam", t + 151'000, t + 160'000);
    t += 200'000;
  }
  ASSERT_TRUE(b.finish());
  const Iterations it = iterationsOf(dir.path("t.gpuscope"));
  EXPECT_EQ(it.marker, "GCN (forward) to the next");
  ASSERT_EQ(it.list.size(), 8u);
  for (const Iteration& step : it.list) EXPECT_EQ(step.forwards, 1);
}

// A train and a val phase each epoch, as PyTorch's transfer-learning tutorial runs them: six training steps, then
// four forwards under no_grad, then the next epoch. The steps are the training ones, each as long as the others; the
// evaluation is in none of them and not between them.
TEST(Iterations, AnEvaluationPhaseBetweenEpochsIsNoStep) {
  TempDir dir;
  TraceBuilder b(dir.path("t.gpuscope"));
  int64_t t = 1'000'000;
  std::vector<std::pair<int64_t, int64_t>> evaluations;
  for (int epoch = 0; epoch < 3; ++epoch) {
    for (int step = 0; step < 6; ++step) {
      b.nvtx("ResNet (forward)", t, t + 40'000);
      b.kernel("fwd", t + 2'000, t + 30'000);
      b.kernel("bwd", t + 50'000, t + 80'000);
      b.nvtx("optimizer.step (SGD)", t + 85'000, t + 95'000);
      b.kernel("sgd", t + 86'000, t + 94'000);
      t += 100'000;
    }
    evaluations.push_back({t + 20'000, 0});
    for (int batch = 0; batch < 4; ++batch) {
      b.nvtx("ResNet (forward)", t + 20'000, t + 50'000);
      b.kernel("fwd", t + 22'000, t + 45'000);
      evaluations.back().second = t + 50'000;
      t += 60'000;
    }
    t += 300'000;  // the loader's workers start again
  }
  ASSERT_TRUE(b.finish());
  const Iterations it = iterationsOf(dir.path("t.gpuscope"));
  EXPECT_EQ(it.source, IterationSource::kNvtx);
  ASSERT_EQ(it.list.size(), 18u);
  for (const Iteration& step : it.list) {
    EXPECT_EQ(step.kernels, 3);
    EXPECT_LE(step.end_ns - step.start_ns, 120'000);
  }
  EXPECT_EQ(it.list[5].end_ns, evaluations[0].first);
  EXPECT_EQ(it.list[5].evaluation_end_ns, evaluations[0].second);
  EXPECT_EQ(it.list[17].evaluation_end_ns, evaluations[2].second);
  const SteadySteps steady = steadySteps(it);
  ASSERT_FALSE(steady.timed.between.empty());
  EXPECT_EQ(steady.timed.between.front().start, evaluations[0].second);
}

// torchvision's transforms are modules: a DataLoader in the training process calls them per sample, and a trace
// recorded where they were the only root ranges (the bridge's hooks gone before the model's first call) must not
// take them for the model. They launch no kernel.
TEST(Iterations, ModulesThatLaunchNothingAreNoModel) {
  TempDir dir;
  TraceBuilder b(dir.path("t.gpuscope"));
  int64_t t = 1'000'000;
  for (int step = 0; step < 6; ++step) {
    for (int sample = 0; sample < 8; ++sample)
      b.nvtx("Normalize (forward)", t + sample * 5'000, t + sample * 5'000 + 4'000);
    t += 50'000;
    for (int k = 0; k < 3; ++k) b.kernel("gemm", t + k * 10'000, t + 8'000 + k * 10'000);
    b.nvtx("optimizer.step (SGD)", t + 40'000, t + 60'000);
    b.kernel("sgd", t + 41'000, t + 50'000);
    t += 100'000;
  }
  ASSERT_TRUE(b.finish());
  const Iterations it = iterationsOf(dir.path("t.gpuscope"));
  EXPECT_EQ(it.marker.find("Normalize"), std::string::npos) << it.marker;
  for (const Iteration& step : it.list) EXPECT_LE(step.forwards, 1);
}

// apply's timing check runs three calls of a compiled model as the script wrote it, each launching several
// times the compiled step's kernels: the loop is still found.
TEST(Iterations, ThreeStepsOfOtherKernelsLeaveTheLoopALoop) {
  TempDir dir;
  TraceBuilder b(dir.path("t.gpuscope"));
  int64_t t = 1'000'000;
  for (int step = 0; step < 18; ++step) {
    b.nvtx("Net (forward)", t, t + 40'000);
    const int kernels = step >= 8 && step <= 10 ? 12 : 4;
    for (int k = 0; k < kernels; ++k) b.kernel("k", t + 2'000 + k * 5'000, t + 6'000 + k * 5'000);
    t += 100'000;
  }
  ASSERT_TRUE(b.finish());
  const Iterations it = iterationsOf(dir.path("t.gpuscope"));
  EXPECT_EQ(it.source, IterationSource::kNvtx);
  EXPECT_EQ(it.list.size(), 18u);
}

// Steps as `apply --record` writes them: the bridge removes its module hooks at the model's first call (step 1)
// and marks where its timing check ended (at check_step; none where negative); step i lasts length[i] µs, or 100.
Iterations underApply(int steps, int check_step, const std::map<int, int64_t>& length) {
  TempDir dir;
  TraceBuilder b(dir.path("t.gpuscope"));
  int64_t t = 1'000'000;
  for (int step = 0; step < steps; ++step) {
    if (step == 1) b.mark(std::string(kHooksRemovedMark), t - 100);
    if (step == check_step) b.mark(std::string(kApplyCheckDoneMark), t - 100);
    b.nvtx("Net (forward)", t, t + 40'000);
    for (int k = 0; k < 4; ++k) b.kernel("k", t + 2'000 + k * 10'000, t + 9'000 + k * 10'000);
    b.nvtx("optimizer.step (SGD)", t + 60'000, t + 70'000);
    t += length.contains(step) ? length.at(step) * 1'000 : 100'000;
  }
  EXPECT_TRUE(b.finish());
  return iterationsOf(dir.path("t.gpuscope"));
}

// A GPU behind its host still runs the step before the timed ones when they begin: the GPU's windows open once
// those kernels are done, the host's where its step begins (a BERT fine-tune's timed steps held 12.9 steps of
// kernels for 12 counted, H200, 2026-11-30).
TEST(Iterations, TheGpusWindowsOpenAfterTheStepBeforeRanOut) {
  Iterations it;
  it.source = IterationSource::kNvtx;
  for (int64_t i = 0; i < 8; ++i) {
    Iteration step;
    step.start_ns = i * 30'000'000, step.end_ns = step.start_ns + 20'000'000;
    // The GPU runs each step 8 ms behind its host.
    step.gpu_start_ns = step.start_ns + 8'000'000, step.gpu_end_ns = step.start_ns + 38'000'000;
    step.kernels = 100;
    step.hook_free = i >= 3;  // the bridge removed its hooks in step 3: steps 4-7 are timed
    it.list.push_back(step);
  }
  const StepWindows timed = steadySteps(it).timed;
  ASSERT_EQ(timed.windows.size(), 4u);
  ASSERT_EQ(timed.gpu_windows.size(), 4u);
  EXPECT_EQ(timed.windows[0].start, it.list[4].start_ns);
  EXPECT_EQ(timed.gpu_windows[0].start, it.list[3].gpu_end_ns);  // step 3's last kernel ran into step 4
  EXPECT_EQ(timed.gpu_windows[0].end, timed.windows[0].end);
  for (size_t w = 1; w < 4; ++w) EXPECT_EQ(timed.gpu_windows[w].start, timed.windows[w].start);  // one run
}

// The steps between the hooks' removal and the check's end compile the model or run it as written, and are not
// the ones timed.
TEST(Iterations, UnderApplyTheStepsAfterItsCheckAreTheTimedOnes) {
  const Iterations it = underApply(14, 10, {});
  ASSERT_EQ(it.list.size(), 14u);
  EXPECT_FALSE(it.list[9].hook_free);
  EXPECT_TRUE(it.list[10].hook_free);
}

// Under `apply --record` the steps before its check's end are no annotated steps either: the model's first call ran
// as written (fp32), the next ones compiled or were timed by the check, none the program as applied (the naive
// loop's first call read as fp32 GEMMs left after bf16 autocast was applied, H200, 2026-11-28).
TEST(Iterations, UnderApplyOnlyTheStepsAfterItsCheckAreTheProgramsSteps) {
  const Iterations it = underApply(14, 10, {});
  ASSERT_TRUE(it.applied);
  const SteadySteps s = steadySteps(it);
  ASSERT_TRUE(s.hook_free);
  ASSERT_FALSE(s.annotated.windows.empty());
  for (const Interval& w : s.annotated.windows) EXPECT_GE(w.start, it.hooks_removed_ns);
  EXPECT_FALSE(underApply(14, -1, {}).applied);
}

// With the check off (GPUSCOPE_APPLY_CHECK=0) no check ends, so the compile falls in the first hook-free steps.
// They are warm-up, judged among the hook-free steps, and the steady step is the program's own.
TEST(Iterations, ACompileInTheFirstHookFreeStepsIsWarmUp) {
  const Iterations it = underApply(12, -1, {{1, 3'600}, {2, 350}});  // compiling, recording the CUDA graphs
  ASSERT_EQ(it.list.size(), 12u);
  EXPECT_TRUE(it.list[1].warmup);
  EXPECT_TRUE(it.list[2].warmup);
  EXPECT_FALSE(it.list[3].warmup);
  EXPECT_EQ(it.steady_duration.median, 100'000);
  EXPECT_EQ(it.steady_duration.max, 100'000);
}

// Under `apply --record` the check's calls as written (from kApplyAsWrittenMark to its end) are gpuscope's own: no
// annotated step to take kernels from, and their memory (fp32, not checkpointed) no peak of the run with the plan.
TEST(Iterations, TheChecksCallsAsWrittenAreNeitherStepsNorPeak) {
  TempDir dir;
  TraceBuilder b(dir.path("t.gpuscope"));
  int64_t t = 1'000'000;
  for (int step = 0; step < 14; ++step) {
    if (step == 1) b.mark(std::string(kHooksRemovedMark), t - 100);
    if (step == 7) b.mark(std::string(kApplyAsWrittenMark), t - 100);
    if (step == 10) b.mark(std::string(kApplyCheckDoneMark), t - 100);
    const bool written = step >= 7 && step < 10;
    b.nvtx("Net (forward)", t, t + 40'000);
    b.kernel(written ? "sgemm_fp32_kernel" : "k", t + 2'000, t + 9'000);
    const int64_t bytes = (written ? 300 : 100) * int64_t{1} << 20;  // the fp32 activations of the calls as written
    b.row(schema::AllocatorEventRow{1, 0, t + 1'000, schema::AllocatorAction::kAlloc, 0x10000000, bytes, 7});
    b.row(schema::AllocatorEventRow{1, 0, t + 30'000, schema::AllocatorAction::kFreeCompleted, 0x10000000, bytes, 7});
    t += 100'000;
  }
  ASSERT_TRUE(b.finish());
  const TraceData trace = loadForTest(dir.path("t.gpuscope"));
  const Iterations it = findIterations(trace);
  ASSERT_EQ(it.list.size(), 14u);
  EXPECT_FALSE(it.list[6].as_written);
  EXPECT_TRUE(it.list[7].as_written && it.list[9].as_written);
  EXPECT_FALSE(it.list[10].as_written);
  for (const Interval& w : steadySteps(it).annotated.windows) {
    EXPECT_TRUE(w.start < it.as_written.start || w.start >= it.as_written.end) << w.start;
  }
  const MemoryAnalysis m = analyzeMemory(trace, it);
  EXPECT_EQ(m.peakDevice()->peak_bytes, int64_t{100} << 20);
}

// A short program under `apply --record` (12 steps, as samples/pytorch/advisor_cases.py runs): its check's calls
// as written launch many kernels where the compiled calls around them launch few. Its own "step" ranges are still
// its iterations (they were taken for irregular, and a kernel pattern spanning the calls as written timed the
// step), and no step is timed on the calls as written.
TEST(Iterations, AShortRunsStepsUnderApplyLeaveTheCallsAsWrittenOut) {
  TempDir dir;
  TraceBuilder b(dir.path("t.gpuscope"));
  int64_t t = 1'000'000;
  for (int step = 0; step < 12; ++step) {
    if (step == 1) b.mark(std::string(kHooksRemovedMark), t - 100);
    if (step == 7) b.mark(std::string(kApplyAsWrittenMark), t - 100);
    if (step == 10) b.mark(std::string(kApplyCheckDoneMark), t - 100);
    const bool written = step >= 7 && step < 10;
    b.nvtx("step", t, t + 90'000);
    const int kernels = written ? 30 : 3;
    for (int k = 0; k < kernels; ++k) b.kernel("k", t + 1'000 + k * 2'500, t + 3'000 + k * 2'500);
    t += written ? 150'000 : 100'000;
  }
  ASSERT_TRUE(b.finish());
  const Iterations it = iterationsOf(dir.path("t.gpuscope"));
  ASSERT_EQ(it.source, IterationSource::kNvtx);
  EXPECT_EQ(it.marker, "step");
  const std::vector<bool> timed = timedIterations(it);
  for (size_t i = 0; i < timed.size(); ++i) EXPECT_FALSE(timed[i] && it.list[i].as_written) << i;
  EXPECT_EQ(stepNs(it), 100'000);
}

// Steps of inputs of changing lengths launch other kernels (other grids) from one step to the next: no one step is
// typical, and the step is their mean period, as a clock over many steps measures it; steps that repeat keep the
// median, which a rare long step (a checkpoint saved) does not move.
TEST(Iterations, StepsThatDoNotRepeatAreTimedByTheirMean) {
  for (const bool varying : {true, false}) {
    TempDir dir;
    TraceBuilder b(dir.path("t.gpuscope"));
    int64_t t = 1'000'000;
    const int64_t lengths[] = {100, 120, 140, 300};  // µs: the period of a step of each length
    for (int step = 0; step < 16; ++step) {
      const int length = step % 4;
      const std::string kernel = varying ? "encode_len" + std::to_string(length) : "encode";
      b.nvtx("step", t, t + 80'000);
      for (int k = 0; k < 3; ++k) b.kernel(kernel, t + 1'000 + k * 20'000, t + 15'000 + k * 20'000);
      t += (varying ? lengths[length] : (step == 9 ? 300 : 100)) * 1'000;
    }
    ASSERT_TRUE(b.finish());
    const Iterations it = iterationsOf(dir.path("t.gpuscope"));
    ASSERT_EQ(it.source, IterationSource::kNvtx);
    EXPECT_EQ(it.repeating, !varying);
    const std::vector<int64_t> periods = steadySteps(it).timed.periods;
    ASSERT_GE(periods.size(), 8u);
    int64_t sum = 0;
    for (int64_t p : periods) sum += p;
    EXPECT_EQ(stepNs(it), varying ? sum / static_cast<int64_t>(periods.size()) : 100'000) << varying;
  }
}

// torch.compile's first steps run other kernels (compiling, autotuning) than the steady ones: the step
// ranges are still the iterations.
TEST(Iterations, IrregularFirstStepsAreWarmUp) {
  TempDir dir;
  TraceBuilder b(dir.path("t.gpuscope"));
  int64_t t = 1'000'000;
  for (int step = 0; step < 9; ++step) {
    b.nvtx("step", t, t + 150'000);
    const int kernels = step == 0 ? 40 : step == 1 ? 25 : 5;
    for (int k = 0; k < kernels; ++k) b.kernel("k", t + 1'000 + k * 3'000, t + 2'000 + k * 3'000);
    t += 200'000;
  }
  ASSERT_TRUE(b.finish());
  const Iterations it = iterationsOf(dir.path("t.gpuscope"));
  EXPECT_EQ(it.marker, "step");
  EXPECT_EQ(it.list.size(), 9u);
}

TEST(Iterations, OuterStepWinsOverInnerPhasesAndIrregularRangesAreSkipped) {
  TempDir dir;
  TraceBuilder b(dir.path("t.gpuscope"));
  int64_t t = 1'000'000;
  for (int step = 0; step < 4; ++step) {
    b.nvtx("step", t, t + 100'000);
    b.nvtx("forward", t, t + 40'000);
    for (int k = 0; k < 3; ++k) b.kernel("fwd", t + 2'000 + k * 10'000, t + 9'000 + k * 10'000);
    for (int k = 0; k < 3; ++k) b.kernel("bwd", t + 50'000 + k * 10'000, t + 57'000 + k * 10'000);
    t += 200'000;
  }
  // A range around irregular amounts of work (data loading): 1, 5 and 2 kernels.
  for (int n : {1, 5, 2}) {
    b.nvtx("load", t, t + 100'000);
    for (int k = 0; k < n; ++k) b.kernel("load", t + 2'000 + k * 10'000, t + 3'000 + k * 10'000);
    t += 200'000;
  }
  ASSERT_TRUE(b.finish());
  const Iterations it = iterationsOf(dir.path("t.gpuscope"));
  EXPECT_EQ(it.source, IterationSource::kNvtx);
  EXPECT_EQ(it.marker, "step");
  ASSERT_EQ(it.list.size(), 4u);
  EXPECT_EQ(it.list[0].kernels, 6);
  EXPECT_EQ(it.list[0].kernel_time_ns, 6 * 7'000);
}

// A step's "forward" range and the module ranges inside it are one forward span, not three: the phase's
// work per step is then counted once. Backward module ranges that overlap without nesting merge too.
TEST(Phases, NestedAndOverlappingRangesOfOnePhaseMerge) {
  TempDir dir;
  TraceBuilder b(dir.path("t.gpuscope"));
  b.nvtx("forward", 1'000, 10'000).nvtx("Net (forward)", 1'500, 9'000).nvtx("Net.fc1 (forward)", 2'000, 4'000);
  b.nvtx("Net.fc2 (backward)", 11'000, 15'000, 2).nvtx("Net.fc1 (backward)", 14'000, 18'000, 2);
  b.nvtx("optimizer", 19'000, 20'000).nvtx("forward", 21'000, 30'000);
  b.kernel("add_kernel(float*)", 2'000, 3'000);
  ASSERT_TRUE(b.finish());
  const TraceData trace = loadForTest(dir.path("t.gpuscope"));
  const std::vector<PhaseRange> r = phaseRanges(trace, 0);
  ASSERT_EQ(r.size(), 4u);
  EXPECT_EQ(r[0].phase, Phase::kForward);
  EXPECT_EQ(r[0].end, 10'000);
  EXPECT_EQ(r[1].phase, Phase::kBackward);
  EXPECT_EQ(r[1].start, 11'000);
  EXPECT_EQ(r[1].end, 18'000);
  EXPECT_EQ(r[2].phase, Phase::kOptimizer);
  EXPECT_EQ(r[3].start, 21'000);
}

}  // namespace
}  // namespace gpuscope::analysis
