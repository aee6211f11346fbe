// gpuscope import: a PyTorch memory snapshot (JSON) into a trace.
#include <cstdio>

#include "cli/command.h"
#include "formats/trace_import.h"

namespace gpuscope::cli {

namespace {

constexpr OptionSpec kOptions[] = {
    {"output", 'o', "FILE", "the trace to write"},
    {"force", 'f', "", "overwrite the output file if it exists"},
};

int runImport(const ParsedArgs& args) {
  const auto output = args.get("output");
  if (!output || args.positional.size() != 1) {
    return reportError("import", Status(ErrorKind::kUsage, "expected FILE -o TRACE (see gpuscope import --help)"));
  }
  if (Status status = importTrace(args.positional[0], *output, args.has("force")); !status) {
    return reportError("import", status);
  }
  std::fprintf(stderr, "gpuscope import: wrote %s\n", output->c_str());
  return kExitOk;
}

}  // namespace

const Command& importCommand() {
  static const Command command{
      "import",
      "convert a torch.profiler trace or a PyTorch memory snapshot into a trace",
      "gpuscope import FILE -o TRACE [--force]",
      "Reads a torch.profiler (Kineto) Chrome trace (prof.export_chrome_trace(path)): kernels, copies,\n"
      "memsets and CUDA calls with their correlation ids, operators and record_function ranges as NVTX ranges,\n"
      "profile_memory's tensor events and the GPUs; or a PyTorch memory snapshot, pickled\n"
      "(torch.cuda.memory._record_memory_history(), then torch.cuda.memory._dump_snapshot(path)) or as JSON\n"
      "(json.dump(torch.cuda.memory._snapshot(), f)). A pickle is read as plain data, never run.\n"
      "Writes a trace for `gpuscope stats`, `advise`, `export` and the GUI.",
      kOptions,
      runImport};
  return command;
}

}  // namespace gpuscope::cli
