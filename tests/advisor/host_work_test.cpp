// The host's side of the step prediction on real H100 traces: the host's own work per step, measured from the
// trace, and a predicted step never shorter than what the host still has to do after the fixes.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <optional>

#include "advisor/advice.h"
#include "advisor/host_work.h"
#include "analyzer/phases.h"
#include "analyzer/trace_data.h"
#include "tests/support/sample_trace.h"
#include "tests/support/trace_builder.h"

namespace gpuscope::advisor {
namespace {

using testing::TempDir;

struct Traced {
  analysis::TraceData trace;
  std::optional<Context> context;
};

// The context refers to its trace, so both live together.
std::unique_ptr<Traced> contextOf(const std::string& fixture) {
  Result<analysis::TraceData> trace = analysis::loadTrace(testing::fixturePath(fixture));
  EXPECT_TRUE(trace) << fixture;
  auto t = std::make_unique<Traced>();
  if (!trace) return t;
  t->trace = std::move(*trace);
  t->context.emplace(buildContext(t->trace));
  return t;
}

// References computed straight from the fixture's tables with Python's sqlite3 (tests/fixtures/README.md):
// over its 11 steady 'step' ranges, each range less the synchronize calls and synchronous copies inside it, and
// less what launch calls queued 1 ms or more behind the GPU took beyond twice the median launch call (5.415 µs);
// then, since gpuscope's collector recorded it, less the collector's cost for each kernel launched.
TEST(HostWork, MeasuredFromTheStepAndPhaseRanges) {
  const auto t = contextOf("pytorch_loop_naive_rerun.gpuscope");
  ASSERT_TRUE(t->context);
  const HostWork& h = t->context->host;
  ASSERT_TRUE(h.measured);
  constexpr int64_t kPerLaunch = analysis::kRecordingCostPerLaunchNs;
  EXPECT_EQ(h.recording_ns, kPerLaunch * t->context->perTimedStep(t->context->timeline.kernels));
  EXPECT_NEAR(static_cast<double>(h.step_ns + h.recording_ns), 16.409e6, 0.01 * 16.409e6);
  EXPECT_NEAR(static_cast<double>(h.model_ns + kPerLaunch * 259), 4.902e6 + 6.283e6, 0.01 * 11.185e6);
  EXPECT_NEAR(static_cast<double>(h.optimizer_ns), 5.256e6, 0.01 * 5.256e6);
  EXPECT_NEAR(static_cast<double>(h.between_ns), 10.737e6, 0.01 * 10.737e6);  // loading the next batch
  EXPECT_EQ(h.model_launches, 259);  // kernels whose launch call starts inside the forward and backward ranges
  // The 4 blocks' outermost "Gpt.blocks.N (forward)" ranges: 3.715 ms and 72 kernels per step.
  EXPECT_NEAR(static_cast<double>(h.blocks_forward_ns + kPerLaunch * 72), 3.715e6, 0.01 * 3.715e6);
  EXPECT_EQ(h.blocks_forward_launches, 72);
  EXPECT_EQ(h.forward_fp32_gemms, 25);  // 4 blocks × 4 Linear + 2 attention GEMMs, and the head
}

// The same program's second loop run (tests/gpu/torch_loop.sh, docs/benchmarks.md): inside its steps the GPU
// kept up with the host, so the launch-bound idle stayed under the rule's threshold and the plan had no CUDA
// graphs. Applied, it measured 12.52 ms per step, host-bound: the GPU's work fell to about 3 ms. The host's
// forecast predicts that step, and the launch-bound rule now sees it coming.
TEST(HostWork, PredictsTheHostBoundStepAfterTheFixes) {
  const auto t = contextOf("pytorch_loop_naive_rerun.gpuscope");
  ASSERT_TRUE(t->context);
  const Advice a = advise(*t->context, Goal::kBoth);  // that run applied checkpointing too
  EXPECT_FALSE(a.find("launch_bound"));               // not launch-bound today: the look-ahead has its own id
  const Finding* ahead = a.find("host_bound_after_fixes");
  ASSERT_TRUE(ahead);
  EXPECT_TRUE(ahead->gain.host_side);
  EXPECT_NE(ahead->title.find("the host sets the pace"), std::string::npos) << ahead->title;
  EXPECT_EQ(ahead->fix.plan.at(0).kind, "cuda_graphs");
  EXPECT_NE(ahead->gain.basis.find("host's own work"), std::string::npos) << ahead->gain.basis;
  // What that run applied: every fix but the graphs (not advised then) and attention (needs the code changed).
  std::vector<const Finding*> applied;
  for (const Finding& f : a.findings) {
    if (f.id != "host_bound_after_fixes" && f.id != "unfused_attention") applied.push_back(&f);
  }
  const double predicted = static_cast<double>(predictOutcome(*t->context, applied).step_time_ns);
  EXPECT_NEAR(predicted, 12.52e6, 0.15 * 12.52e6);
  // With the graphs the plan now carries, the host's forward and backward shrink to the compiled calls.
  EXPECT_LT(static_cast<double>(makePlan(a).predicted.step_time_ns), 0.7 * predicted);
}

// GPU-bound steps: the host's work stays below the GPU's after the fixes, so nothing is foreseen.
TEST(HostWork, GpuBoundStepsForeseeNothing) {
  for (const char* fixture : {"pytorch_gpt2_step.gpuscope", "pytorch_resnet_step.gpuscope"}) {
    const auto t = contextOf(fixture);
    ASSERT_TRUE(t->context);
    EXPECT_TRUE(t->context->host.measured) << fixture;
    for (const Finding& f : advise(*t->context).findings) EXPECT_FALSE(f.gain.host_side) << fixture << ": " << f.title;
  }
}

// Where the measured launch-bound rule fired, it stays the measured one (its gain is GPU idle time).
TEST(HostWork, MeasuredLaunchBoundIsNotReplaced) {
  const auto t = contextOf("pytorch_loop_naive.gpuscope");
  ASSERT_TRUE(t->context);
  const Advice a = advise(*t->context);
  int launch_bound = 0;
  for (const Finding& f : a.findings) {
    if (f.id != "launch_bound") continue;
    ++launch_bound;
    EXPECT_FALSE(f.gain.host_side);
    EXPECT_EQ(f.gain.idle_ns, f.gain.time_ns);
  }
  EXPECT_EQ(launch_bound, 1);
}

// The real 2-rank DDP GPT-2 job (tests/fixtures/multirank/README.md): its model's 76 parameter tensors, which the
// bridge named. Under CUDA graphs a DistributedDataParallel model's calls keep work per parameter tensor, so the
// host's forward and backward come to the two compiled calls plus 0.12 ms for each; unwrapped, the calls alone.
// Compiled without graphs, its host work stays what it was eager.
TEST(HostWork, DdpModelsKeepWorkPerParameterUnderGraphs) {
  Result<analysis::TraceData> trace = analysis::loadTrace(GPUSCOPE_MULTIRANK_TRACE);
  ASSERT_TRUE(trace);
  Context c = buildContext(*trace);
  ASSERT_TRUE(c.host.measured);
  EXPECT_EQ(c.host.ddp_parameters, 76);
  const HostChanges graphs{.graphs = true, .compiled = true};
  const int64_t wrapped = hostStepAfter(c, graphs);
  const int64_t kept = kCompiledCallsPerStep * kCompiledCallHostNs + 76 * kDdpCompiledHostPerParameterNs;
  EXPECT_EQ(wrapped, c.host.step_ns - c.host.model_ns + kept + c.host.between_ns);  // the rest as it was
  // Compiled without graphs, fusion's fewer launches leave a DDP model's host work as it was.
  const HostChanges fused{.launches_removed = c.host.model_launches / 2, .compiled = true};
  EXPECT_EQ(hostStepAfter(c, fused), hostStepAfter(c, HostChanges{}));
  c.host.ddp_parameters = 0;  // as for a model no DDP wraps
  EXPECT_EQ(wrapped - hostStepAfter(c, graphs), 76 * kDdpCompiledHostPerParameterNs);
  EXPECT_LT(hostStepAfter(c, fused), hostStepAfter(c, HostChanges{}));
}

// Compiled, each launch left costs the host at least what Inductor's wrapper takes to issue a kernel: a model whose
// eager launches took 10 us each of host time is no quicker per launch compiled (a transformers Llama: 18 us eager,
// 33 us compiled under autocast, H200). Eager, fusion's fewer launches still scale the eager time.
TEST(HostWork, CompiledLaunchesCostTheHostNoLessThanInductorsWrapper) {
  const auto t = contextOf("pytorch_loop_naive_rerun.gpuscope");
  ASSERT_TRUE(t->context);
  Context& c = *t->context;
  ASSERT_GT(c.host.model_launches, 200);
  EXPECT_FALSE(c.host.half_precision);  // an fp32 model
  c.host.model_ns = c.host.model_launches * 10'000;
  const int64_t left = c.host.model_launches - 100;
  const int64_t others = hostStepAfter(c, HostChanges{}) - c.host.model_ns;
  const HostChanges fused{.launches_removed = 100};
  EXPECT_EQ(hostStepAfter(c, fused), others + left * 10'000);
  HostChanges compiled = fused;
  compiled.compiled = true;
  EXPECT_EQ(hostStepAfter(c, compiled), others + left * kCompiledLaunchHostNs);
  c.host.half_precision = true;  // the program's own autocast
  EXPECT_EQ(hostStepAfter(c, compiled), others + left * kCompiledHalfLaunchHostNs);
  // Where the eager launches cost more than that, their time per launch stays.
  c.host.model_ns = c.host.model_launches * 50'000;
  c.host.step_ns += c.host.model_launches * 40'000;
  EXPECT_EQ(hostStepAfter(c, compiled), others + left * 50'000);
}

// The same job as analysed on rank 0, which waits 12.6 ms a step in its all-reduces for rank 1: 2.2 ms of that for
// rank 1's own code, the rest for its host, a step behind over the same CUDA calls. CUDA graphs on both ranks
// shorten both hosts' work, and rank 0's wait for rank 1's pace with it: the forecast takes more off the step than
// the graphs' idle time and rank 1's own code. With no fix, only the wait for rank 1's own code comes off.
TEST(HostWork, AWaitForAnotherRanksPaceShrinksWithTheHostsWork) {
  Result<analysis::TraceData> trace = analysis::loadTrace(GPUSCOPE_MULTIRANK_TRACE);
  ASSERT_TRUE(trace);
  const Context c = buildContext(*trace);
  const analysis::RankStep* self = c.ownRank();
  ASSERT_TRUE(self);
  EXPECT_GT(self->wait_ns, 12'000'000);
  int64_t own_code = 0;  // rank 1's own code beyond rank 0's
  for (const analysis::RankStep& r : c.job.ranks) own_code = std::max(own_code, r.away_ns - self->away_ns);
  EXPECT_GT(own_code, 2'000'000);
  EXPECT_LT(own_code, self->comm_alone_ns);
  const Advice a = advise(c);
  const Finding* launch_bound = a.find("launch_bound");
  ASSERT_TRUE(launch_bound);
  EXPECT_GE(predictOutcome(c, {}).step_time_ns, c.step.time_ns - own_code);  // no fix: only the wait for it goes
  const int64_t graphs = predictOutcome(c, {launch_bound}).step_time_ns;
  EXPECT_LT(graphs, c.step.time_ns - launch_bound->gain.idle_ns - own_code - 1'000'000);
  EXPECT_GT(graphs, hostStepAfter(c, HostChanges{.graphs = true, .compiled = true}));
}

// A CuPy program whose five 64 MiB NumPy channels go to the GPU with cp.asarray (bench/corpus/cupy_pageable_h2d):
// CuPy copies each into a pinned staging buffer on the host before its pinned copy, so the host's own work fills
// the step. That staging is pageable_copies' (arrays made pinned take it away), not the input pipeline's, and its
// idle comes off the host's work in the forecast.
TEST(HostWork, CuPysStagingComesOffTheHostsWorkWithPinnedArrays) {
  Result<analysis::TraceData> trace = analysis::loadTrace(
      (std::filesystem::path(GPUSCOPE_CORPUS_TRACES) / "cupy_pageable_h2d.program.gpuscope").string());
  ASSERT_TRUE(trace);
  const Context c = buildContext(*trace);
  ASSERT_TRUE(c.host.measured);
  EXPECT_EQ(c.host.loading_ns, 0);
  EXPECT_GT(c.host.away_ns, c.host.step_ns / 2);
  const Advice a = advise(c);
  EXPECT_FALSE(a.find("input_pipeline"));
  const Finding* staged = a.find("pageable_copies");
  ASSERT_TRUE(staged);
  EXPECT_NE(staged->title.find("CuPy stages its host arrays"), std::string::npos) << staged->title;
  // The channels follow each other with no gap between them: all of the gain is the staging inside the step.
  EXPECT_EQ(c.host.between_ns, 0);
  const HostChanges pinned{.input_wait_removed_ns = staged->gain.idle_ns};
  EXPECT_EQ(hostStepAfter(c, HostChanges{}) - hostStepAfter(c, pinned), staged->gain.idle_ns);
  EXPECT_LT(hostStepAfter(c, pinned), c.host.step_ns / 2);
}

// A camera pipeline's GPU stage that pins its two staging buffers for every frame (bench/corpus/
// cuda_pinned_staging_per_frame, H200, 2026-11-30; 22.8 ms a frame recorded, the twin that pins them once 6.6): the
// pinning calls are most of the host's work, and pinning once takes them off it. A CUDA graph, which replays
// kernels and copies, leaves them: the forecast had read the frame host-bound after the fixes, and CUDA graphs the
// cure, with 19.0 ms of host work left, where 5.1 ms of copying frames on the host is what stays.
TEST(HostWork, PinningOnceTakesThePinningCallsOffTheHostsWork) {
  Result<analysis::TraceData> trace = analysis::loadTrace(
      (std::filesystem::path(GPUSCOPE_CORPUS_TRACES) / "cuda_pinned_staging_per_frame.program.gpuscope").string());
  ASSERT_TRUE(trace);
  const Context c = buildContext(*trace);
  ASSERT_TRUE(c.host.measured);
  EXPECT_GT(c.host.pinning_ns, c.host.step_ns / 2);
  const Advice a = advise(c);
  ASSERT_TRUE(a.find("pinned_allocation"));
  EXPECT_FALSE(a.find("host_bound_after_fixes"));
  const int64_t today = hostStepAfter(c, HostChanges{});
  EXPECT_EQ(today - hostStepAfter(c, HostChanges{.pin_once = true}), c.host.pinning_ns);
  EXPECT_GE(hostStepAfter(c, HostChanges{.graphs = true}), c.host.pinning_ns);
  EXPECT_LT(hostStepAfter(c, HostChanges{.graphs = true, .pin_once = true}), c.host.pinning_ns / 2);
}

// A torchvision training whose DataLoader runs on the main thread and hands out pageable batches
// (bench/corpus/tv_loader_main_thread, H100, 2026-11-28): the loader's workers with pin_memory, the input
// pipeline's fix, also pin the batches the step copies, so the pageable copies are in the plan through the same
// fix, which the plan holds once. Under apply the step ran at 8.4 ms against 9.9 forecast (11.4 without the copies).
TEST(HostWork, TheLoadersPinnedBatchesAreInItsPlanOnce) {
  Result<analysis::TraceData> trace = analysis::loadTrace(
      (std::filesystem::path(GPUSCOPE_CORPUS_TRACES) / "tv_loader_main_thread.program.gpuscope").string());
  ASSERT_TRUE(trace);
  const Context c = buildContext(*trace);
  const Advice a = advise(c);
  const Finding* copies = a.find("pageable_copies");
  ASSERT_TRUE(copies);
  EXPECT_EQ(copies->plan_status, "in the plan");
  ASSERT_EQ(copies->fix.plan.size(), 1u);
  EXPECT_EQ(copies->fix.plan[0].kind, "data_loader");
  const plan::Plan p = makePlan(a);
  EXPECT_EQ(std::count_if(p.fixes.begin(), p.fixes.end(), [](const plan::Fix& f) { return f.kind == "data_loader"; }),
            1);
  std::vector<const Finding*> without;
  for (const Finding& f : a.findings) {
    if (f.plan_status == "in the plan" && f.id != "pageable_copies") without.push_back(&f);
  }
  EXPECT_LT(a.plan_predicted.step_time_ns, predictOutcome(c, without).step_time_ns);
}

// The corpus's late-rank job (bench/corpus/ddp_gpt2_late_rank): rank 1 sleeps 20 ms a step, and rank 0, analysed,
// waits for it in its collectives. A plan of the compiler's fixes without CUDA graphs goes to both ranks and
// leaves the sleep: on 2 × H100 it ran at 48.3 ms against 46.8 ms as written (docs/multi-rank.md). Rank 0's
// forecast keeps the job at its step, not at rank 0's own 35 ms of GPU work.
TEST(HostWork, AnotherRanksOwnWorkStaysInTheJobsForecast) {
  Result<analysis::TraceData> trace = analysis::loadTrace(
      (std::filesystem::path(GPUSCOPE_CORPUS_TRACES) / "ddp_gpt2_late_rank.program.gpuscope").string());
  ASSERT_TRUE(trace);
  const Context c = buildContext(*trace);
  ASSERT_EQ(c.job.ranks.size(), 2u);
  EXPECT_EQ(c.job.ranks[0].session, c.session);
  EXPECT_GT(c.job.ranks[1].away_ns - c.job.ranks[0].away_ns, 18'000'000);
  const Advice a = advise(c);
  std::vector<const Finding*> compiled;
  for (const Finding& f : a.findings) {
    if (f.id == "fusable_chains" || f.id == "gemm_alignment") compiled.push_back(&f);
  }
  ASSERT_FALSE(compiled.empty());
  EXPECT_GT(static_cast<double>(predictOutcome(c, compiled).step_time_ns), 0.95 * static_cast<double>(c.step.time_ns));
}

// Without steps there is no per-step host work to forecast; JAX steps are compiled already, so the look-ahead
// (CUDA graphs) is not advised there.
TEST(HostWork, NeedsStepsAndLeavesJaxAlone) {
  const auto none = contextOf("launch_bound.gpuscope");  // no iterations: one run
  ASSERT_TRUE(none->context);
  EXPECT_FALSE(none->context->host.measured);
  const auto jax = contextOf("program_jax_mlp.gpuscope");
  ASSERT_TRUE(jax->context);
  EXPECT_TRUE(jax->context->host.measured);
  for (const auto* t : {none.get(), jax.get()}) {
    for (const Finding& f : advise(*t->context).findings) EXPECT_FALSE(f.gain.host_side) << f.title;
  }
}

// record --torch with --torch-steps: five annotated steps (module ranges, slowed by the bridge's hooks to a
// 300 µs period), the mark where the hooks went, then seven hook-free steps (200 µs) with the root's forward
// range and the optimizer step's only. Timings come from the hook-free steps but the first (the switch happened
// in it); the phases' host work from the annotated ones, less what the hooks cost.
TEST(HostWork, HookFreeStepsGiveTheTimingsAndAnnotatedOnesThePhases) {
  TempDir dir;
  testing::TraceBuilder b(dir.path("t.gpuscope"));
  int64_t t = 1'000'000;
  for (int step = 0; step < 12; ++step) {
    const bool annotated = step < 5;
    if (step == 5) b.mark(std::string(analysis::kHooksRemovedMark), t - 100);
    b.nvtx("Net (forward)", t, t + (annotated ? 120'000 : 80'000));
    if (annotated) b.nvtx("Net.fc (forward)", t + 1'000, t + 110'000);
    for (int k = 0; k < 3; ++k) b.kernel("fwd", t + 10'000 + k * 30'000, t + 15'000 + k * 30'000);
    const int64_t backward = annotated ? 130'000 : 90'000;
    if (annotated) b.nvtx("Net (backward)", t + backward, t + backward + 100'000, 2);
    for (int k = 0; k < 3; ++k) b.kernel("bwd", t + backward + 10'000 + k * 20'000, t + backward + 15'000 + k * 20'000);
    const int64_t optimizer = annotated ? 240'000 : 160'000;
    b.nvtx("optimizer.step (SGD)", t + optimizer, t + optimizer + 30'000);
    b.kernel("sgd", t + optimizer + 10'000, t + optimizer + 15'000);
    t += annotated ? 300'000 : 200'000;
  }
  ASSERT_TRUE(b.finish());
  Result<analysis::TraceData> trace = analysis::loadTrace(dir.path("t.gpuscope"));
  ASSERT_TRUE(trace);
  const Context c = buildContext(*trace);
  ASSERT_EQ(c.iterations.list.size(), 12u);
  EXPECT_FALSE(c.iterations.list[4].hook_free);
  EXPECT_TRUE(c.iterations.list[5].hook_free);
  EXPECT_EQ(c.iterations.steady_duration.median, 200'000);  // the program's own speed, for stats and diff
  EXPECT_EQ(c.step.time_ns, 200'000);
  EXPECT_EQ(c.step.count, 5);        // module attribution: the annotated steps
  EXPECT_EQ(c.step.timed_count, 6);  // timings: steps 6 to 11
  EXPECT_EQ(c.timeline.kernels, 6 * 7);
  EXPECT_NE(c.step.basis.find("removed its module hooks"), std::string::npos) << c.step.basis;
  ASSERT_TRUE(c.host.measured);
  // Five 200 µs steps, and the last, which ends with its optimizer step 190 µs after its start.
  EXPECT_EQ(c.host.step_ns, (5 * 200'000 + 190'000) / 6);
  // Annotated: 120 µs of forward and 100 µs of backward in a 300 µs step; the hooks cost what the root's forward
  // takes more there than in the hook-free steps (80 µs).
  EXPECT_EQ(c.host.model_ns, 220'000 - (120'000 - 80'000));
  EXPECT_EQ(c.host.optimizer_ns, 30'000);
  EXPECT_EQ(c.host.model_launches, 6);
}

// A model the script compiled: the bridge removes its hooks at the model's first call, before any step, so no step
// has module ranges. The step's basis says so, rather than counting the hook-free steps as annotated ones
// (bench/corpus/ddp_compiled_distilbert said "module attribution from 39 annotated steps before", 2026-11-30).
TEST(HostWork, ACompiledModelsStepsSayNoneHasModuleRanges) {
  TempDir dir;
  testing::TraceBuilder b(dir.path("t.gpuscope"));
  int64_t t = 1'000'000;
  b.mark(std::string(analysis::kHooksRemovedMark), t - 100);
  for (int step = 0; step < 10; ++step) {
    b.nvtx("OptimizedModule (forward)", t, t + 80'000);
    for (int k = 0; k < 3; ++k) b.kernel("fwd", t + 10'000 + k * 30'000, t + 15'000 + k * 30'000);
    b.nvtx("optimizer.step (AdamW)", t + 160'000, t + 190'000);
    b.kernel("adamw", t + 170'000, t + 175'000);
    t += 200'000;
  }
  ASSERT_TRUE(b.finish());
  Result<analysis::TraceData> trace = analysis::loadTrace(dir.path("t.gpuscope"));
  ASSERT_TRUE(trace);
  const Context c = buildContext(*trace);
  EXPECT_EQ(c.step.time_ns, 200'000);
  EXPECT_EQ(c.step.basis.find("annotated steps before"), std::string::npos) << c.step.basis;
  EXPECT_NE(c.step.basis.find("no steady step has module ranges"), std::string::npos) << c.step.basis;
}

}  // namespace
}  // namespace gpuscope::advisor
