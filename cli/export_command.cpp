// gpuscope export: a trace as Chrome Trace Event JSON.
#include <cstdio>
#include <filesystem>

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
};

std::string defaultOutput(const std::string& trace) {
  std::filesystem::path p(trace);
  if (p.extension() == ".gpuscope") p.replace_extension();
  return p.string() + ".json";
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
  const std::string output = args.get("output").value_or(defaultOutput(trace));
  Result<TraceReader> reader = TraceReader::open(trace);
  if (!reader) return reportError("export", reader.status());

  ProgressBar progress("exporting", !args.has("quiet"));
  ChromeExportOptions options;
  options.progress = [&](int64_t done, int64_t total) { progress.update(done, total); };
  if (Status status = exportChromeTrace(*reader, output, args.has("force"), options); !status) {
    return reportError("export", status);
  }
  if (!args.has("quiet")) {
    std::error_code ec;
    const auto bytes = std::filesystem::file_size(output, ec);
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
      "gpuscope export TRACE [--format chrome] [-o FILE] [--force]",
      "Streams every kernel, copy, memset, API call, synchronisation, NVTX range and memory counter of TRACE\n"
      "as Chrome Trace Event JSON with Kineto's categories and argument names, and an arrow (flow event) from\n"
      "each API call to the GPU work it launched. The output appears only when complete.",
      kOptions,
      runExport};
  return command;
}

}  // namespace gpuscope::cli
