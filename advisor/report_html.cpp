// The advice as one self-contained HTML page (no scripts, no external files): a summary, a chart of what
// each fix would win, and each finding with its evidence, estimate, code and check.
#include <algorithm>

#include "advisor/report.h"
#include "analyzer/units.h"

namespace gpuscope::advisor {

namespace {

std::string escape(const std::string& text) {
  std::string out;
  for (char c : text) {
    switch (c) {
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '&': out += "&amp;"; break;
      case '"': out += "&quot;"; break;
      default: out += c;
    }
  }
  return out;
}

constexpr const char* kStyle =
    "body{font:15px/1.5 system-ui,sans-serif;max-width:960px;margin:2em auto;padding:0 1em;color:#222}"
    "h1{font-size:1.4em}h2{font-size:1.15em;margin-top:2em;border-top:1px solid #ddd;padding-top:1em}"
    "table{border-collapse:collapse}td,th{padding:.2em .8em .2em 0;text-align:left;vertical-align:top}"
    "pre{background:#f5f5f5;padding:.8em;overflow-x:auto}.sev{font-weight:bold;padding:0 .4em;border-radius:3px}"
    ".high{background:#fdd;color:#900}.medium{background:#ffe9c0;color:#850}.low,.info{background:#e6f0ff;color:#046}"
    ".basis{color:#555;font-style:italic}";

// One bar per finding: the share of the step (or of peak memory) its fix would win.
std::string gainChart(const Advice& a) {
  const int bar_height = 22, label_width = 380, bar_width = 520;
  const int height = bar_height * static_cast<int>(a.findings.size()) + 8;
  std::string svg = "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" +
                    std::to_string(label_width + bar_width + 80) + "\" height=\"" + std::to_string(height) +
                    "\" role=\"img\" aria-label=\"gain per finding\">";
  for (size_t i = 0; i < a.findings.size(); ++i) {
    const Finding& f = a.findings[i];
    const double share = std::clamp(f.weight(), 0.0, 1.0);
    const int y = static_cast<int>(i) * bar_height + 4;
    const bool memory = f.gain.share_of_peak > f.gain.share_of_step;
    svg += "<text x=\"0\" y=\"" + std::to_string(y + 15) + "\" font-size=\"13\">" + std::to_string(i + 1) + ". " +
           escape(f.title.substr(0, 52)) + "</text>";
    svg += "<rect x=\"" + std::to_string(label_width) + "\" y=\"" + std::to_string(y + 3) + "\" width=\"" +
           std::to_string(std::max(1, static_cast<int>(share * bar_width))) + "\" height=\"" +
           std::to_string(bar_height - 8) + "\" fill=\"" + (memory ? "#7a5cc0" : "#2f7ed8") + "\"/>";
    svg += "<text x=\"" + std::to_string(label_width + static_cast<int>(share * bar_width) + 6) + "\" y=\"" +
           std::to_string(y + 15) + "\" font-size=\"12\">" + analysis::formatShare(share) +
           (memory ? " of peak memory" : " of the step") + "</text>";
  }
  return svg + "</svg>";
}

void appendFinding(std::string& out, const Finding& f, size_t n, bool per_step) {
  const std::string sev(toString(f.severity));
  out += "<h2 id=\"" + escape(f.id) + "\">" + std::to_string(n) + ". " + escape(f.title) + " <span class=\"sev " + sev +
         "\">" + sev + "</span></h2>\n<p>" + escape(f.summary) + "</p>\n<ul>";
  for (const Evidence& e : f.evidence) out += "<li>" + escape(e.text) + "</li>";
  out += "</ul>\n<p><b>Why it costs.</b> " + escape(f.why) + "</p>\n";
  out += "<p><b>Gain.</b> " + escape(gainText(f, per_step)) +
         ". <span class=\"basis\">Estimate: " + escape(f.gain.basis) + ".</span></p>\n<p><b>Fix.</b> " +
         escape(f.fix.summary) + "</p>\n";
  if (!f.fix.snippet.empty()) out += "<pre><code>" + escape(f.fix.snippet) + "</code></pre>\n";
  out += "<p><b>Check.</b> " + escape(f.verify) + "</p>\n";
}

}  // namespace

std::string renderHtml(const Advice& a) {
  std::string out =
      "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>gpuscope advice: " + escape(a.trace) +
      "</title><style>" + kStyle + "</style></head><body>\n";
  out += "<h1>gpuscope advice: <code>" + escape(a.trace) + "</code></h1>\n<table>";
  if (!a.device.empty()) out += "<tr><th>Program</th><td>" + escape(a.framework + " on " + a.device) + "</td></tr>";
  out += "<tr><th>Step</th><td>" + escape(stepText(a)) + " <span class=\"basis\">(" + escape(a.step_basis) +
         ")</span></td></tr>";
  if (a.measured.peak_memory_bytes > 0) {
    out += "<tr><th>Peak memory</th><td>" + escape(analysis::formatBytes(a.measured.peak_memory_bytes)) + "</td></tr>";
  }
  if (!a.findings.empty()) {
    out += "<tr><th>Predicted</th><td>" + escape(predictionText(a)) + " with every fix <span class=\"basis\">(" +
           escape(a.prediction_basis) + ")</span></td></tr>";
  }
  out += "</table>\n";
  if (a.findings.empty()) out += "<p>No findings: no rule found a problem worth fixing in this trace.</p>\n";
  if (!a.findings.empty()) out += "<h2>What each fix would win</h2>\n" + gainChart(a) + "\n";
  for (size_t i = 0; i < a.findings.size(); ++i) appendFinding(out, a.findings[i], i + 1, a.per_step);
  if (!a.notes.empty()) {
    out += "<h2>Notes</h2><ul>";
    for (const std::string& n : a.notes) out += "<li>" + escape(n) + "</li>";
    out += "</ul>\n";
  }
  return out + "</body></html>\n";
}

}  // namespace gpuscope::advisor
