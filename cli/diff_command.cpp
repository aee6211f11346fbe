// gpuscope diff BEFORE AFTER: what changed between two runs (a change and its effect).
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "analyzer/trace_diff.h"
#include "cli/command.h"
#include "cli/report_table.h"

namespace gpuscope::cli {

namespace {

using analysis::Change;
using analysis::KernelChange;

constexpr int64_t kDiffJsonVersion = 1;

Report changesReport(const std::string& name, const std::string& title, const std::vector<KernelChange>& rows,
                     size_t limit) {
  Report r{name,
           title,
           {{"before_ns", "Before", Unit::kNanoseconds},
            {"after_ns", "After", Unit::kNanoseconds},
            {"change_ns", "Change", Unit::kNanoseconds},
            {"change", "Change", Unit::kText},
            {"launches_before", "Launches before", Unit::kCount},
            {"launches_after", "Launches after", Unit::kCount},
            {"name", "Name", Unit::kText}},
           {}};
  for (const KernelChange& k : rows) {
    if (limit && r.rows.size() >= limit) break;
    r.rows.push_back({k.time_ns.before, k.time_ns.after, k.time_ns.delta(), analysis::percentText(k.time_ns),
                      k.count.before, k.count.after, k.name});
  }
  return r;
}

// Each rank of two runs of a job, side by side; no rows unless both are jobs.
Report ranksReport(const analysis::TraceDiff& d) {
  Report r{"ranks",
           "Ranks (per step, start to next start; the job's step is its slowest rank's)",
           {{"rank", "Rank", Unit::kCount},
            {"step_before_ns", "Step before", Unit::kNanoseconds},
            {"step_after_ns", "Step after", Unit::kNanoseconds},
            {"step_change", "Change", Unit::kText},
            {"compute_before_ns", "Compute before", Unit::kNanoseconds},
            {"compute_after_ns", "Compute after", Unit::kNanoseconds},
            {"comm_alone_before_ns", "Comm alone before", Unit::kNanoseconds},
            {"comm_alone_after_ns", "Comm alone after", Unit::kNanoseconds},
            {"idle_before_ns", "Idle before", Unit::kNanoseconds},
            {"idle_after_ns", "Idle after", Unit::kNanoseconds},
            {"host_before_ns", "Host work before", Unit::kNanoseconds},
            {"host_after_ns", "Host work after", Unit::kNanoseconds}},
           {}};
  for (const analysis::RankChange& x : d.ranks) {
    r.rows.push_back({x.rank, x.step_ns.before, x.step_ns.after, analysis::percentText(x.step_ns), x.compute_ns.before,
                      x.compute_ns.after, x.comm_alone_ns.before, x.comm_alone_ns.after, x.idle_ns.before,
                      x.idle_ns.after, x.host_ns.before, x.host_ns.after});
  }
  return r;
}

void printLine(const char* what, const Change& c, bool bytes) {
  auto text = [&](double v) {
    return bytes ? formatBytes(static_cast<int64_t>(v)) : formatDuration(static_cast<int64_t>(v));
  };
  std::printf("  %-28s %12s -> %-12s %s\n", what, text(c.before).c_str(), text(c.after).c_str(),
              analysis::percentText(c).c_str());
}

void writeText(const analysis::TraceDiff& d, const std::string& a, const std::string& b, size_t limit) {
  std::printf("%s -> %s\n", a.c_str(), b.c_str());
  if (d.per_iteration) printLine("Step (start to start)", d.iteration_ns, false);
  if (!d.ranks.empty()) printLine("Job step (slowest rank)", d.job_step_ns, false);
  printLine("Peak device memory", d.peak_memory_bytes, true);
  printLine("GPU busy", d.gpu_busy_ns, false);
  printLine("Recorded duration", d.duration_ns, false);
  std::printf("  %-28s %12.0f -> %-12.0f %s\n\n", "Kernels", d.kernel_count.before, d.kernel_count.after,
              analysis::percentText(d.kernel_count).c_str());
  if (!d.ranks.empty()) {
    writeTable(stdout, ranksReport(d), 0);
    std::printf("\n");
  }
  const std::string scope = d.per_iteration ? "per steady iteration" : "whole runs: no iterations in both";
  writeTable(stdout, changesReport("classes", "Kernel time by class (" + scope + ")", d.classes, 0), 0);
  std::printf("\n");
  writeTable(stdout, changesReport("kernels", "Kernels that changed most (" + scope + ")", d.kernels, limit), 0);
  for (const auto* list : {&d.appeared, &d.disappeared}) {
    std::printf("\n%s (%zu):\n", list == &d.appeared ? "Appeared" : "Disappeared", list->size());
    for (size_t i = 0; i < list->size() && (limit == 0 || i < limit); ++i) std::printf("  %s\n", (*list)[i].c_str());
  }
}

void writeJson(const analysis::TraceDiff& d, const std::string& a, const std::string& b) {
  JsonWriter json(stdout);
  json.beginObject().field("gpuscope_diff_version", kDiffJsonVersion).field("before", a).field("after", b);
  json.field("per_iteration", d.per_iteration);
  auto change = [&](const char* key, const Change& c) {
    json.key(key).beginObject().field("before", c.before).field("after", c.after).endObject();
  };
  change("iteration_ns", d.iteration_ns);
  change("peak_memory_bytes", d.peak_memory_bytes);
  change("gpu_busy_ns", d.gpu_busy_ns);
  change("duration_ns", d.duration_ns);
  change("kernel_count", d.kernel_count);
  change("job_step_ns", d.job_step_ns);
  json.key("ranks");
  writeJsonRows(json, ranksReport(d));
  json.key("classes");
  writeJsonRows(json, changesReport("classes", "", d.classes, 0));
  json.key("kernels");
  writeJsonRows(json, changesReport("kernels", "", d.kernels, 0));
  for (const auto* list : {&d.appeared, &d.disappeared}) {
    json.key(list == &d.appeared ? "appeared" : "disappeared").beginArray(true);
    for (const std::string& name : *list) json.value(name);
    json.endArray();
  }
  json.endObject();
  std::fputc('\n', stdout);
  json.flush();
}

constexpr OptionSpec kOptions[] = {
    {"format", 0, "table|json", "output format (default: table)"},
    {"limit", 0, "N", "kernels listed in the table format (default: 20; 0: all)"},
};

int runDiff(const ParsedArgs& args) {
  if (args.positional.size() != 2) {
    return reportError("diff",
                       Status(ErrorKind::kUsage, "expected two traces, BEFORE and AFTER (see gpuscope diff --help)"));
  }
  const std::string format = args.get("format").value_or("table");
  if (format != "table" && format != "json") {
    return reportError("diff", Status(ErrorKind::kUsage, "unknown --format '" + format + "' (table or json)"));
  }
  Result<int64_t> limit = countOption(args, "limit", 20);
  if (!limit) return reportError("diff", limit.status());
  Result<analysis::TraceData> before = analysis::loadTrace(args.positional[0]);
  if (!before) return reportError("diff", before.status());
  Result<analysis::TraceData> after = analysis::loadTrace(args.positional[1]);
  if (!after) return reportError("diff", after.status());
  const analysis::TraceDiff diff = analysis::diffTraces(*before, *after);
  if (format == "json") {
    writeJson(diff, args.positional[0], args.positional[1]);
  } else {
    writeText(diff, args.positional[0], args.positional[1], static_cast<size_t>(*limit));
  }
  return kExitOk;
}

}  // namespace

const Command& diffCommand() {
  static const Command command{
      "diff",
      "compare two traces (before and after a change)",
      "gpuscope diff BEFORE AFTER [options]",
      "Shows what changed between two runs: steady iteration time, peak device memory, GPU busy\n"
      "time, kernel time by class and by kernel (per steady iteration when both runs have\n"
      "iterations), the kernels that appeared or disappeared, and for two runs of a job of\n"
      "several ranks, each rank's step and what fills it (compute, communication alone, idle,\n"
      "its host's own work).",
      kOptions,
      runDiff};
  return command;
}

}  // namespace gpuscope::cli
