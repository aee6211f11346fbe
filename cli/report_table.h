// A report as a table of typed cells, written as an aligned text table (times and sizes in readable units,
// named in the header), CSV (raw numbers, the unit in the column name) or JSON (raw numbers).
// `gpuscope stats` and `gpuscope diff` build their output from these.
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>
#include <variant>
#include <vector>

#include "analyzer/units.h"
#include "formats/json_writer.h"

namespace gpuscope::cli {

enum class Unit {
  kText,
  kCount,
  kNanoseconds,     // shown in s, ms or µs, whichever suits the column
  kBytes,           // shown in GiB, MiB, KiB or B
  kShare,           // a fraction 0..1, shown as a percentage
  kBytesPerSecond,  // shown in GB/s
};

struct Column {
  std::string key;    // JSON key and CSV header, with its unit: "total_ns", "bytes", "share_of_gpu"
  std::string title;  // text-table header without the unit: "Total"
  Unit unit = Unit::kCount;
};

using Cell = std::variant<std::string, int64_t, double>;

struct Report {
  std::string name;   // "kernels": the --report name and the JSON key
  std::string title;  // "Kernels by name"
  std::vector<Column> columns;
  std::vector<std::vector<Cell>> rows;
};

// Text table; at most max_rows rows (0: all), then a line saying how many were left out.
void writeTable(std::FILE* out, const Report& report, size_t max_rows);
// One line per column, one value column per row: for reports of a few wide rows (a summary).
void writeVertical(std::FILE* out, const Report& report);
void writeCsv(std::FILE* out, const Report& report);
// An array of row objects keyed by column key.
void writeJsonRows(JsonWriter& json, const Report& report);

using analysis::formatBytes;  // "56.0 MiB": one value in the unit that suits it, for sentences
using analysis::formatDuration;

}  // namespace gpuscope::cli
