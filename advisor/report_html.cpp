// The advice as one self-contained HTML page (no scripts, no external files): a summary, a chart of what
// each fix would win, and each finding with its evidence, estimate, code and check.
#include <algorithm>

#include "advisor/report.h"
#include "analyzer/kernel_names.h"
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
    ".basis{color:#555;font-style:italic}.legend{font-size:12px;margin:.3em 0 1em}"
    ".legend span{margin-right:1.2em;white-space:nowrap}.legend i{display:inline-block;width:10px;height:10px;"
    "margin-right:4px}";

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
           escape(analysis::ellipsize(f.title, 50)) + "</text>";
    svg += "<rect x=\"" + std::to_string(label_width) + "\" y=\"" + std::to_string(y + 3) + "\" width=\"" +
           std::to_string(std::max(1, static_cast<int>(share * bar_width))) + "\" height=\"" +
           std::to_string(bar_height - 8) + "\" fill=\"" + (memory ? "#7a5cc0" : "#2f7ed8") + "\"/>";
    svg += "<text x=\"" + std::to_string(label_width + static_cast<int>(share * bar_width) + 6) + "\" y=\"" +
           std::to_string(y + 15) + "\" font-size=\"12\">" + analysis::formatShare(share) +
           (memory ? " of peak memory" : " of the step") + "</text>";
  }
  return svg + "</svg>";
}

std::string num(double v) { return std::to_string(static_cast<int64_t>(v)); }

constexpr const char* kPalette[] = {"#2f7ed8", "#f28f43", "#7a5cc0", "#3aa655", "#d94f4f", "#8c8c8c", "#c7a600"};

// A legend as HTML under its plot, so that it wraps like text.
std::string legend(const std::vector<std::string>& labels, const std::vector<std::string>& colours) {
  std::string html = "<div class=\"legend\">";
  for (size_t i = 0; i < labels.size(); ++i) {
    html += "<span><i style=\"background:" + colours[i] + "\"></i>" + escape(labels[i]) + "</span>";
  }
  return html + "</div>";
}

// Device memory over time, one band per category, stacked.
std::string memoryChart(const PlotData& p) {
  const auto& t = p.memory_times_ns;
  if (t.size() < 2) return "";
  const double w = 800, h = 200, left = 70;
  double top = 0;
  for (size_t i = 0; i < t.size(); ++i) {
    double total = 0;
    for (const auto& series : p.memory_by_category) total += static_cast<double>(series[i]);
    top = std::max(top, total);
  }
  if (top <= 0) return "";
  const double t0 = static_cast<double>(t.front()), span = std::max(1.0, static_cast<double>(t.back()) - t0);
  auto x = [&](size_t i) { return left + (static_cast<double>(t[i]) - t0) / span * w; };
  auto y = [&](double bytes) { return 10 + h - bytes / top * h; };
  std::string svg = "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" + num(left + w + 20) + "\" height=\"" +
                    num(h + 32) + "\" role=\"img\" aria-label=\"device memory over time\">";
  std::vector<double> below(t.size(), 0.0);
  std::vector<std::string> labels, colours;
  for (size_t k = 0; k < p.memory_by_category.size(); ++k) {
    const auto& series = p.memory_by_category[k];
    if (std::all_of(series.begin(), series.end(), [](int64_t v) { return v == 0; })) continue;
    std::string points;
    for (size_t i = 0; i < t.size(); ++i)
      points += num(x(i)) + "," + num(y(below[i] + static_cast<double>(series[i]))) + " ";
    for (size_t i = t.size(); i-- > 0;) points += num(x(i)) + "," + num(y(below[i])) + " ";
    for (size_t i = 0; i < t.size(); ++i) below[i] += static_cast<double>(series[i]);
    svg += "<polygon points=\"" + points + "\" fill=\"" + kPalette[k % 7] + "\" fill-opacity=\"0.85\"/>";
    labels.push_back(std::string(analysis::toString(static_cast<analysis::MemoryCategory>(k))));
    colours.push_back(kPalette[k % 7]);
  }
  svg += "<text x=\"0\" y=\"18\" font-size=\"11\">" + escape(analysis::formatBytes(static_cast<int64_t>(top))) +
         "</text><text x=\"0\" y=\"" + num(h + 10) + "\" font-size=\"11\">0</text>";
  svg += "<text x=\"" + num(left + w - 80) + "\" y=\"" + num(h + 26) + "\" font-size=\"11\">" +
         escape(analysis::formatDuration(t.back())) + "</text>";
  return svg + "</svg>" + legend(labels, colours);
}

// One step's time as a stacked bar: busy, and idle by cause.
std::string stepChart(const PlotData& p) {
  int64_t total = 0;
  for (const Bar& b : p.step_time) total += b.value;
  if (total <= 0) return "";
  const double w = 800;
  std::string svg = "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" + num(w + 20) +
                    "\" height=\"30\" role=\"img\" aria-label=\"where a step's time goes\">";
  double x = 0;
  std::vector<std::string> labels, colours;
  for (size_t i = 0; i < p.step_time.size(); ++i) {
    const Bar& b = p.step_time[i];
    if (b.value <= 0) continue;
    const double width = static_cast<double>(b.value) / static_cast<double>(total) * w;
    svg += "<rect x=\"" + num(x) + "\" y=\"0\" width=\"" + num(std::max(1.0, width)) + "\" height=\"28\" fill=\"" +
           kPalette[i % 7] + "\"/>";
    x += width;
    labels.push_back(b.label + " " + analysis::formatDuration(b.value));
    colours.push_back(kPalette[i % 7]);
  }
  return svg + "</svg>" + legend(labels, colours);
}

// Labelled horizontal bars, longest first.
std::string barChart(const std::vector<Bar>& bars, const std::string& what) {
  if (bars.empty() || bars.front().value <= 0) return "";
  const int row = 20, label_width = 400, bar_width = 380;
  std::string svg = "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" + num(label_width + bar_width + 100) +
                    "\" height=\"" + num(row * static_cast<int>(bars.size()) + 4) + "\" role=\"img\" aria-label=\"" +
                    escape(what) + "\">";
  for (size_t i = 0; i < bars.size(); ++i) {
    const int y = static_cast<int>(i) * row;
    const double width = static_cast<double>(bars[i].value) / static_cast<double>(bars.front().value) * bar_width;
    svg += "<text x=\"0\" y=\"" + num(y + 14) + "\" font-size=\"12\">" +
           escape(analysis::ellipsize(bars[i].label, 56)) + "</text>";
    svg += "<rect x=\"" + num(label_width) + "\" y=\"" + num(y + 3) + "\" width=\"" + num(std::max(1.0, width)) +
           "\" height=\"" + num(row - 6) + "\" fill=\"#2f7ed8\"/>";
    svg += "<text x=\"" + num(label_width + width + 6) + "\" y=\"" + num(y + 14) + "\" font-size=\"11\">" +
           escape(analysis::formatDuration(bars[i].value)) + "</text>";
  }
  return svg + "</svg>";
}

// The plots section: each plot only where the trace has its data.
std::string plots(const Advice& a) {
  std::string out;
  const std::string per = a.per_step ? " (per step)" : " (whole run)";
  if (std::string s = stepChart(a.plots); !s.empty())
    out += "<h2>Where the step's GPU time goes" + per + "</h2>\n" + s + "\n";
  if (std::string s = memoryChart(a.plots); !s.empty()) {
    out += "<h2>Device memory over time, by category</h2>\n" + s + "\n";
  }
  if (std::string s = barChart(a.plots.top_kernels, "top kernels"); !s.empty()) {
    out += "<h2>Kernels with the most GPU time (whole run)</h2>\n" + s + "\n";
  }
  if (std::string s = barChart(a.plots.top_chains, "fusable chains"); !s.empty()) {
    out += "<h2>Fusable chains by estimated saving" + per + "</h2>\n" + s + "\n";
  }
  return out;
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
  if (const std::string failed = failureText(a); !failed.empty()) {
    out += "<tr><th>Failed</th><td><strong>" + escape(failed) + "</strong></td></tr>";
  }
  if (!a.device.empty()) out += "<tr><th>Program</th><td>" + escape(a.framework + " on " + a.device) + "</td></tr>";
  if (const std::string job = jobText(a); !job.empty()) out += "<tr><th>Job</th><td>" + escape(job) + "</td></tr>";
  out += "<tr><th>Step</th><td>" + escape(stepText(a)) + " <span class=\"basis\">(" + escape(a.step_basis) +
         ")</span></td></tr>";
  if (a.measured.peak_memory_bytes > 0) {
    out += "<tr><th>Peak memory</th><td>" + escape(analysis::formatBytes(a.measured.peak_memory_bytes)) + " (" +
           escape(a.memory_basis) + ")</td></tr>";
  }
  if (!a.findings.empty() && a.run_failed.empty()) {
    out += "<tr><th>Predicted</th><td>" + escape(predictionText(a)) + " with every fix <span class=\"basis\">(" +
           escape(a.prediction_basis) + ")</span></td></tr>";
    out += "<tr><th>Plan</th><td>" + escape(planText(a)) + "</td></tr>";
  }
  out += "</table>\n";
  if (a.findings.empty()) out += "<p>No findings: no rule found a problem worth fixing in this trace.</p>\n";
  if (!a.findings.empty()) out += "<h2>What each fix would win</h2>\n" + gainChart(a) + "\n";
  for (size_t i = 0; i < a.findings.size(); ++i) appendFinding(out, a.findings[i], i + 1, a.per_step);
  out += plots(a);
  if (!a.notes.empty()) {
    out += "<h2>Notes</h2><ul>";
    for (const std::string& n : a.notes) out += "<li>" + escape(n) + "</li>";
    out += "</ul>\n";
  }
  return out + "</body></html>\n";
}

}  // namespace gpuscope::advisor
