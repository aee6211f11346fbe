// gpuscope advise: the advisor's findings for a trace, as a terminal report, Markdown, HTML or JSON, and
// optionally the fixes as plan.json.
#include <sys/ioctl.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>

#include "advisor/advice.h"
#include "advisor/report.h"
#include "advisor/rule.h"
#include "analyzer/job.h"
#include "analyzer/trace_data.h"
#include "cli/command.h"
#include "formats/atomic_file.h"

namespace gpuscope::cli {

namespace {

using advisor::ReportFormat;

constexpr OptionSpec kOptions[] = {
    {"format", 0, "text|md|html|json", "report format (default: text)"},
    {"output", 'o', "FILE", "write the report to FILE instead of standard output"},
    {"plan", 0, "FILE", "also write the fixes as plan.json, for `gpuscope apply` and the PyTorch bridge"},
    {"goal", 0, "time|memory|both",
     "what the plan is for (default: time): a faster step (no fix that costs time), a smaller peak, or both"},
    {"force", 'f', "", "overwrite the output and plan files if they exist"},
    {"fail-on", 0, "SEVERITY", "exit 3 if a finding of this severity or worse exists (info|low|medium|high)"},
    {"rank", 0, "N", "in a job of several ranks, advise on rank N's process (default: the one with the most GPU work)"},
    {"rules", 0, "", "list the rules: what each looks for, reads and fires on; then exit"},
};

// Exit status when --fail-on finds a finding at or above its severity: distinct from errors (1) and usage (2).
constexpr int kExitFindings = 3;

int terminalWidth() {
  winsize w{};
  if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &w) == 0 && w.ws_col > 0) return w.ws_col;
  if (const char* columns = std::getenv("COLUMNS")) return std::atoi(columns);
  return 100;
}

std::string render(const advisor::Advice& advice, ReportFormat format, bool to_terminal) {
  switch (format) {
    case ReportFormat::kMarkdown: return advisor::renderMarkdown(advice);
    case ReportFormat::kHtml: return advisor::renderHtml(advice);
    case ReportFormat::kJson: return advisor::renderJson(advice);
    case ReportFormat::kText: break;
  }
  const bool colour = to_terminal && isatty(STDOUT_FILENO) == 1 && !std::getenv("NO_COLOR");
  return advisor::renderText(advice, to_terminal ? terminalWidth() : 100, colour);
}

int listRules() {
  for (const advisor::Rule& r : advisor::allRules()) {
    std::printf("%.*s\n  %.*s\n  reads: %.*s\n  fires when %.*s\n", static_cast<int>(r.id.size()), r.id.data(),
                static_cast<int>(r.title.size()), r.title.data(), static_cast<int>(r.reads.size()), r.reads.data(),
                static_cast<int>(r.fires_when.size()), r.fires_when.data());
  }
  return kExitOk;
}

int runAdvise(const ParsedArgs& args) {
  if (args.has("rules")) return listRules();
  if (args.positional.size() != 1) {
    return reportError("advise", Status(ErrorKind::kUsage, "expected one trace file (see gpuscope advise --help)"));
  }
  ReportFormat format = ReportFormat::kText;
  if (!advisor::parseReportFormat(args.get("format").value_or("text"), format)) {
    return reportError(
        "advise", Status(ErrorKind::kUsage, "unknown format '" + *args.get("format") + "' (text, md, html or json)"));
  }
  advisor::Severity fail_on = advisor::Severity::kHigh;
  if (args.has("fail-on") && !advisor::parseSeverity(*args.get("fail-on"), fail_on)) {
    return reportError("advise", Status(ErrorKind::kUsage,
                                        "unknown severity '" + *args.get("fail-on") + "' (info, low, medium or high)"));
  }
  advisor::Goal goal = advisor::Goal::kTime;
  if (args.has("goal") && !advisor::parseGoal(*args.get("goal"), goal)) {
    return reportError("advise",
                       Status(ErrorKind::kUsage, "unknown goal '" + *args.get("goal") + "' (time, memory or both)"));
  }
  Result<analysis::TraceData> trace = analysis::loadTrace(args.positional[0]);
  if (!trace) return reportError("advise", trace.status());
  Result<int64_t> rank = countOption(args, "rank", -1);
  if (!rank) return reportError("advise", rank.status());
  const int32_t session = *rank >= 0 ? analysis::sessionOfRank(*trace, *rank) : analysis::kNone;
  if (*rank >= 0 && session == analysis::kNone) {
    return reportError("advise", Status(ErrorKind::kUsage, "no process of rank " + std::to_string(*rank) + " in " +
                                                               args.positional[0] +
                                                               " (its ranks: " + analysis::ranksText(*trace) + ")"));
  }
  const advisor::Context context = advisor::buildContext(*trace, session);
  const advisor::Advice advice = advisor::advise(context, goal);

  const std::optional<std::string> output = args.get("output");
  const std::string report = render(advice, format, !output);
  if (output) {
    if (Status s = writeFileAtomically(*output, report, args.has("force")); !s) return reportError("advise", s);
    std::fprintf(stderr, "gpuscope advise: wrote %s\n", output->c_str());
  } else {
    std::fwrite(report.data(), 1, report.size(), stdout);
  }
  if (const std::optional<std::string> plan_path = args.get("plan")) {
    if (Status s = plan::writePlan(advisor::makePlan(advice), *plan_path, args.has("force")); !s) {
      return reportError("advise", s);
    }
    std::fprintf(stderr, "gpuscope advise: wrote the plan to %s\n", plan_path->c_str());
  }
  if (args.has("fail-on")) {
    for (const advisor::Finding& f : advice.findings) {
      if (f.severity >= fail_on) return kExitFindings;
    }
  }
  return kExitOk;
}

}  // namespace

const Command& adviseCommand() {
  static const Command command{
      "advise",
      "find what makes the program slow or short of memory, with the fix",
      "gpuscope advise TRACE [--format F] [-o FILE] [--plan FILE] [--goal time|memory|both] [--fail-on S] [--rank N] | "
      "--rules",
      "Runs the advisor's rules over TRACE and reports each finding: what was seen (with numbers and places\n"
      "in the trace), why it costs, the estimated gain and what the estimate is based on, the fix in the\n"
      "program's own terms (PyTorch, JAX, CuPy or CUDA), and how to check it worked. Findings are ranked by\n"
      "what fixing them would win; the header predicts the step time and peak memory with every fix, and\n"
      "with the plan's: the fixes `gpuscope apply` makes that serve --goal (time: none that costs time,\n"
      "and none that leaves the plan predicted slower; memory: those that shrink the peak; both). Each\n"
      "finding says whether its fix is in the plan, left out (and why), or one to make by hand.\n"
      "docs/advisor-rules.md lists the rules and their thresholds; docs/advise-json.md the JSON.",
      kOptions,
      runAdvise};
  return command;
}

}  // namespace gpuscope::cli
