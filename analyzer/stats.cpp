#include "analyzer/stats.h"

#include <algorithm>
#include <map>
#include <optional>
#include <unordered_map>

#include "analyzer/gpu_activity.h"
#include "formats/trace_enums.h"

namespace gpuscope::analysis {

namespace {

double share(int64_t part, int64_t whole) {
  return whole > 0 ? static_cast<double>(part) / static_cast<double>(whole) : 0.0;
}

template <typename Row>
void sortByTotalTime(std::vector<Row>& rows) {
  std::stable_sort(rows.begin(), rows.end(), [](const Row& a, const Row& b) { return a.time.total > b.time.total; });
}

using DurationsByName = std::unordered_map<int32_t, std::vector<int64_t>>;  // kernel durations by name string id

std::vector<KernelNameSummary> summariesByName(const TraceData& trace, DurationsByName& durations,
                                               int64_t kernel_time) {
  std::vector<KernelNameSummary> rows;
  for (auto& [name, values] : durations) {
    KernelNameSummary row{trace.text(name), classifyKernel(trace.text(name)), summarize(values), 0};
    row.share_of_gpu = share(row.time.total, kernel_time);
    rows.push_back(std::move(row));
  }
  sortByTotalTime(rows);
  return rows;
}

std::vector<KernelNameSummary> kernelsByName(const TraceData& trace, int64_t kernel_time) {
  DurationsByName durations;
  const KernelTable& k = trace.kernels;
  for (size_t i = 0; i < k.size(); ++i) {
    durations[trace.configs[k.config[i]].name.id].push_back(k.end_ns[i] - k.start_ns[i]);
  }
  return summariesByName(trace, durations, kernel_time);
}

int64_t kernelTime(const TraceData& trace) {
  int64_t total = 0;
  for (size_t i = 0; i < trace.kernels.size(); ++i) total += trace.kernels.end_ns[i] - trace.kernels.start_ns[i];
  return total;
}

std::vector<KernelClassSummary> kernelsByClass(const TraceData& trace, int64_t kernel_time) {
  const std::vector<KernelKind> kind_of_config = classifyConfigs(trace);
  using Key = std::pair<KernelClass, Precision>;
  std::map<Key, std::vector<int64_t>> durations;
  std::map<Key, std::unordered_map<int32_t, bool>> names;
  const KernelTable& k = trace.kernels;
  for (size_t i = 0; i < k.size(); ++i) {
    const KernelKind kind = kind_of_config[k.config[i]];
    durations[{kind.cls, kind.precision}].push_back(k.end_ns[i] - k.start_ns[i]);
    names[{kind.cls, kind.precision}][trace.configs[k.config[i]].name.id] = true;
  }
  std::vector<KernelClassSummary> rows;
  for (auto& [key, values] : durations) {
    KernelClassSummary row{key.first, key.second, summarize(values), 0, static_cast<int64_t>(names[key].size())};
    row.share_of_gpu = share(row.time.total, kernel_time);
    rows.push_back(row);
  }
  sortByTotalTime(rows);
  return rows;
}

std::vector<ApiSummary> apiCalls(const TraceData& trace) {
  std::unordered_map<int32_t, std::vector<int64_t>> durations;
  std::unordered_map<int32_t, int64_t> errors;
  const ApiTable& a = trace.api_calls;
  int64_t total = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    durations[a.name[i]].push_back(a.end_ns[i] - a.start_ns[i]);
    total += a.end_ns[i] - a.start_ns[i];
    if (a.return_code[i] != 0) ++errors[a.name[i]];
  }
  std::vector<ApiSummary> rows;
  for (auto& [name, values] : durations) {
    ApiSummary row{trace.text(name), summarize(values), 0, errors[name]};
    row.share_of_api = share(row.time.total, total);
    rows.push_back(std::move(row));
  }
  sortByTotalTime(rows);
  return rows;
}

TransferSummary transferRow(std::string operation, std::string memory, std::vector<int64_t>& times,
                            std::vector<int64_t>& sizes) {
  TransferSummary row{std::move(operation), std::move(memory), summarize(times), summarize(sizes), 0};
  if (row.time.total > 0) row.bandwidth_bytes_per_s = static_cast<double>(row.bytes.total) * 1e9 / row.time.total;
  return row;
}

std::vector<TransferSummary> transfers(const TraceData& trace) {
  std::map<std::pair<std::string, std::string>, std::pair<std::vector<int64_t>, std::vector<int64_t>>> groups;
  const CopyTable& c = trace.copies;
  for (size_t i = 0; i < c.size(); ++i) {
    std::string memory =
        std::string(schema::enumName(c.src_kind[i])) + " -> " + std::string(schema::enumName(c.dst_kind[i]));
    auto& [times, sizes] = groups[{"memcpy " + std::string(directionOf(c.kind[i])), memory}];
    times.push_back(c.end_ns[i] - c.start_ns[i]);
    sizes.push_back(c.bytes[i]);
  }
  const MemsetTable& m = trace.memsets;
  for (size_t i = 0; i < m.size(); ++i) {
    auto& [times, sizes] = groups[{"memset", "device"}];
    times.push_back(m.end_ns[i] - m.start_ns[i]);
    sizes.push_back(m.bytes[i]);
  }
  std::vector<TransferSummary> rows;
  for (auto& [key, values] : groups) rows.push_back(transferRow(key.first, key.second, values.first, values.second));
  sortByTotalTime(rows);
  return rows;
}

std::vector<NvtxSummary> nvtxRanges(const TraceData& trace) {
  std::map<std::pair<int32_t, int32_t>, std::vector<int64_t>> durations;  // (domain, name)
  const NvtxTable& n = trace.nvtx;
  for (size_t i = 0; i < n.size(); ++i) {
    if (n.kind[i] == schema::NvtxKind::kRange)
      durations[{n.domain[i], n.name[i]}].push_back(n.end_ns[i] - n.start_ns[i]);
  }
  std::vector<NvtxSummary> rows;
  for (auto& [key, values] : durations)
    rows.push_back({trace.text(key.second), trace.text(key.first), summarize(values)});
  sortByTotalTime(rows);
  return rows;
}

std::vector<DeviceUsage> deviceUsage(const TraceData& trace, const std::vector<DeviceActivity>& activity) {
  std::vector<DeviceUsage> rows(trace.devices.size());
  for (size_t d = 0; d < rows.size(); ++d) {
    DeviceUsage& u = rows[d];
    u.device = static_cast<int32_t>(d);
    u.label = trace.deviceLabel(u.device);
    const DeviceActivity& a = activity[d];
    if (!a.busy.empty()) {
      u.window_start_ns = a.busy.front().start;
      u.window_end_ns = a.busy.back().end;
    }
    u.busy_ns = totalLength(a.busy);
    u.kernel_busy_ns = totalLength(a.kernels);
    u.copy_busy_ns = totalLength(a.copies);
  }
  for (int32_t d : trace.kernels.device) ++rows[d].kernels;
  for (int32_t d : trace.copies.device) ++rows[d].copies;
  for (int32_t d : trace.memsets.device) ++rows[d].memsets;
  return rows;
}

std::vector<StreamUsage> streamUsage(const TraceData& trace, const std::vector<DeviceUsage>& devices) {
  std::vector<StreamUsage> rows(trace.streams.size());
  std::vector<std::vector<Interval>> work(trace.streams.size());
  auto add = [&](int32_t stream, int64_t start, int64_t end, int64_t StreamUsage::*counter) {
    ++(rows[stream].*counter);
    work[stream].push_back({start, end});
  };
  const KernelTable& k = trace.kernels;
  for (size_t i = 0; i < k.size(); ++i) add(k.stream[i], k.start_ns[i], k.end_ns[i], &StreamUsage::kernels);
  const CopyTable& c = trace.copies;
  for (size_t i = 0; i < c.size(); ++i) add(c.stream[i], c.start_ns[i], c.end_ns[i], &StreamUsage::copies);
  const MemsetTable& m = trace.memsets;
  for (size_t i = 0; i < m.size(); ++i) add(m.stream[i], m.start_ns[i], m.end_ns[i], &StreamUsage::memsets);
  for (size_t s = 0; s < rows.size(); ++s) {
    StreamUsage& u = rows[s];
    u.stream = static_cast<int32_t>(s);
    u.device = trace.streams[s].device;
    u.stream_id = trace.streams[s].stream_id;
    u.busy_ns = totalLength(mergeIntervals(std::move(work[s])));
    u.share_of_window = share(u.busy_ns, devices[u.device].windowNs());
  }
  std::stable_sort(rows.begin(), rows.end(), [](const StreamUsage& a, const StreamUsage& b) {
    return a.device != b.device ? a.device < b.device : a.busy_ns > b.busy_ns;
  });
  return rows;
}

}  // namespace

std::string_view directionOf(schema::CopyKind kind) {
  switch (kind) {
    case schema::CopyKind::kHostToDevice: return "HtoD";
    case schema::CopyKind::kDeviceToHost: return "DtoH";
    case schema::CopyKind::kDeviceToDevice: return "DtoD";
    case schema::CopyKind::kHostToHost: return "HtoH";
    case schema::CopyKind::kPeerToPeer: return "PtoP";
    case schema::CopyKind::kUnknown: return "unknown";
    default: return "array";
  }
}

Stats computeStats(const TraceData& trace) {
  Stats stats;
  StatsSummary& s = stats.summary;
  s.process_count = static_cast<int64_t>(trace.sessions.size());
  s.device_count = static_cast<int64_t>(trace.devices.size());
  s.kernel_count = static_cast<int64_t>(trace.kernels.size());
  s.copy_count = static_cast<int64_t>(trace.copies.size());
  s.memset_count = static_cast<int64_t>(trace.memsets.size());
  s.api_call_count = static_cast<int64_t>(trace.api_calls.size());
  for (schema::NvtxKind kind : trace.nvtx.kind) s.nvtx_range_count += kind == schema::NvtxKind::kRange;
  s.duration_ns = trace.durationNs();
  s.kernel_time_ns = kernelTime(trace);
  for (int64_t b : trace.copies.bytes) s.bytes_copied += b;

  const std::vector<DeviceActivity> activity = deviceActivity(trace);
  stats.devices = deviceUsage(trace, activity);
  for (const DeviceUsage& d : stats.devices) s.gpu_busy_ns += d.busy_ns;
  stats.streams = streamUsage(trace, stats.devices);
  stats.kernels = kernelsByName(trace, s.kernel_time_ns);
  stats.kernel_classes = kernelsByClass(trace, s.kernel_time_ns);
  stats.api_calls = apiCalls(trace);
  stats.transfers = transfers(trace);
  stats.nvtx_ranges = nvtxRanges(trace);
  stats.warnings = traceWarnings(trace);
  return stats;
}

std::vector<RankKernelSummary> kernelsByRank(const TraceData& trace) {
  std::map<int64_t, DurationsByName> durations;  // by rank
  const KernelTable& k = trace.kernels;
  for (size_t i = 0; i < k.size(); ++i) {
    const std::optional<int64_t>& rank = trace.sessions[k.session[i]].rank;
    if (rank) durations[*rank][trace.configs[k.config[i]].name.id].push_back(k.end_ns[i] - k.start_ns[i]);
  }
  if (durations.size() < 2) return {};
  const int64_t kernel_time = kernelTime(trace);
  std::vector<RankKernelSummary> rows;
  for (auto& [rank, of_rank] : durations) {
    for (KernelNameSummary& kernel : summariesByName(trace, of_rank, kernel_time))
      rows.push_back({rank, std::move(kernel)});
  }
  std::stable_sort(rows.begin(), rows.end(), [](const RankKernelSummary& a, const RankKernelSummary& b) {
    return a.kernel.time.total > b.kernel.time.total;
  });
  return rows;
}

std::string programFailure(const TraceData& trace) {
  for (const schema::DataQualityRow& row : trace.data_quality) {
    if (row.code == "program_failed" && !row.session_id) return row.message;
  }
  return "";
}

// Rows with the same text are one warning with a count (traces from before the collector counted repeats hold
// one row per repeat: 997 of one CUPTI warning in a JAX program's).
std::vector<std::string> traceWarnings(const TraceData& trace) {
  std::vector<std::pair<std::string, int64_t>> counted;
  for (const schema::DataQualityRow& row : trace.data_quality) {
    if (row.severity == schema::Severity::kInfo) continue;
    std::string text = std::string(schema::enumName(row.severity)) + ": " + row.message;
    auto same = std::find_if(counted.begin(), counted.end(), [&](const auto& c) { return c.first == text; });
    if (same != counted.end()) {
      ++same->second;
    } else {
      counted.emplace_back(std::move(text), 1);
    }
  }
  std::vector<std::string> out;
  for (auto& [text, n] : counted) out.push_back(n > 1 ? text + " (" + std::to_string(n) + " times)" : std::move(text));
  for (const std::string& w : trace.load_warnings) out.push_back("warning: " + w);
  return out;
}

}  // namespace gpuscope::analysis
