// gpuscope import: a torch.profiler trace, a folder of them (one per rank), or a PyTorch memory snapshot into a
// trace.
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
    return reportError("import",
                       Status(ErrorKind::kUsage, "expected FILE or FOLDER -o TRACE (see gpuscope import --help)"));
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
      "convert a torch.profiler trace (or a folder of them, one per rank) or a PyTorch memory snapshot into a trace",
      "gpuscope import FILE|FOLDER -o TRACE [--force]",
      "Reads a torch.profiler (Kineto) Chrome trace (prof.export_chrome_trace(path), or the .json.gz that\n"
      "tensorboard_trace_handler writes): kernels, copies,\n"
      "memsets and CUDA calls with their correlation ids, operators and record_function ranges as NVTX ranges,\n"
      "profile_memory's tensor events and the GPUs; or a PyTorch memory snapshot, pickled\n"
      "(torch.cuda.memory._record_memory_history(), then torch.cuda.memory._dump_snapshot(path)) or as JSON\n"
      "(json.dump(torch.cuda.memory._snapshot(), f)). A pickle is read as plain data, never run.\n"
      "A FOLDER of such traces, one per rank of a job (each with torch.distributed's rank in it), is imported as\n"
      "one job: `gpuscope stats` shows its ranks, `advise` the rank the others wait for.\n"
      "Writes a trace for `gpuscope stats`, `advise`, `export` and the GUI.",
      kOptions,
      runImport};
  return command;
}

}  // namespace gpuscope::cli
