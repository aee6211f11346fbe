// gpuscope info: what a trace holds — processes, GPUs, event counts and data-quality warnings.
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <map>
#include <set>

#include "cli/command.h"
#include "formats/trace_reader.h"

namespace gpuscope::cli {

namespace {

using namespace schema;

std::string versionText(std::optional<int64_t> v) {
  if (!v) return "unknown";
  return std::to_string(*v / 1000) + "." + std::to_string(*v % 1000 / 10);
}

void printSession(const SessionRow& s) {
  std::printf("  pid %lld on %s", static_cast<long long>(s.pid),
              s.hostname.empty() ? "a host the trace does not name" : s.hostname.c_str());
  if (s.rank) std::printf(", rank %lld", static_cast<long long>(*s.rank));
  if (s.rank && s.world_size) std::printf(" of %lld", static_cast<long long>(*s.world_size));
  if (s.rank && s.local_rank) std::printf(" (local rank %lld)", static_cast<long long>(*s.local_rank));
  std::printf(": %s\n", s.command_line.c_str());
  std::printf("    CUDA driver %s, runtime %s, CUPTI API %s, gpuscope %s", versionText(s.cuda_driver_version).c_str(),
              versionText(s.cuda_runtime_version).c_str(),
              s.cupti_version ? std::to_string(*s.cupti_version).c_str() : "unknown", s.gpuscope_version.c_str());
  if (s.end_ns) std::printf(", recorded for %.3f s", static_cast<double>(*s.end_ns - s.start_ns) / 1e9);
  std::printf("\n");
}

// Each physical GPU once (by its UUID; by host, index and name where the collector had none), with the processes
// that saw it: every process of a job sees every GPU of its host.
void printGpus(const std::vector<SessionRow>& sessions, const std::vector<DeviceRow>& devices) {
  std::map<int64_t, const SessionRow*> by_id;
  for (const SessionRow& s : sessions) by_id[s.id] = &s;
  std::vector<std::pair<const DeviceRow*, std::string>> gpus;  // first row seen, and the pids that saw it
  std::map<std::string, size_t> index;
  for (const DeviceRow& d : devices) {
    const SessionRow* s = by_id.count(d.session_id) ? by_id[d.session_id] : nullptr;
    const std::string host = s ? s->hostname : "";
    const std::string key = d.uuid.empty() ? host + "/" + std::to_string(d.device_id) + "/" + d.name : d.uuid;
    auto [it, added] = index.emplace(key, gpus.size());
    if (added) gpus.push_back({&d, ""});
    std::string& pids = gpus[it->second].second;
    if (s) pids += (pids.empty() ? "" : ", ") + std::to_string(s->pid);
  }
  std::printf("GPUs: %zu\n", gpus.size());
  for (const auto& [d, pids] : gpus) {
    std::printf("  GPU %lld: %s, sm_%lld%lld, %lld SMs, %.1f GiB", static_cast<long long>(d->device_id),
                d->name.c_str(), static_cast<long long>(d->compute_major), static_cast<long long>(d->compute_minor),
                static_cast<long long>(d->sm_count), static_cast<double>(d->global_memory_bytes) / (1 << 30));
    if (sessions.size() > 1)
      std::printf(", seen by pid%s %s", pids.find(',') == std::string::npos ? "" : "s", pids.c_str());
    std::printf("\n");
  }
}

// The GPUs' NVLink connections, each pair once (every process of a job saw them): what collectives between them
// could reach. CUPTI gives the bandwidth of both directions together.
void printLinks(const std::vector<DeviceRow>& devices, const std::vector<NvlinkRow>& links) {
  std::map<std::string, int64_t> ordinal;
  for (const DeviceRow& d : devices) ordinal.emplace(d.uuid, d.device_id);
  std::set<std::pair<std::string, std::string>> seen;
  for (const NvlinkRow& l : links) {
    if (l.peer_kind != "gpu" || !seen.insert(std::minmax(l.device_uuid, l.peer_uuid)).second) continue;
    const auto name = [&](const std::string& uuid) {
      const auto it = ordinal.find(uuid);
      return it != ordinal.end() ? "GPU " + std::to_string(it->second) : uuid;
    };
    std::printf("  NVLink %lld between %s and %s: %lld links%s, %.1f GB/s each way\n",
                static_cast<long long>(l.version), name(l.device_uuid).c_str(), name(l.peer_uuid).c_str(),
                static_cast<long long>(l.links), l.through_nvswitch ? " through NVSwitch" : "",
                static_cast<double>(l.bandwidth_bytes_per_s) / 2e9);
  }
}

// The variables that change how CUDA, NCCL, PyTorch or XLA behave, each value once with how many processes had it.
void printEnvironment(const std::vector<EnvironmentRow>& environment) {
  std::map<std::string, std::set<int64_t>> processes;  // "NAME=value" → sessions
  for (const EnvironmentRow& e : environment) processes[e.name + "=" + e.value].insert(e.session_id);
  if (processes.empty()) return;
  std::printf("environment:\n");
  for (const auto& [variable, sessions] : processes) {
    std::printf("  %s (%zu process%s)\n", variable.c_str(), sessions.size(), sessions.size() == 1 ? "" : "es");
  }
}

// Each data-quality note once, with the number of processes that noted it.
void printQuality(const std::vector<DataQualityRow>& quality) {
  std::printf("data quality:%s\n", quality.empty() ? " no problems recorded" : "");
  std::vector<std::pair<const DataQualityRow*, int>> notes;
  for (const DataQualityRow& q : quality) {
    auto same = std::find_if(notes.begin(), notes.end(), [&](const auto& n) {
      return n.first->severity == q.severity && n.first->code == q.code && n.first->count == q.count &&
             n.first->message == q.message;
    });
    if (same == notes.end()) {
      notes.push_back({&q, 1});
    } else {
      ++same->second;
    }
  }
  for (const auto& [q, processes] : notes) {
    std::printf("  %s %s (%lld)%s: %s\n", std::string(enumName(q->severity)).c_str(), q->code.c_str(),
                static_cast<long long>(q->count),
                processes > 1 ? (" in " + std::to_string(processes) + " processes").c_str() : "", q->message.c_str());
  }
}

Status printCounts(TraceReader& reader) {
  std::printf("events:\n");
  Status status;
  std::apply(
      [&](auto... rows) {
        auto print = [&](auto row) {
          if (!status) return;
          Result<int64_t> n = reader.count<decltype(row)>();
          if (!n) {
            status = n.status();
            return;
          }
          const std::string_view name = tableOf<decltype(row)>().name;
          std::printf("  %-18.*s %lld rows\n", static_cast<int>(name.size()), name.data(), static_cast<long long>(*n));
        };
        (print(rows), ...);
      },
      EventRows{});
  return status;
}

int runInfo(const ParsedArgs& args) {
  if (args.positional.size() != 1) {
    return reportError("info", Status(ErrorKind::kUsage, "expected one trace file (see gpuscope info --help)"));
  }
  Result<TraceReader> reader = TraceReader::open(args.positional[0]);
  if (!reader) return reportError("info", reader.status());
  std::error_code ec;
  std::printf("%s: gpuscope trace, schema %lld, %.1f MB\n", reader->path().c_str(),
              static_cast<long long>(reader->version()),
              static_cast<double>(std::filesystem::file_size(reader->path(), ec)) / 1e6);
  Result<std::vector<SessionRow>> sessions = reader->readAll<SessionRow>();
  Result<std::vector<DeviceRow>> devices = reader->readAll<DeviceRow>();
  Result<std::vector<DataQualityRow>> quality = reader->readAll<DataQualityRow>();
  Result<std::vector<NvlinkRow>> links = reader->readAll<NvlinkRow>();
  Result<std::vector<EnvironmentRow>> environment = reader->readAll<EnvironmentRow>();
  for (const Status& s : {sessions.isOk() ? Status() : sessions.status(), devices.isOk() ? Status() : devices.status(),
                          quality.isOk() ? Status() : quality.status(), links.isOk() ? Status() : links.status(),
                          environment.isOk() ? Status() : environment.status()}) {
    if (!s) return reportError("info", s);
  }
  for (const DataQualityRow& q : *quality) {  // before anything else: what follows describes a run that failed
    if (q.code == "program_failed" && !q.session_id) std::printf("FAILED RUN: %s\n", q.message.c_str());
  }
  std::printf("processes: %zu\n", sessions->size());
  for (const SessionRow& s : *sessions) printSession(s);
  printGpus(*sessions, *devices);
  printLinks(*devices, *links);
  printEnvironment(*environment);
  if (Status status = printCounts(*reader); !status) return reportError("info", status);
  printQuality(*quality);
  return kExitOk;
}

}  // namespace

const Command& infoCommand() {
  static const Command command{"info",
                               "what a trace holds: processes, GPUs, event counts, data quality",
                               "gpuscope info TRACE",
                               "Prints the processes and GPUs a trace was recorded from, how many events of each "
                               "kind it holds,\nand every data-quality problem the collector noted.",
                               {},
                               runInfo};
  return command;
}

}  // namespace gpuscope::cli
