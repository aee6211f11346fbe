// The PyTorch bridge's steps timed with the recording paused (formats/bridge_marks.h), on built traces: the steps
// left out of every figure, and what recording cost the process read from them.
#include "analyzer/paused_steps.h"

#include <gtest/gtest.h>

#include <string>

#include "analyzer/iterations.h"
#include "analyzer/phases.h"
#include "analyzer/timeline_analysis.h"
#include "formats/bridge_marks.h"
#include "tests/analyzer/load_for_test.h"
#include "tests/support/sample_trace.h"
#include "tests/support/trace_builder.h"

namespace gpuscope::analysis {
namespace {

using testing::TempDir;

using Recording = testing::PausedRecording;

// testing::buildPausedRecording's trace, as the collector records it.
TraceData recorded(const TempDir& dir, const Recording& r) {
  TraceData trace = loadForTest(testing::buildPausedRecording(dir.dir(), r));
  trace.sessions[0].cupti_version = 130000;  // recorded by the collector, whose cost is in its timings
  return trace;
}

// The paused steps are in no step figure: neither timed nor steady, nor the step after them (the switch back).
TEST(PausedSteps, ThePausedStepsAreLeftOutOfTheStep) {
  TempDir dir;
  const TraceData trace = recorded(dir, {});
  const Iterations it = findIterations(trace);
  ASSERT_EQ(it.list.size(), 18u);
  EXPECT_GT(it.paused.length(), 0);
  for (int i = 0; i < 18; ++i) EXPECT_EQ(it.list[i].unrecorded, i >= 6 && i < 10) << i;
  const std::vector<bool> timed = timedIterations(it);
  for (size_t i = 6; i <= 10 && i < timed.size(); ++i) EXPECT_FALSE(timed[i]) << i;
  EXPECT_TRUE(timed[12]);
  EXPECT_EQ(it.steady_duration.median, 100'000);  // the recorded steps' own length, not the paused ones'
}

// A host-bound loop (the GPU busy 28 % of a recorded step): the paused steps ran 40 µs a step faster, 10 µs a launch
// over the step's 4 launches, which the launch analyses take off in place of the machine's smaller figure.
TEST(PausedSteps, AHostBoundLoopsCostIsTheDifferenceOfItsSteps) {
  TempDir dir;
  TraceData trace = recorded(dir, {});
  const std::optional<PausedStepsCost> cost = pausedStepsCost(trace, 0);
  ASSERT_TRUE(cost);
  EXPECT_EQ(cost->steps, 4);
  EXPECT_FALSE(cost->drifted);
  EXPECT_EQ(cost->recorded_step_ns, 100'000);
  EXPECT_EQ(cost->paused_step_ns, 60'000);
  EXPECT_EQ(cost->per_step_ns, 40'000);
  EXPECT_EQ(cost->per_launch_ns, 10'000);
  trace.data_quality.push_back({std::nullopt, schema::Severity::kInfo, "recording_cost_per_launch", 2'000, "", {}});
  EXPECT_EQ(recordingCostPerLaunch(trace, 0), 10'000);
}

// A window of recorded steps that held an evaluation starts again, and the bridge marks its start again: the
// launches are counted from the last mark before the pause (steps 4 and 5: 8 launches), not the first.
TEST(PausedSteps, TheRecordedStepsAreThoseFromTheLastTimedMark) {
  TempDir dir;
  const TraceData trace = recorded(dir, {.timed_again_at = 4});
  const std::optional<PausedSteps> steps = pausedSteps(trace, 0);
  ASSERT_TRUE(steps);
  EXPECT_EQ(steps->recorded.start, 1'400'000 - 100);
  const std::optional<PausedStepsCost> cost = pausedStepsCost(trace, 0);
  ASSERT_TRUE(cost);
  EXPECT_EQ(cost->per_launch_ns, 40'000 * 4 / 8);
}

// A GPU-bound loop: both figures are the GPU's pace and say next to nothing of the host's cost, so the machine's
// larger figure stands.
TEST(PausedSteps, AGpuBoundLoopKeepsTheMachinesFigure) {
  TempDir dir;
  TraceData trace = recorded(dir, {.kernels_per_step = 4, .kernel_ns = 24'000, .paused_step_ns = 99'000});
  const std::optional<PausedStepsCost> cost = pausedStepsCost(trace, 0);
  ASSERT_TRUE(cost);
  EXPECT_EQ(cost->per_launch_ns, 250);
  trace.data_quality.push_back({std::nullopt, schema::Severity::kInfo, "recording_cost_per_launch", 2'000, "", {}});
  EXPECT_EQ(recordingCostPerLaunch(trace, 0), 2'000);
}

// A program whose pace changed meanwhile (the recorded steps after the pause 30 % shorter than before): the paused
// steps' difference is not recording's, and no cost is read from it.
TEST(PausedSteps, AProgramWhosePaceDriftedGivesNoCost) {
  TempDir dir;
  TraceData trace = recorded(dir, {.after_step_ns = 70'000});
  const std::optional<PausedStepsCost> cost = pausedStepsCost(trace, 0);
  ASSERT_TRUE(cost);
  EXPECT_TRUE(cost->drifted);
  EXPECT_EQ(cost->per_step_ns, 0);
  EXPECT_EQ(recordingCostPerLaunch(trace, 0), kRecordingCostPerLaunchNs);
}

// No figure to trust: a collector that recorded through the pause (its API calls inside it), or a program that ended
// paused (no figures in any resume mark).
TEST(PausedSteps, NoCostWhereThePauseDidNotTakeOrHasNoFigures) {
  TempDir a, b;
  EXPECT_FALSE(pausedStepsCost(recorded(a, {.collector_paused = false}), 0));
  const TraceData ended = recorded(b, {.resumed = false});
  const std::optional<PausedSteps> steps = pausedSteps(ended, 0);
  ASSERT_TRUE(steps);
  EXPECT_EQ(steps->steps, 0);
  EXPECT_FALSE(pausedStepsCost(ended, 0));
  EXPECT_EQ(recordingCostPerLaunch(ended, 0), kRecordingCostPerLaunchNs);
}

}  // namespace
}  // namespace gpuscope::analysis
