#include "cli/record_summary.h"

#include <algorithm>
#include <cstdio>

#include "formats/memory_replay.h"

namespace gpuscope::cli {

namespace {

Result<int64_t> queryOr0(sqlite::Database& db, const std::string& sql) {
  return db.queryInt("SELECT coalesce((" + sql + "), 0)");
}

// Length of the union of all GPU activity intervals, merged in start order (SQLite sorts on disk if needed).
Result<int64_t> busyNs(sqlite::Database& db) {
  Result<sqlite::Statement> stmt = db.prepare(
      "SELECT start_ns, end_ns FROM kernel UNION ALL SELECT start_ns, end_ns FROM graph_launch "
      "UNION ALL SELECT start_ns, end_ns FROM memcpy UNION ALL SELECT start_ns, end_ns FROM memset ORDER BY 1");
  if (!stmt) return stmt.status();
  int64_t busy = 0, open_start = 0, open_end = -1;
  while (true) {
    Result<bool> row = stmt->step();
    if (!row) return row.status();
    if (!*row) break;
    const int64_t start = stmt->columnInt(0), end = stmt->columnInt(1);
    if (start > open_end) {
      if (open_end > open_start) busy += open_end - open_start;
      open_start = start;
      open_end = end;
    } else {
      open_end = std::max(open_end, end);
    }
  }
  if (open_end > open_start) busy += open_end - open_start;
  return busy;
}

Result<int64_t> peakDeviceBytes(TraceReader& reader) {
  int64_t in_use = 0, peak = 0;
  Status status = replayMemoryEvents(reader, [&](const schema::MemoryEventRow& m, int64_t delta) {
    if (m.memory_kind != schema::MemoryKind::kDevice && m.memory_kind != schema::MemoryKind::kManaged) return;
    in_use += delta;
    peak = std::max(peak, in_use);
  });
  if (!status) return status;
  return peak;
}

}  // namespace

Result<RecordSummary> summarize(TraceReader& reader) {
  sqlite::Database& db = reader.database();
  RecordSummary s;
  Result<int64_t> processes = queryOr0(db, "SELECT count(*) FROM session");
  Result<int64_t> first = queryOr0(db, "SELECT min(start_ns) FROM session");
  Result<int64_t> last = queryOr0(db, "SELECT max(coalesce(end_ns, start_ns)) FROM session");
  Result<int64_t> kernels = queryOr0(db, "SELECT count(*) FROM kernel");
  Result<int64_t> graphs = queryOr0(db, "SELECT count(*) FROM graph_launch");
  Result<int64_t> warnings = queryOr0(db, "SELECT count(*) FROM data_quality WHERE severity >= 1");
  Result<int64_t> busy = busyNs(db);
  Result<int64_t> peak = peakDeviceBytes(reader);
  for (const auto* r : {&processes, &first, &last, &kernels, &graphs, &warnings, &busy, &peak}) {
    if (!*r) return r->status();
  }
  s.processes = *processes;
  s.duration_s = static_cast<double>(*last - *first) / 1e9;
  s.kernels = *kernels;
  s.graph_launches = *graphs;
  s.warnings = *warnings;
  s.gpu_busy_percent = *last > *first ? 100.0 * static_cast<double>(*busy) / static_cast<double>(*last - *first) : 0;
  s.peak_device_bytes = *peak;
  return s;
}

std::string formatSummary(const std::string& path, const RecordSummary& s) {
  char line[640];
  const std::string graphs = s.graph_launches == 0 ? ""
                                                   : ", " + std::to_string(s.graph_launches) + " CUDA graph launch" +
                                                         (s.graph_launches == 1 ? "" : "es") + " recorded whole";
  std::snprintf(line, sizeof line,
                "gpuscope: wrote %s: %lld process%s, %.3f s recorded, %lld kernels%s, GPU busy %.1f %% of the time, "
                "peak device memory %.1f MiB (allocated through CUDA), %lld data-quality warning%s%s\n",
                path.c_str(), static_cast<long long>(s.processes), s.processes == 1 ? "" : "es", s.duration_s,
                static_cast<long long>(s.kernels), graphs.c_str(), s.gpu_busy_percent,
                static_cast<double>(s.peak_device_bytes) / (1 << 20), static_cast<long long>(s.warnings),
                s.warnings == 1 ? "" : "s", s.warnings ? " (gpuscope info shows them)" : "");
  return line;
}

}  // namespace gpuscope::cli
