#include "collector/capture_gate.h"

#include <gtest/gtest.h>

#include <string>

#include "formats/bridge_marks.h"

namespace gpuscope::collector {
namespace {

constexpr int64_t kMain = 1, kLoader = 2;

TEST(CaptureGate, NothingAskedIsNoGateAndAlwaysOpen) {
  CaptureGate gate("", 0, 0);
  EXPECT_FALSE(gate.configured());
  EXPECT_TRUE(gate.open());
  EXPECT_FALSE(gate.push(kMain, "step"));
  EXPECT_FALSE(gate.tick(1'800'000'000'000'000'000));  // the collector ticks it at start: it stays open
  EXPECT_TRUE(gate.open());
}

// The program's own pause (the PyTorch bridge's marks) holds recording off whatever the ranges say; only its two
// marks count.
TEST(CaptureGate, TheProgramsPauseMarksHoldRecordingOff) {
  CaptureGate gate("", 0, 0);
  EXPECT_FALSE(gate.mark("gpuscope: module hooks removed"));
  EXPECT_FALSE(gate.mark(marks::kRecordedStepsTimed));
  EXPECT_FALSE(gate.paused());
  EXPECT_TRUE(gate.mark(marks::kRecordingPaused));
  EXPECT_TRUE(gate.paused());
  EXPECT_TRUE(gate.open());                          // the gate's own ranges and window are another matter
  EXPECT_FALSE(gate.mark(marks::kRecordingPaused));  // paused already
  EXPECT_FALSE(gate.mark(std::string(marks::kRecordingCostTimed) + " (5 steps: 1 ns recorded before, 1 ns paused, "
                                                                   "1 ns recorded after)"));
  EXPECT_TRUE(gate.paused());
  EXPECT_TRUE(gate.mark(marks::kRecordingResumed));
  EXPECT_FALSE(gate.paused());
  EXPECT_FALSE(gate.mark(marks::kRecordingResumed));
  EXPECT_TRUE(gate.mark(marks::kRecordingPaused));
  EXPECT_EQ(gate.timesPaused(), 2);
}

// The range opens the gate on its push and closes it on its own pop, not on the pop of a range inside it.
TEST(CaptureGate, NamedRangeOpensAtItsPushAndClosesAtItsOwnPop) {
  CaptureGate gate("train", 0, 0);
  EXPECT_TRUE(gate.watchesNvtx());
  EXPECT_FALSE(gate.open());
  EXPECT_FALSE(gate.push(kMain, "setup"));
  EXPECT_FALSE(gate.pop(kMain));
  EXPECT_TRUE(gate.push(kMain, "train"));
  EXPECT_TRUE(gate.open());
  EXPECT_FALSE(gate.push(kMain, "forward"));
  EXPECT_FALSE(gate.pop(kMain));  // forward's
  EXPECT_TRUE(gate.open());
  EXPECT_TRUE(gate.pop(kMain));  // train's
  EXPECT_FALSE(gate.open());
  EXPECT_TRUE(gate.push(kMain, "train"));
  EXPECT_EQ(gate.timesOpened(), 2);
}

// A range of that name on another thread keeps the gate open until the last one ends; a pop with no push
// seen (made before the collector watched) changes nothing.
TEST(CaptureGate, RangesOnSeveralThreadsKeepItOpenUntilTheLastEnds) {
  CaptureGate gate("train", 0, 0);
  EXPECT_FALSE(gate.pop(kLoader));
  EXPECT_TRUE(gate.push(kMain, "train"));
  EXPECT_FALSE(gate.push(kLoader, "train"));
  EXPECT_FALSE(gate.pop(kMain));
  EXPECT_TRUE(gate.open());
  EXPECT_TRUE(gate.pop(kLoader));
  EXPECT_FALSE(gate.open());
}

TEST(CaptureGate, StartedRangesEndByTheirIdOnAnyThread) {
  CaptureGate gate("epoch", 0, 0);
  EXPECT_FALSE(gate.start(7, "other"));
  EXPECT_FALSE(gate.end(7));
  EXPECT_TRUE(gate.start(8, "epoch"));
  EXPECT_FALSE(gate.end(9));
  EXPECT_TRUE(gate.open());
  EXPECT_TRUE(gate.end(8));
  EXPECT_FALSE(gate.open());
}

TEST(CaptureGate, ProfilerApiOpensBetweenStartAndStopAndIgnoresNvtx) {
  CaptureGate gate(std::string(CaptureGate::kProfilerApi), 0, 0);
  EXPECT_FALSE(gate.watchesNvtx());
  EXPECT_FALSE(gate.push(kMain, "cudaProfilerApi"));
  EXPECT_FALSE(gate.open());
  EXPECT_TRUE(gate.profilerStart());
  EXPECT_FALSE(gate.profilerStart());
  EXPECT_TRUE(gate.open());
  EXPECT_TRUE(gate.profilerStop());
  EXPECT_FALSE(gate.open());
}

// --delay and --duration: open from the window's start to its end; with a range, both must hold.
TEST(CaptureGate, WindowOpensAtItsStartAndClosesAtItsEnd) {
  CaptureGate window("", 1000, 3000);
  EXPECT_TRUE(window.configured());
  EXPECT_FALSE(window.tick(500));
  EXPECT_FALSE(window.open());
  EXPECT_TRUE(window.tick(1000));
  EXPECT_TRUE(window.open());
  EXPECT_TRUE(window.tick(3000));
  EXPECT_FALSE(window.open());

  CaptureGate both("train", 1000, 0);
  EXPECT_FALSE(both.push(kMain, "train"));  // before the window
  EXPECT_TRUE(both.tick(2000));
  EXPECT_TRUE(both.open());
  EXPECT_TRUE(both.pop(kMain));
}

}  // namespace
}  // namespace gpuscope::collector
