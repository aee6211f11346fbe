// The terminal report: a header with the step and the prediction, then each finding — what was seen, why it
// costs, the gain and its basis, the fix with its code, how to check — wrapped to the terminal's width.
#include <algorithm>

#include "advisor/report.h"
#include "analyzer/units.h"

namespace gpuscope::advisor {

namespace {

// Words of `text` in lines of at most `width` columns, each after `indent`; the first line's indent is the
// caller's. Counts bytes, which is close enough for the mostly-ASCII text the rules write.
std::string wrap(const std::string& text, size_t width, const std::string& indent) {
  std::string out, line;
  size_t start = 0;
  while (start <= text.size()) {
    size_t end = text.find(' ', start);
    if (end == std::string::npos) end = text.size();
    const std::string word = text.substr(start, end - start);
    if (!line.empty() && indent.size() + line.size() + 1 + word.size() > width) {
      out += line + "\n" + indent;
      line.clear();
    }
    line += (line.empty() ? "" : " ") + word;
    start = end + 1;
  }
  return out + line;
}

struct Style {
  bool on = false;
  std::string bold(const std::string& s) const { return on ? "\033[1m" + s + "\033[0m" : s; }
  std::string dim(const std::string& s) const { return on ? "\033[2m" + s + "\033[0m" : s; }
  std::string severity(Severity sev) const {
    const std::string tag = "[" + std::string(toString(sev)) + "]";
    if (!on) return tag;
    const char* colour = sev == Severity::kHigh ? "\033[1;31m" : sev == Severity::kMedium ? "\033[1;33m" : "\033[36m";
    return colour + tag + "\033[0m";
  }
};

void appendField(std::string& out, const Style& style, const char* label, const std::string& text, size_t width) {
  const std::string indent(10, ' ');
  out += "   " + style.bold(label) + std::string(7 - std::string_view(label).size(), ' ') + wrap(text, width, indent) +
         "\n";
}

void appendSnippet(std::string& out, const Style& style, const std::string& snippet) {
  size_t start = 0;
  while (start < snippet.size()) {
    size_t end = snippet.find('\n', start);
    if (end == std::string::npos) end = snippet.size();
    out += "            " + style.dim(snippet.substr(start, end - start)) + "\n";
    start = end + 1;
  }
}

void appendFinding(std::string& out, const Style& style, const Finding& f, size_t n, bool per_step, size_t width) {
  out += "\n" + std::to_string(n) + ". " + style.severity(f.severity) + " " + style.bold(wrap(f.title, width, "   ")) +
         "\n";
  appendField(out, style, "What", f.summary, width);
  for (const Evidence& e : f.evidence) appendField(out, style, "Seen", e.text, width);
  appendField(out, style, "Why", f.why, width);
  appendField(out, style, "Gain", gainText(f, per_step) + "; estimate: " + f.gain.basis, width);
  appendField(out, style, "Fix", f.fix.summary + (f.plan_status.empty() ? "" : " [" + f.plan_status + "]"), width);
  if (!f.fix.snippet.empty()) appendSnippet(out, style, f.fix.snippet);
  appendField(out, style, "Check", f.verify, width);
}

}  // namespace

std::string renderText(const Advice& a, int width_in, bool colour) {
  const size_t width = static_cast<size_t>(std::clamp(width_in, 60, 160));
  const Style style{colour};
  std::string out = style.bold("gpuscope advise") + ": " + a.trace + "\n";
  if (!a.device.empty()) out += "  " + a.framework + " on " + a.device + "\n";
  const std::string indent(12, ' ');
  if (const std::string failed = failureText(a); !failed.empty()) {
    out += "  " + style.bold("Failed") + "    " + wrap(failed, width, indent) + "\n";
  }
  if (const std::string job = jobText(a); !job.empty()) out += "  Job       " + wrap(job, width, indent) + "\n";
  out += "  Step      " + wrap(stepText(a) + " (" + a.step_basis + ")", width, indent) + "\n";
  if (a.measured.peak_memory_bytes > 0) {
    out += "  Memory    " +
           wrap(analysis::formatBytes(a.measured.peak_memory_bytes) + " " + a.memory_basis, width, indent) + "\n";
  }
  if (a.findings.empty()) {
    out += "\nNo findings: no rule found a problem worth fixing in this trace.\n";
  } else {
    if (a.run_failed.empty()) {
      out += "  Predicted " + wrap(predictionText(a) + " with every fix below, by hand too", width, indent) + "\n";
      out += "  Plan      " + wrap(planText(a), width, indent) + "\n";
    }
    for (size_t i = 0; i < a.findings.size(); ++i) appendFinding(out, style, a.findings[i], i + 1, a.per_step, width);
  }
  if (!a.notes.empty()) {
    out += "\n" + style.bold("Notes") + "\n";
    for (const std::string& note : a.notes) out += "  - " + wrap(note, width, "    ") + "\n";
  }
  return out;
}

}  // namespace gpuscope::advisor
