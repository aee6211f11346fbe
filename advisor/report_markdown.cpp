// The advice as Markdown, to paste into an issue or a pull request.
#include "advisor/report.h"
#include "analyzer/units.h"

namespace gpuscope::advisor {

namespace {

// Text inside a table cell or a heading: pipes would end the cell, newlines the row.
std::string cell(std::string text) {
  std::string out;
  for (char c : text) out += c == '|' ? std::string("\\|") : c == '\n' ? std::string(" ") : std::string(1, c);
  return out;
}

void appendFinding(std::string& out, const Finding& f, size_t n, bool per_step) {
  out += "\n## " + std::to_string(n) + ". " + cell(f.title) + " (" + std::string(toString(f.severity)) + ")\n\n";
  out += f.summary + "\n\n**Seen**\n\n";
  for (const Evidence& e : f.evidence) out += "- " + cell(e.text) + "\n";
  out += "\n**Why it costs.** " + f.why + "\n\n";
  out += "**Gain.** " + gainText(f, per_step) + ". *Estimate:* " + f.gain.basis + ".\n\n";
  out += "**Fix.** " + f.fix.summary + "\n\n";
  if (!f.fix.snippet.empty()) out += "```" + f.fix.snippet_language + "\n" + f.fix.snippet + "\n```\n\n";
  out += "**Check.** " + f.verify + "\n";
}

}  // namespace

std::string renderMarkdown(const Advice& a) {
  std::string out = "# gpuscope advice: `" + a.trace + "`\n\n| | |\n|---|---|\n";
  if (const std::string failed = failureText(a); !failed.empty()) out += "| **Failed** | " + cell(failed) + " |\n";
  if (!a.device.empty()) out += "| Program | " + a.framework + " on " + cell(a.device) + " |\n";
  if (const std::string job = jobText(a); !job.empty()) out += "| Job | " + cell(job) + " |\n";
  out += "| Step | " + stepText(a) + " — " + cell(a.step_basis) + " |\n";
  if (a.measured.peak_memory_bytes > 0) {
    out += "| Peak memory | " + analysis::formatBytes(a.measured.peak_memory_bytes) + " (" + a.memory_basis + ") |\n";
  }
  if (!a.findings.empty() && a.run_failed.empty()) {
    out += "| Predicted with every fix | " + predictionText(a) + " — " + cell(a.prediction_basis) + " |\n";
    out += "| Plan (`--goal " + std::string(toString(a.goal)) + "`) | " + cell(planText(a)) + " |\n";
  }
  out += "\n| # | Severity | Finding | Gain |\n|---|---|---|---|\n";
  for (size_t i = 0; i < a.findings.size(); ++i) {
    const Finding& f = a.findings[i];
    out += "| " + std::to_string(i + 1) + " | " + std::string(toString(f.severity)) + " | " + cell(f.title) + " | " +
           cell(gainText(f, a.per_step)) + " |\n";
  }
  if (a.findings.empty()) out += "\nNo findings: no rule found a problem worth fixing in this trace.\n";
  for (size_t i = 0; i < a.findings.size(); ++i) appendFinding(out, a.findings[i], i + 1, a.per_step);
  if (!a.notes.empty()) {
    out += "\n## Notes\n\n";
    for (const std::string& n : a.notes) out += "- " + cell(n) + "\n";
  }
  return out;
}

}  // namespace gpuscope::advisor
