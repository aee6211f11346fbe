#include "analyzer/paused_steps.h"

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <string>
#include <utility>

#include "formats/bridge_marks.h"

namespace gpuscope::analysis {

namespace {

// The figures of the bridge's kRecordingCostTimed mark: " (N steps: R ns recorded before, U ns paused, A ns
// recorded after)".
bool readFigures(const std::string& mark, PausedSteps& p) {
  if (!mark.starts_with(marks::kRecordingCostTimed)) return false;
  const std::string figures = mark.substr(marks::kRecordingCostTimed.size());
  int steps = 0;
  int64_t before = 0, paused = 0, after = 0;
  if (std::sscanf(figures.c_str(),
                  " (%d steps: %" SCNd64 " ns recorded before, %" SCNd64 " ns paused, %" SCNd64 " ns recorded after)",
                  &steps, &before, &paused, &after) != 4 ||
      steps <= 0 || before <= 0 || paused <= 0 || after <= 0) {
    return false;
  }
  p.steps = steps, p.recorded_before_ns = before, p.paused_ns = paused, p.recorded_after_ns = after;
  return true;
}

// Whether any of the process's API calls began inside the pause: then the collector did not pause (one that does
// not know the marks).
bool callsInside(const TraceData& t, int32_t session, const Interval& paused) {
  const ApiTable& api = t.api_calls;
  for (size_t i = 0; i < api.size(); ++i) {
    // Not the calls at the marks' own instants (the bridge's last recorded call, the first on resuming).
    if (api.session[i] == session && api.start_ns[i] > paused.start && api.start_ns[i] < paused.end) return true;
  }
  return false;
}

// The process's kernels launched in the window (by their launch call, else their start).
int64_t kernelsLaunchedIn(const TraceData& t, int32_t session, const Interval& window) {
  const KernelTable& k = t.kernels;
  int64_t launched = 0;
  for (size_t i = 0; i < k.size(); ++i) {
    const int32_t call = k.launch_call[i];
    const int64_t at = call != kNone ? t.api_calls.start_ns[static_cast<size_t>(call)] : k.start_ns[i];
    launched += k.session[i] == session && window.holds(at);
  }
  return launched;
}

// The first of each of the bridge's marks in one process (of the timed mark, the last before the pause), as its NVTX
// marks are read.
struct PauseMarks {
  int64_t timed = -1, paused = -1, resumed = -1;
  std::string figures;

  void see(const std::string& name, int64_t at) {
    // The last before the pause: the bridge starts its recorded steps again after an evaluation, and marks it.
    if (name == marks::kRecordedStepsTimed && paused < 0) timed = at;
    if (name == marks::kRecordingPaused && paused < 0) paused = at;
    // The bridge before 77db17a put its figures in the resume mark: its traces still read.
    if (name.starts_with(marks::kRecordingResumed) && paused >= 0 && resumed < 0) resumed = at;
    if (name.starts_with(marks::kRecordingCostTimed) && figures.empty()) figures = name;
  }
};

std::optional<PausedSteps> stepsOf(const TraceData& t, int32_t session, PauseMarks m) {
  if (m.paused < 0) return std::nullopt;
  if (m.resumed < 0) {  // the process ended paused
    const auto& end = t.sessions[static_cast<size_t>(session)].end_ns;
    m.resumed = end ? std::max(m.paused, *end) : m.paused;
  }
  PausedSteps p;
  p.paused = {m.paused, m.resumed};
  p.recorded = {m.timed >= 0 && m.timed < m.paused ? m.timed : m.paused, m.paused};
  if (!readFigures(m.figures, p)) p.steps = 0;
  return p;
}

}  // namespace

std::optional<PausedSteps> pausedSteps(const TraceData& t, int32_t session) {
  if (session < 0 || static_cast<size_t>(session) >= t.sessions.size()) return std::nullopt;
  return pausedStepsOfEach(t)[static_cast<size_t>(session)];
}

std::vector<std::optional<PausedSteps>> pausedStepsOfEach(const TraceData& t) {
  std::vector<PauseMarks> m(t.sessions.size());
  for (size_t r = 0; r < t.nvtx.size(); ++r) {
    const auto s = static_cast<size_t>(t.nvtx.session[r]);
    if (s < m.size() && t.nvtx.kind[r] == schema::NvtxKind::kMark) m[s].see(t.text(t.nvtx.name[r]), t.nvtx.start_ns[r]);
  }
  std::vector<std::optional<PausedSteps>> out;
  for (size_t s = 0; s < m.size(); ++s) out.push_back(stepsOf(t, static_cast<int32_t>(s), std::move(m[s])));
  return out;
}

std::optional<PausedStepsCost> pausedStepsCost(const TraceData& t, int32_t session) {
  if (session < 0 || static_cast<size_t>(session) >= t.sessions.size()) return std::nullopt;
  const std::optional<PausedSteps> p = pausedSteps(t, session);
  if (!p || p->steps == 0 || p->recorded.length() <= 0 || callsInside(t, session, p->paused)) return std::nullopt;
  const int64_t launched = kernelsLaunchedIn(t, session, p->recorded);
  if (launched == 0) return std::nullopt;
  PausedStepsCost c;
  c.steps = p->steps;
  c.recorded_step_ns = (p->recorded_before_ns + p->recorded_after_ns) / 2 / p->steps;
  c.paused_step_ns = p->paused_ns / p->steps;
  const auto [shorter, longer] = std::minmax(p->recorded_before_ns, p->recorded_after_ns);
  c.drifted = static_cast<double>(longer) > kRecordedStepsAgree * static_cast<double>(shorter);
  c.per_step_ns = c.drifted ? 0 : std::max<int64_t>(0, c.recorded_step_ns - c.paused_step_ns);
  c.per_launch_ns = c.per_step_ns * p->steps / launched;
  return c;
}

}  // namespace gpuscope::analysis
