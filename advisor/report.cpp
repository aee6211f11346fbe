#include "advisor/report.h"

#include "analyzer/units.h"

namespace gpuscope::advisor {

using analysis::formatBytes;
using analysis::formatDuration;
using analysis::formatFixed;
using analysis::formatShare;

bool parseReportFormat(std::string_view text, ReportFormat& out) {
  if (text == "text") return out = ReportFormat::kText, true;
  if (text == "md" || text == "markdown") return out = ReportFormat::kMarkdown, true;
  if (text == "html") return out = ReportFormat::kHtml, true;
  if (text == "json") return out = ReportFormat::kJson, true;
  return false;
}

std::string gainText(const Finding& finding, bool per_step) {
  const Gain& g = finding.gain;
  std::string text;
  if (g.time_ns > 0) {
    text = formatDuration(g.time_ns) + (per_step ? " per step (" : " in the run (") + formatShare(g.share_of_step) +
           " of the " + (per_step ? "step)" : "run)");
  }
  if (g.memory_bytes > 0) {
    text += (text.empty() ? "" : ", and ") + formatBytes(g.memory_bytes) + " of peak memory (" +
            formatShare(g.share_of_peak) + ")";
  }
  if (g.extra_time_ns > 0) {
    text += ", at the cost of " + formatDuration(g.extra_time_ns) + (per_step ? " more per step" : " more");
  }
  return text.empty() ? "not estimated" : text;
}

std::string stepText(const Advice& a) {
  return formatDuration(a.measured.step_time_ns) + (a.per_step ? " per iteration" : " for the whole run");
}

std::string jobText(const Advice& a) {
  const analysis::JobView& job = a.job;
  if (job.ranks.empty()) return "";
  std::string text = std::to_string(job.ranks.size()) + " ranks " + analysis::hostsText(job);
  const auto rankWord = [&](size_t r) { return "rank " + std::to_string(job.ranks[r].rank); };
  text += "; the job's step is " + rankWord(job.slowest) + "'s, the slowest: " + formatDuration(job.step_ns);
  size_t fastest = 0;
  for (size_t r = 0; r < job.ranks.size(); ++r) {
    if (job.ranks[r].step_ns < job.ranks[fastest].step_ns) fastest = r;
  }
  if (job.ranks.size() == 2 || fastest != job.slowest) {
    const size_t other = job.ranks.size() == 2 ? 1 - job.slowest : fastest;
    text += " (" + std::string(job.ranks.size() == 2 ? "" : "fastest ") + rankWord(other) + ": " +
            formatDuration(job.ranks[other].step_ns) + ")";
  }
  if (!job.unmatched.empty()) return text + "; collectives not compared: " + job.unmatched;
  text += "; " + std::to_string(job.collectives) + " collectives matched across the ranks, ending within " +
          formatDuration(job.clock_residual_ns) + " of each other";
  return text + (job.oneHost() ? " (one clock)" : " after aligning the ranks' clocks on them");
}

std::string outcomeText(const Advice& a, const plan::Outcome& p) {
  const auto& m = a.measured;
  std::string text = formatDuration(p.step_time_ns) + (a.per_step ? " per iteration" : " for the run");
  if (p.step_time_ns > 0 && p.step_time_ns < m.step_time_ns) {
    text +=
        " (" + formatFixed(static_cast<double>(m.step_time_ns) / static_cast<double>(p.step_time_ns), 1) + "× faster)";
  } else if (m.step_time_ns > 0 && p.step_time_ns > m.step_time_ns) {  // said, lest it be read as a gain
    text += " (" + formatFixed(static_cast<double>(p.step_time_ns) / static_cast<double>(m.step_time_ns), 1) +
            "× slower than the measured " + formatDuration(m.step_time_ns) + ")";
  }
  if (m.peak_memory_bytes > 0) {
    text += ", peak memory " + formatBytes(p.peak_memory_bytes);
    if (p.peak_memory_bytes < m.peak_memory_bytes) text += " (from " + formatBytes(m.peak_memory_bytes) + ")";
  }
  return text;
}

std::string predictionText(const Advice& a) { return outcomeText(a, a.predicted); }

std::string failureText(const Advice& a) {
  if (a.run_failed.empty()) return "";
  return a.run_failed +
         ": the figures below are those of a run that failed, so no prediction or plan is made from "
         "it; record the program again once it runs to its end";
}

std::string planText(const Advice& a) {
  const std::string goal(toString(a.goal));
  if (a.plan_fixes == 0) {
    return "no fix that gpuscope apply makes serves the " + goal + " plan (each finding says why)";
  }
  return outcomeText(a, a.plan_predicted) + " with the " + std::to_string(a.plan_fixes) + " fix" +
         (a.plan_fixes == 1 ? "" : "es") + " of the " + goal + " plan, which gpuscope apply makes";
}

}  // namespace gpuscope::advisor
