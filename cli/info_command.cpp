// gpuscope info: what a trace holds — processes, GPUs, event counts and data-quality warnings.
#include <cstdio>
#include <filesystem>

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
  std::printf("  pid %lld on %s", static_cast<long long>(s.pid), s.hostname.c_str());
  if (s.rank) std::printf(", rank %lld", static_cast<long long>(*s.rank));
  std::printf(": %s\n", s.command_line.c_str());
  std::printf("    CUDA driver %s, runtime %s, CUPTI API %s, gpuscope %s", versionText(s.cuda_driver_version).c_str(),
              versionText(s.cuda_runtime_version).c_str(),
              s.cupti_version ? std::to_string(*s.cupti_version).c_str() : "unknown", s.gpuscope_version.c_str());
  if (s.end_ns) std::printf(", recorded for %.3f s", static_cast<double>(*s.end_ns - s.start_ns) / 1e9);
  std::printf("\n");
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
  for (const Status& s : {sessions.isOk() ? Status() : sessions.status(), devices.isOk() ? Status() : devices.status(),
                          quality.isOk() ? Status() : quality.status()}) {
    if (!s) return reportError("info", s);
  }
  std::printf("processes: %zu\n", sessions->size());
  for (const SessionRow& s : *sessions) printSession(s);
  std::printf("GPUs: %zu\n", devices->size());
  for (const DeviceRow& d : *devices) {
    std::printf("  GPU %lld: %s, sm_%lld%lld, %lld SMs, %.1f GiB\n", static_cast<long long>(d.device_id),
                d.name.c_str(), static_cast<long long>(d.compute_major), static_cast<long long>(d.compute_minor),
                static_cast<long long>(d.sm_count), static_cast<double>(d.global_memory_bytes) / (1 << 30));
  }
  if (Status status = printCounts(*reader); !status) return reportError("info", status);
  std::printf("data quality:%s\n", quality->empty() ? " no problems recorded" : "");
  for (const DataQualityRow& q : *quality) {
    std::printf("  %s %s (%lld): %s\n", std::string(enumName(q.severity)).c_str(), q.code.c_str(),
                static_cast<long long>(q.count), q.message.c_str());
  }
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
