// NVTX marks a program under `gpuscope record` puts to pause the collector's recording for a few steps and resume
// it: gpuscope's PyTorch bridge does, to time steps of the program's own process without recording and measure
// what recording costs it (analysis::pausedStepsCost). One definition for the collector, which switches its
// costly record kinds off between them, and the analyzer, which reads them back.
#pragma once

#include <string_view>

namespace gpuscope::marks {

// Where the bridge began timing recorded steps, the steps it compares the paused ones with (again where a window
// held an evaluation: the last such mark before the pause counts).
inline constexpr std::string_view kRecordedStepsTimed = "gpuscope: recorded steps timed";
// Recording paused: kernels, copies, sets and API calls are no longer recorded (allocations still are, so that no
// allocation's free goes missing), NVTX ranges and marks still are.
inline constexpr std::string_view kRecordingPaused = "gpuscope: recording paused";
// Recording resumed.
inline constexpr std::string_view kRecordingResumed = "gpuscope: recording resumed";
// What the bridge measured, once it has timed as many recorded steps after the pause as before it. After this
// prefix: " (N steps: R ns recorded before, U ns paused, A ns recorded after)", the host time of N steps from the
// kRecordedStepsTimed mark, of N paused steps and of N recorded steps after it (the step of each switch left out).
inline constexpr std::string_view kRecordingCostTimed = "gpuscope: recording's cost timed";

}  // namespace gpuscope::marks
