// Steps a recorded PyTorch program ran with the recording paused (formats/bridge_marks.h): the bridge times some
// recorded steps and as many paused ones in the program's own process, so that what recording costs that process
// is measured, not taken from another process (gpuscope-calibrate's launch loop, run after the program).
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "analyzer/intervals.h"
#include "analyzer/trace_data.h"

namespace gpuscope::analysis {

struct PausedSteps {
  Interval recorded;  // host time: the recorded steps timed (kRecordedStepsTimed to kRecordingPaused)
  Interval paused;    // kRecordingPaused to kRecordingResumed, or to the end of the process's recording
  int32_t steps = 0;  // timed each time; 0 where the bridge wrote no figures (the process ended before)
  int64_t recorded_before_ns = 0, paused_ns = 0, recorded_after_ns = 0;  // host time of those steps, each time
};
// The recorded steps before and after the pause must agree this closely (the longer over the shorter) for the pause
// to measure recording's cost: a program whose own pace changed meanwhile says nothing of it (tv_loader_main_thread's
// steps fell from 48-58 ms to 31-34 during a pause on an H200, and stayed there recorded after it).
inline constexpr double kRecordedStepsAgree = 1.2;

// One process's (index into trace.sessions) paused steps; none where it never paused.
std::optional<PausedSteps> pausedSteps(const TraceData& trace, int32_t session);
// Every process's, by index into trace.sessions, in one pass over the NVTX rows.
std::vector<std::optional<PausedSteps>> pausedStepsOfEach(const TraceData& trace);

// What recording cost a process at least, from its paused steps: where the host set the steps' pace, the
// difference of the two figures, less what CUPTI keeps costing with its records off; where the GPU did, both are its
// pace and differ by nothing. Only where the pause took (no API call recorded inside it), both figures are there and
// its recorded steps launched kernels. Where the recorded steps before and after it did not agree, drifted is set
// and the cost is 0.
struct PausedStepsCost {
  int64_t per_step_ns = 0;    // the recorded steps' mean less the paused ones' (none when the paused ran longer)
  bool drifted = false;       // the recorded steps before and after did not agree (kRecordedStepsAgree): no cost
  int64_t per_launch_ns = 0;  // per_step_ns over the kernels a recorded step launched
  int64_t recorded_step_ns = 0, paused_step_ns = 0;
  int32_t steps = 0;
};
std::optional<PausedStepsCost> pausedStepsCost(const TraceData& trace, int32_t session);

}  // namespace gpuscope::analysis
