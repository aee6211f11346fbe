#include "cli/report_table.h"

#include <algorithm>
#include <cinttypes>
#include <cmath>

namespace gpuscope::cli {

namespace {

using analysis::byteScale;
using analysis::Scale;
using analysis::timeScale;

double numberOf(const Cell& cell) {
  if (const auto* i = std::get_if<int64_t>(&cell)) return static_cast<double>(*i);
  if (const auto* d = std::get_if<double>(&cell)) return *d;
  return 0.0;
}

std::string printf_string(const char* format, double value) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, format, value);
  return buffer;
}

// The scale each column is shown in, chosen from its largest value so a column reads in one unit.
std::vector<Scale> columnScales(const Report& report, size_t rows) {
  std::vector<Scale> scales;
  for (size_t c = 0; c < report.columns.size(); ++c) {
    double max = 0;
    for (size_t r = 0; r < rows; ++r) max = std::max(max, std::fabs(numberOf(report.rows[r][c])));
    switch (report.columns[c].unit) {
      case Unit::kNanoseconds: scales.push_back(timeScale(max)); break;
      case Unit::kBytes: scales.push_back(byteScale(max)); break;
      case Unit::kShare: scales.push_back({"%", 0.01}); break;
      case Unit::kBytesPerSecond: scales.push_back({"GB/s", 1e9}); break;
      default: scales.push_back({"", 1.0}); break;
    }
  }
  return scales;
}

std::string cellText(const Cell& cell, Unit unit, const Scale& scale) {
  if (const auto* s = std::get_if<std::string>(&cell)) return *s;
  if (unit == Unit::kCount || unit == Unit::kText) {
    if (const auto* i = std::get_if<int64_t>(&cell)) return std::to_string(*i);
    return printf_string("%.3g", numberOf(cell));
  }
  const double v = numberOf(cell) / scale.divisor;
  return printf_string(unit == Unit::kShare ? "%.1f" : "%.3f", v);
}

// Text cells longer than this are cut in the text table (CSV and JSON keep them whole).
constexpr size_t kMaxTextWidth = 90;

std::string clip(std::string text) {
  if (text.size() <= kMaxTextWidth) return text;
  return text.substr(0, kMaxTextWidth - 3) + "...";
}

std::string csvField(const std::string& text) {
  if (text.find_first_of(",\"\n\r") == std::string::npos) return text;
  std::string out = "\"";
  for (char c : text) {
    out += c;
    if (c == '"') out += '"';
  }
  return out + "\"";
}

}  // namespace

void writeTable(std::FILE* out, const Report& report, size_t max_rows) {
  const size_t rows = max_rows == 0 ? report.rows.size() : std::min(max_rows, report.rows.size());
  const std::vector<Scale> scales = columnScales(report, rows);
  std::vector<std::vector<std::string>> text(rows + 1);
  for (size_t c = 0; c < report.columns.size(); ++c) {
    const Column& col = report.columns[c];
    text[0].push_back(*scales[c].name ? col.title + " (" + scales[c].name + ")" : col.title);
    for (size_t r = 0; r < rows; ++r) text[r + 1].push_back(clip(cellText(report.rows[r][c], col.unit, scales[c])));
  }
  std::vector<size_t> width(report.columns.size(), 0);
  for (const auto& line : text) {
    for (size_t c = 0; c < line.size(); ++c) width[c] = std::max(width[c], line[c].size());
  }
  std::fprintf(out, "%s\n", report.title.c_str());
  for (const auto& line : text) {
    std::string row = " ";
    for (size_t c = 0; c < line.size(); ++c) {
      const bool left = report.columns[c].unit == Unit::kText;
      const std::string pad(width[c] - line[c].size(), ' ');
      row += " " + (left ? line[c] + (c + 1 < line.size() ? pad : "") : pad + line[c]);
    }
    std::fprintf(out, "%s\n", row.c_str());
  }
  if (report.rows.empty()) std::fprintf(out, "  (none)\n");
  if (rows < report.rows.size()) {
    std::fprintf(out, "  ... %zu more rows (--limit 0 shows all)\n", report.rows.size() - rows);
  }
}

void writeVertical(std::FILE* out, const Report& report) {
  std::fprintf(out, "%s\n", report.title.c_str());
  size_t width = 0;
  for (const Column& c : report.columns) width = std::max(width, c.title.size());
  for (size_t c = 0; c < report.columns.size(); ++c) {
    const Column& col = report.columns[c];
    std::string line = "  " + col.title + std::string(width - col.title.size(), ' ');
    for (const auto& row : report.rows) {
      const Cell& v = row[c];
      std::string text;
      if (col.unit == Unit::kNanoseconds) {
        text = formatDuration(static_cast<int64_t>(numberOf(v)));
      } else if (col.unit == Unit::kBytes) {
        text = formatBytes(static_cast<int64_t>(numberOf(v)));
      } else if (col.unit == Unit::kShare) {
        text = printf_string("%.1f %%", 100.0 * numberOf(v));
      } else {
        text = cellText(v, col.unit, {"", 1.0});
      }
      line += "  " + text;
    }
    std::fprintf(out, "%s\n", line.c_str());
  }
  if (report.rows.empty()) std::fprintf(out, "  (none)\n");
}

void writeCsv(std::FILE* out, const Report& report) {
  std::string line;
  for (size_t c = 0; c < report.columns.size(); ++c) line += (c ? "," : "") + report.columns[c].key;
  std::fprintf(out, "%s\n", line.c_str());
  for (const auto& row : report.rows) {
    line.clear();
    for (size_t c = 0; c < row.size(); ++c) {
      if (c) line += ',';
      if (const auto* s = std::get_if<std::string>(&row[c])) {
        line += csvField(*s);
      } else if (const auto* i = std::get_if<int64_t>(&row[c])) {
        line += std::to_string(*i);
      } else {
        line += printf_string("%.6g", std::get<double>(row[c]));
      }
    }
    std::fprintf(out, "%s\n", line.c_str());
  }
}

void writeJsonRows(JsonWriter& json, const Report& report) {
  json.beginArray(true);
  for (const auto& row : report.rows) {
    json.beginObject();
    for (size_t c = 0; c < row.size(); ++c) {
      json.key(report.columns[c].key);
      std::visit([&](const auto& v) { json.value(v); }, row[c]);
    }
    json.endObject();
  }
  json.endArray();
}

}  // namespace gpuscope::cli
