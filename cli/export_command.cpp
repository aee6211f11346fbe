// gpuscope export: a trace as Chrome Trace Event JSON.
#include <cstdio>
#include <filesystem>

#include <map>

#include "analyzer/iterations.h"
#include "analyzer/trace_data.h"
#include "cli/command.h"
#include "cli/progress_bar.h"
#include "formats/chrome_export.h"

namespace gpuscope::cli {

namespace {

constexpr OptionSpec kOptions[] = {
    {"format", 0, "chrome", "output format; chrome (Chrome Trace Event JSON, Kineto's fields) is the only one"},
    {"output", 'o', "FILE", "file to write (default: TRACE with .json instead of .gpuscope)"},
    {"force", 'f', "", "overwrite the output file if it exists"},
    {"quiet", 'q', "", "no progress bar and no summary line"},
    {"per-rank", 0, "",
     "one file per rank of a job, rank-N.json in the folder -o names (default: TRACE's name with -ranks), as "
     "torch.profiler writes them and Holistic Trace Analysis reads them"},
};

// Correlation ids in per-rank files start here: HTA narrows ids to 16 bits when all are below 32,768.
constexpr int64_t kPerRankCorrelationOffset = 1'000'000;

std::string defaultOutput(const std::string& trace, bool per_rank) {
  std::filesystem::path p(trace);
  if (p.extension() == ".gpuscope") p.replace_extension();
  return p.string() + (per_rank ? "-ranks" : ".json");
}

// Each process's steady and warm-up steps as the analyzer finds them, on the thread that launched most of the
// process's kernels.
std::vector<StepSpan> findSteps(const analysis::TraceData& t) {
  std::vector<StepSpan> steps;
  for (size_t s = 0; s < t.sessions.size(); ++s) {
    std::map<int64_t, int64_t> launches;  // thread -> kernels it launched
    for (size_t k = 0; k < t.kernels.size(); ++k) {
      const int32_t call = t.kernels.launch_call[k];
      if (t.kernels.session[k] == static_cast<int32_t>(s) && call != analysis::kNone) {
        ++launches[t.api_calls.thread_id[call]];
      }
    }
    if (launches.empty()) continue;
    const auto thread = std::max_element(launches.begin(), launches.end(),
                                         [](const auto& a, const auto& b) { return a.second < b.second; });
    const analysis::Iterations it = analysis::findIterations(t, static_cast<int32_t>(s));
    for (const analysis::Iteration& i : it.list) {
      steps.push_back({t.sessions[s].id, thread->first, i.start_ns, std::max(i.end_ns, i.gpu_end_ns)});
    }
  }
  return steps;
}

// One file per process that gave a rank, each with only its own events.
Status exportRanks(TraceReader& reader, const std::string& folder, bool overwrite, ChromeExportOptions options,
                   const std::vector<schema::SessionRow>& sessions) {
  std::error_code ec;
  std::filesystem::create_directories(folder, ec);
  if (ec) return Status(ErrorKind::kIo, folder + ": cannot make the folder: " + ec.message());
  options.correlation_offset = kPerRankCorrelationOffset;
  int ranks = 0;
  for (const schema::SessionRow& s : sessions) {
    if (!s.rank) continue;
    ++ranks;
    options.session_id = s.id;
    const std::string path = folder + "/rank-" + std::to_string(*s.rank) + ".json";
    GPUSCOPE_RETURN_IF_ERROR(exportChromeTrace(reader, path, overwrite, options));
  }
  if (ranks == 0) {
    return Status(ErrorKind::kEmpty, reader.path() + ": no process in the trace gave a rank; export it to one file");
  }
  return Status::ok();
}

int runExport(const ParsedArgs& args) {
  if (args.positional.size() != 1) {
    return reportError("export", Status(ErrorKind::kUsage, "expected one trace file (see gpuscope export --help)"));
  }
  const std::string format = args.get("format").value_or("chrome");
  if (format != "chrome") {
    return reportError("export", Status(ErrorKind::kUsage, "unknown format '" + format + "' (only 'chrome')"));
  }
  const std::string& trace = args.positional[0];
  const bool per_rank = args.has("per-rank");
  const std::string output = args.get("output").value_or(defaultOutput(trace, per_rank));
  Result<TraceReader> reader = TraceReader::open(trace);
  if (!reader) return reportError("export", reader.status());
  Result<analysis::TraceData> data = analysis::loadTrace(trace);
  if (!data) return reportError("export", data.status());

  ProgressBar progress("exporting", !args.has("quiet"));
  ChromeExportOptions options;
  options.progress = [&](int64_t done, int64_t total) { progress.update(done, total); };
  options.steps = findSteps(*data);
  const Status status = per_rank ? exportRanks(*reader, output, args.has("force"), options, data->sessions)
                                 : exportChromeTrace(*reader, output, args.has("force"), options);
  if (!status) return reportError("export", status);
  if (!args.has("quiet")) {
    std::error_code ec;
    uintmax_t bytes = 0;
    for (const auto& f :
         per_rank ? std::filesystem::directory_iterator(output, ec) : std::filesystem::directory_iterator()) {
      bytes += f.file_size(ec);
    }
    if (!per_rank) bytes = std::filesystem::file_size(output, ec);
    std::fprintf(stderr,
                 "gpuscope export: wrote %s (%.1f MB); open it in Perfetto (ui.perfetto.dev), "
                 "chrome://tracing or Holistic Trace Analysis\n",
                 output.c_str(), static_cast<double>(bytes) / 1e6);
  }
  return kExitOk;
}

}  // namespace

const Command& exportCommand() {
  static const Command command{
      "export",
      "write a trace as Chrome Trace Event JSON (Perfetto, chrome://tracing, HTA, TensorBoard)",
      "gpuscope export TRACE [--format chrome] [-o FILE] [--force] [--per-rank]",
      "Streams every kernel, copy, memset, API call, synchronisation, NVTX range and memory counter of TRACE\n"
      "as Chrome Trace Event JSON with Kineto's categories and argument names, and an arrow (flow event) from\n"
      "each API call to the GPU work it launched, and each step the analyzer finds as torch.profiler's\n"
      "ProfilerStep#N range. The output appears only when complete. With --per-rank, one file per rank of a job\n"
      "(rank-N.json, with torch's distributedInfo), which Holistic Trace Analysis reads as a folder.",
      kOptions,
      runExport};
  return command;
}

}  // namespace gpuscope::cli
