// The memory timeline, its peak and what is alive at it, leaks, and categories: on the samples that know
// what they allocated, and on built traces.
#include <gtest/gtest.h>

#include "analyzer/tensor_replay.h"

#include "analyzer/memory_categories.h"
#include "analyzer/memory_model.h"
#include "analyzer/memory_pools.h"
#include "analyzer/memory_timeline.h"
#include "analyzer/module_memory.h"
#include "formats/trace_import.h"
#include "tests/analyzer/load_for_test.h"
#include "tests/support/sample_trace.h"
#include "tests/support/trace_builder.h"

namespace gpuscope::analysis {
namespace {

using schema::MemoryOp;
using testing::TempDir;
using testing::TraceBuilder;

constexpr int64_t kMiB = 1 << 20;

struct Analysed {
  TraceData trace;
  Iterations iterations;
  MemoryAnalysis memory;
  MemoryCategories categories;
};

Analysed analyse(const std::string& path) {
  Analysed a{loadForTest(path), {}, {}, {}};
  a.iterations = findIterations(a.trace);
  a.memory = analyzeMemory(a.trace, a.iterations);
  a.categories = categorizeMemory(a.trace, a.iterations, a.memory);
  return a;
}

int64_t categoryPeak(const MemoryCategories& c, MemoryCategory category) {
  return c.usage[static_cast<size_t>(category)].peak_bytes;
}

TEST(Memory, TrainingSampleShowsWhatItAllocated) {
  // nvtx_training: 4 layers of 4 MiB weights plus 4 MiB input and target before the loop; 4 gradients in
  // the first backward; 8 Adam moments in the first optimizer step; 4 activations per forward, freed in
  // backward; a 4 MiB gradient buffer made and freed in each backward.
  const Analysed a = analyse(testing::fixturePath("nvtx_training.gpuscope"));
  ASSERT_TRUE(a.categories.phases_found);
  EXPECT_EQ(categoryPeak(a.categories, MemoryCategory::kParameters), 24 * kMiB + 4);  // and the 4-byte loss
  EXPECT_EQ(categoryPeak(a.categories, MemoryCategory::kGradients), 16 * kMiB);
  EXPECT_EQ(categoryPeak(a.categories, MemoryCategory::kOptimizerState), 32 * kMiB);
  EXPECT_EQ(categoryPeak(a.categories, MemoryCategory::kActivations), 16 * kMiB);
  EXPECT_EQ(categoryPeak(a.categories, MemoryCategory::kTemporaries), 4 * kMiB);
  EXPECT_EQ(categoryPeak(a.categories, MemoryCategory::kOther), 0);
  ASSERT_EQ(a.memory.devices.size(), 1u);
  const DeviceMemory& d = a.memory.devices[0];
  EXPECT_EQ(d.peak_bytes, 92 * kMiB + 4);
  EXPECT_EQ(d.end_bytes, 0);
  int64_t at_peak = 0;
  for (int32_t i : d.live_at_peak) at_peak += a.memory.allocations[i].bytes;
  EXPECT_EQ(at_peak, d.peak_bytes);
  EXPECT_FALSE(a.memory.leak.growing);
  EXPECT_EQ(a.memory.leak.basis, "iterations");
  EXPECT_EQ(creatorOf(a.trace, a.memory.allocations[d.live_at_peak[0]]).rfind("cudaMalloc", 0), 0u);
}

TEST(Memory, LeakSampleIsALeak) {
  // memory_leak: 64 steps allocate 8 MiB each and free every fourth: 48 stay until exit.
  const Analysed a = analyse(testing::fixturePath("memory_leak.gpuscope"));
  ASSERT_EQ(a.memory.devices.size(), 1u);
  EXPECT_EQ(a.memory.devices[0].peak_bytes, 48 * 8 * kMiB);
  EXPECT_EQ(a.memory.devices[0].live_at_peak.size(), 48u);
  EXPECT_TRUE(a.memory.leak.growing);
  EXPECT_GT(a.memory.leak.growth_per_sample_bytes, 8 * kMiB);
  EXPECT_FALSE(a.memory.leak.suspects.empty());
  for (int32_t i : a.memory.leak.suspects) EXPECT_EQ(a.memory.allocations[i].bytes, 8 * kMiB);
}

// Memory kept in each of only three steady steps is no evidence of a leak: the first steps of a run can each make
// something once (a library's workspace for a new stream, a CUDA graph's pool). Six steps that each keep it are.
TEST(Memory, GrowthOverTooFewStepsIsNoLeak) {
  for (const int steps : {3, 7}) {
    TempDir dir;
    testing::TraceBuilder b(dir.path("grow.gpuscope"));
    const int64_t kStep = 1'000'000;
    for (int step = 0; step < steps; ++step) {
      const int64_t t = step * kStep;
      b.nvtx("step", t, t + kStep - 10'000);
      b.kernel("void scale_kernel<float>(float*, int)", t + 100'000, t + 300'000);
      b.memory(schema::MemoryOp::kAllocation, 0x7f0000000000 + step * 64 * kMiB, 32 * kMiB, t + 50'000);
    }
    ASSERT_TRUE(b.finish());
    const Analysed a = analyse(dir.path("grow.gpuscope"));
    EXPECT_EQ(a.memory.leak.basis, "iterations") << steps;
    EXPECT_EQ(a.memory.leak.growing, steps == 7) << steps << " steps, " << a.memory.leak.samples.size() << " samples";
  }
}

// Each of 8 steps keeps 2 MiB; the last step's range runs into the program's teardown, which frees them all. The
// leak is measured at the steps' ends all the same: the teardown's drop is not a step's.
TEST(Memory, TeardownInTheLastStepDoesNotHideALeak) {
  TempDir dir;
  testing::TraceBuilder b(dir.path("leak.gpuscope"));
  const int64_t kStep = 1'000'000;
  for (int step = 0; step < 8; ++step) {
    const int64_t t = step * kStep;
    b.nvtx("step", t, t + kStep - 10'000);
    b.kernel("void scale_kernel<float>(float*, int)", t + 100'000, t + 300'000);
    b.memory(schema::MemoryOp::kAllocation, 0x7f0000000000 + step * 4 * kMiB, 2 * kMiB, t + 50'000);
  }
  for (int step = 0; step < 8; ++step) {
    b.memory(schema::MemoryOp::kRelease, 0x7f0000000000 + step * 4 * kMiB, 2 * kMiB, 7 * kStep + 500'000);
  }
  ASSERT_TRUE(b.finish());
  const Analysed a = analyse(dir.path("leak.gpuscope"));
  EXPECT_EQ(a.memory.leak.basis, "iterations");
  EXPECT_TRUE(a.memory.leak.growing);
  EXPECT_EQ(a.memory.leak.growth_per_sample_bytes, 2 * kMiB);
}

// Without steps, memory allocated in the set-up and kept to the end is no leak: a cuBLAS MLP allocates its 8 buffers
// (each filled by a kernel) before its 200 kernels of work (bench/corpus/cuda_sgemm_fp32, H200, 2026-11-28, read
// as growing by 64 MiB at each of 8 points between its first allocation and its last). The same allocations
// spread through the work are.
TEST(Memory, SetUpAllocationsWithoutStepsAreNoLeak) {
  for (const bool spread : {false, true}) {
    TempDir dir;
    testing::TraceBuilder b(dir.path("setup.gpuscope"));
    int64_t t = 0;
    for (int i = 0; i < 208; ++i, t += 100'000) {
      const bool allocates = spread ? i % 26 == 0 : i < 8;
      if (allocates) b.memory(schema::MemoryOp::kAllocation, 0x7f0000000000 + i * 128 * kMiB, 64 * kMiB, t);
      // Irregular kernels, so no iterations are found.
      b.kernel("void work_kernel<float>(float*, int)", t + 10'000, t + 20'000 + (i * 7919 % 61) * 1'000);
    }
    ASSERT_TRUE(b.finish());
    const Analysed a = analyse(dir.path("setup.gpuscope"));
    EXPECT_EQ(a.memory.leak.basis, "time") << spread;
    EXPECT_EQ(a.memory.leak.growing, spread) << spread;
  }
}

// Under `apply --record` the steps up to its check's end each allocate something once (the compile's buffers, the
// graphs' pools, the calls as written), which stays: no leak, since the steps after the check allocate nothing
// they keep (the naive loop with its plan, H200, 2026-11-28: 263 -> 328 MiB over the check's steps).
TEST(Memory, WhatTheApplyChecksStepsKeepIsNoLeak) {
  TempDir dir;
  testing::TraceBuilder b(dir.path("applied.gpuscope"));
  const int64_t kStep = 1'000'000;
  for (int step = 0; step < 13; ++step) {
    const int64_t t = step * kStep;
    if (step == 1) b.mark(std::string(kHooksRemovedMark), t - 100);
    if (step == 7) b.mark(std::string(kApplyAsWrittenMark), t - 100);
    if (step == 10) b.mark(std::string(kApplyCheckDoneMark), t - 100);
    b.nvtx("step", t, t + kStep - 10'000);
    b.kernel("void scale_kernel<float>(float*, int)", t + 100'000, t + 300'000);
    if (step < 10) b.memory(schema::MemoryOp::kAllocation, 0x7f0000000000 + step * 64 * kMiB, 32 * kMiB, t + 50'000);
  }
  ASSERT_TRUE(b.finish());
  const Analysed a = analyse(dir.path("applied.gpuscope"));
  ASSERT_TRUE(a.iterations.applied);
  EXPECT_EQ(a.memory.leak.basis, "iterations");
  EXPECT_FALSE(a.memory.leak.growing);
}

TEST(Memory, PyTorchCachingAllocatorGrowsInWarmupOnly) {
  const Analysed a = analyse(testing::fixturePath("pytorch_gpt2_step.gpuscope"));
  EXPECT_GT(a.memory.devices[0].peak_bytes, 1LL << 30);
  EXPECT_FALSE(a.memory.leak.growing);  // segments are cached after the warm-up step
}

// record --torch (pytorch_bridge_train.gpuscope): memory is measured by tensors, parameters and optimizer
// state are what the bridge saw, steps run from one forward of the model to the next, and every tensor
// has the module that made it.
TEST(Memory, TorchBridgeTracesAreMeasuredByTensors) {
  const Analysed a = analyse(testing::fixturePath("pytorch_bridge_train.gpuscope"));
  EXPECT_EQ(a.iterations.marker, "GPT2LMHeadModel (forward) to the next");
  EXPECT_EQ(a.iterations.list.size(), 6u);
  ASSERT_EQ(a.memory.devices.size(), 1u);
  const DeviceMemory& d = a.memory.devices[0];
  EXPECT_EQ(std::count_if(a.memory.allocations.begin(), a.memory.allocations.end(),
                          [](const Allocation& x) { return x.tensor; }),
            1233);
  // CUDA's segments hold the tensors: their peak is at least the tensors' (330.3 MiB was printed by record).
  EXPECT_GE(d.cuda_peak_bytes, d.peak_bytes);
  EXPECT_NEAR(static_cast<double>(d.cuda_peak_bytes) / kMiB, 330.3, 0.1);
  EXPECT_TRUE(a.categories.roles_found);
  auto usage = [&](MemoryCategory c) { return a.categories.usage[static_cast<size_t>(c)]; };
  // 28 parameters of 14,839,808 bytes and Adam's two moments of each, exactly as the bridge saw them.
  EXPECT_EQ(usage(MemoryCategory::kParameters).allocations, 28);
  EXPECT_EQ(usage(MemoryCategory::kParameters).peak_bytes, 14839808);
  EXPECT_EQ(usage(MemoryCategory::kOptimizerState).allocations, 56);
  EXPECT_EQ(usage(MemoryCategory::kOptimizerState).peak_bytes, 2 * 14839808);
  EXPECT_GE(usage(MemoryCategory::kGradients).allocations, 168);  // 28 a step, 6 steps
  EXPECT_GT(usage(MemoryCategory::kActivations).at_device_peak_bytes, 0);
  const std::vector<ModuleMemory> modules = memoryByModule(a.trace, a.memory, a.categories);
  ASSERT_FALSE(modules.empty());
  const auto act = std::find_if(modules.begin(), modules.end(), [](const ModuleMemory& m) {
    return m.module == "GPT2LMHeadModel.transformer.h.1.mlp.act" && m.phase == Phase::kForward;
  });
  ASSERT_NE(act, modules.end());
  EXPECT_EQ(act->allocations, 48);  // 8 tensors a step
  EXPECT_GT(act->activations_at_peak_bytes, 0);
  EXPECT_TRUE(std::is_sorted(modules.begin(), modules.end(), [](const ModuleMemory& x, const ModuleMemory& y) {
    return x.at_peak_bytes > y.at_peak_bytes;
  }));
  const Allocation& first_live = a.memory.allocations[static_cast<size_t>(d.live_at_peak.front())];
  EXPECT_EQ(creatorOf(a.trace, first_live).rfind("a block the allocator handed out", 0), 0u)
      << creatorOf(a.trace, first_live);
}

// Replaying the recorded tensors: with no change the replay is the recorded peak exactly; checkpointing the
// two GPT2Blocks and bf16 activations each lower it; a trace without tensors has nothing to replay.
TEST(Memory, ReplayedWhatIfsOfTheTensors) {
  EXPECT_EQ(blockOf("ResNet.layer1.0.downsample.1"), "ResNet.layer1.0");
  EXPECT_EQ(blockOf("GPT2LMHeadModel.transformer.h.11"), "GPT2LMHeadModel.transformer.h.11");
  EXPECT_EQ(blockOf("Net.fc1"), "");
  const Analysed a = analyse(testing::fixturePath("pytorch_bridge_train.gpuscope"));
  const int64_t peak = a.memory.peakDevice()->peak_bytes;
  const std::optional<TensorReplay> same = replayTensors(a.trace, a.memory, a.categories, {});
  ASSERT_TRUE(same);
  EXPECT_EQ(same->peak_bytes, peak);
  EXPECT_EQ(same->blocks, 0);
  const std::optional<TensorReplay> checkpointed =
      replayTensors(a.trace, a.memory, a.categories, {.checkpoint_blocks = true});
  ASSERT_TRUE(checkpointed);
  EXPECT_EQ(checkpointed->blocks, 2);  // transformer.h.0 and h.1
  EXPECT_LT(checkpointed->peak_bytes, peak);
  const auto half = replayTensors(a.trace, a.memory, a.categories, {.activation_scale = 0.5});
  EXPECT_LT(half->peak_bytes, peak);
  const auto fused = replayTensors(a.trace, a.memory, a.categories, {.drop_temporaries = true});
  EXPECT_LE(fused->peak_bytes, peak);
  const Analysed plain = analyse(testing::fixturePath("launch_bound.gpuscope"));
  const auto none = replayTensors(plain.trace, plain.memory, plain.categories, {.checkpoint_blocks = true});
  EXPECT_TRUE(!none || none->blocks == 0);
}

// A compiler keeps on chip only what lives inside a run of fusable kernels: a tensor an elementwise kernel
// writes and only elementwise kernels touch goes; one that lives across a GEMM (its reader) is written out.
TEST(Memory, FusedTemporariesAreThoseThatNeverMeetAGemm) {
  TempDir dir;
  TraceBuilder b(dir.path("t.gpuscope"));
  b.nvtx("forward", 0, 100'000);
  b.kernel("void at::native::vectorized_elementwise_kernel<4, add>(int, float*)", 12'000, 13'000, 7, 10'000);
  b.kernel("void at::native::vectorized_elementwise_kernel<4, mul>(int, float*)", 22'000, 23'000, 7, 20'000);
  b.kernel("sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64", 32'000, 40'000, 7, 30'000);
  b.kernel("void at::native::vectorized_elementwise_kernel<4, relu>(int, float*)", 42'000, 43'000, 7, 41'000);
  auto tensor = [&](int64_t address, int64_t bytes, int64_t alloc_ns, int64_t free_ns) {
    b.row(schema::AllocatorEventRow{1, 0, alloc_ns, schema::AllocatorAction::kAlloc, address, bytes, 7});
    b.row(schema::AllocatorEventRow{1, 0, free_ns, schema::AllocatorAction::kFreeCompleted, address, bytes, 7});
  };
  tensor(0x10000000, 64 * kMiB, 9'000, 21'000);   // written by add, read by mul: fused away
  tensor(0x20000000, 32 * kMiB, 19'000, 31'000);  // written by mul, read by the GEMM: stays
  ASSERT_TRUE(b.finish());
  const Analysed a = analyse(dir.path("t.gpuscope"));
  ASSERT_EQ(a.memory.peakDevice()->peak_bytes, 96 * kMiB);
  const auto fused = replayTensors(a.trace, a.memory, a.categories, {.drop_temporaries = true});
  ASSERT_TRUE(fused);
  EXPECT_EQ(fused->peak_bytes, 32 * kMiB);
}

// An imported snapshot has tensors and no CUDA records: its peak is the tensors', and what the allocator
// held comes from its own segment events.
TEST(Memory, ImportedSnapshotsAreMeasuredByTensors) {
  TempDir dir;
  ASSERT_TRUE(importTrace(testing::fixturePath("pytorch_memory_snapshot.json"), dir.path("t.gpuscope"), false));
  const Analysed a = analyse(dir.path("t.gpuscope"));
  ASSERT_EQ(a.memory.devices.size(), 1u);
  EXPECT_GT(a.memory.devices[0].peak_bytes, 0);
  EXPECT_GE(a.memory.devices[0].cuda_peak_bytes, a.memory.devices[0].peak_bytes);
  EXPECT_FALSE(a.categories.roles_found);
}

TEST(Memory, FreesOfUnknownMemoryAndReusedAddresses) {
  TempDir dir;
  TraceBuilder b(dir.path("t.gpuscope"));
  b.memory(MemoryOp::kRelease, 0x1000, 0, 100);  // allocated before recording
  b.memory(MemoryOp::kAllocation, 0x2000, 10 * kMiB, 200);
  b.memory(MemoryOp::kAllocation, 0x2000, 3 * kMiB, 300);  // its free was not recorded
  b.memory(MemoryOp::kAllocation, 0x9000, 1 * kMiB, 400);
  b.memory(MemoryOp::kRelease, 0x9000, 0, 500);
  ASSERT_TRUE(b.finish());
  const Analysed a = analyse(dir.path("t.gpuscope"));
  EXPECT_EQ(a.memory.unmatched_frees, 1);
  ASSERT_EQ(a.memory.allocations.size(), 3u);
  EXPECT_EQ(a.memory.allocations[0].free_ns, 300);
  const DeviceMemory& d = a.memory.devices[0];
  EXPECT_EQ(d.peak_bytes, 10 * kMiB);
  EXPECT_EQ(d.peak_ns, 200);
  EXPECT_EQ(d.end_bytes, 3 * kMiB);
  ASSERT_EQ(d.timeline.size(), 5u);  // +10, -10, +3, +1, -1
  EXPECT_EQ(d.timeline[3].live_bytes, 4 * kMiB);
  // No loop and no phases: what stays from the start counts as parameters.
  EXPECT_FALSE(a.categories.phases_found);
}

TEST(MemoryPools, FragmentedPoolShowsWhatItPrinted) {
  // samples/memory_pool prints the pool's own figures (samples/memory_pool/README.md).
  const std::vector<PoolUsage> pools = analyzePools(loadForTest(testing::fixturePath("memory_pool.gpuscope")));
  ASSERT_EQ(pools.size(), 1u);
  const PoolUsage& p = pools[0];
  EXPECT_EQ(p.allocations, 40);
  EXPECT_EQ(p.peak_used_bytes, 128 * kMiB);  // 32 × 4 MiB, and again after 8 × 8 MiB replaced half of them
  EXPECT_EQ(p.peak_reserved_bytes, 192 * kMiB);
  EXPECT_EQ(p.worst.reserved_bytes, 128 * kMiB);
  EXPECT_EQ(p.worst.used_bytes, 64 * kMiB);
  EXPECT_EQ(p.slackBytes(), 64 * kMiB);
  // After everything is freed the pool keeps 192 MiB (release threshold: keep all), then trims to 0.
  ASSERT_GE(p.samples.size(), 3u);
  EXPECT_EQ(p.samples.back().reserved_bytes, 0);
}

TEST(MemoryPools, NoPoolsWithoutStreamOrderedAllocation) {
  EXPECT_TRUE(analyzePools(loadForTest(testing::fixturePath("memory_leak.gpuscope"))).empty());
}

TEST(Memory, NoAllocationsNoAnswersNoCrash) {
  TempDir dir;
  ASSERT_TRUE(testing::writeEmptyTrace(dir.path("e.gpuscope")));
  const Analysed a = analyse(dir.path("e.gpuscope"));
  EXPECT_TRUE(a.memory.allocations.empty());
  EXPECT_EQ(a.memory.devices[0].peak_bytes, 0);
  EXPECT_FALSE(a.memory.leak.growing);
}

}  // namespace
}  // namespace gpuscope::analysis

namespace gpuscope::analysis {
namespace {

TEST(MemoryModel, FittedToTheTrainingSampleAndItsWhatIfs) {
  const Analysed a = analyse(testing::fixturePath("nvtx_training.gpuscope"));
  const MemoryModel m = fitMemoryModel(a.memory, a.categories, a.iterations);
  EXPECT_EQ(m.measured_peak_bytes, 92 * kMiB + 4);
  EXPECT_EQ(m.terms.total(), m.measured_peak_bytes);    // fitted at the peak: the terms add up to it
  EXPECT_EQ(m.parameter_count, 4 * kMiB);               // four layers of 1 Mi fp32 weights
  EXPECT_DOUBLE_EQ(m.optimizer_states_per_param, 2.0);  // Adam: two moments
  EXPECT_EQ(m.layers, 4);
  auto predicted = [&](const std::string& prefix) {
    for (const WhatIf& w : m.what_ifs) {
      if (w.change.rfind(prefix, 0) == 0) return w.predicted_peak_bytes;
    }
    ADD_FAILURE() << "no what-if " << prefix;
    return int64_t{-1};
  };
  EXPECT_EQ(predicted("bf16 activations"), m.measured_peak_bytes - 8 * kMiB);
  EXPECT_EQ(predicted("8-bit optimizer"), m.measured_peak_bytes - 24 * kMiB);
  EXPECT_EQ(predicted("optimizer state sharded over 8"), m.measured_peak_bytes - 28 * kMiB);
  EXPECT_EQ(predicted("batch size x2"), m.measured_peak_bytes + 16 * kMiB);
  EXPECT_EQ(predicted("batch size /2"), m.measured_peak_bytes - 8 * kMiB);
  // Four layers in two segments keep two boundaries and recompute one half: no saving at this depth.
  EXPECT_EQ(predicted("activation checkpointing in 2"), m.measured_peak_bytes);
  for (const WhatIf& w : m.what_ifs) EXPECT_FALSE(w.basis.empty()) << w.change;
}

}  // namespace
}  // namespace gpuscope::analysis
