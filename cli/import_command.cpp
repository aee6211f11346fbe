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
      "convert a PyTorch memory snapshot into a trace",
      "gpuscope import FILE -o TRACE [--force]",
      "Reads a PyTorch memory snapshot saved as JSON (torch.cuda.memory._record_memory_history(), then\n"
      "json.dump(torch.cuda.memory._snapshot(), f)) and writes a trace holding the caching allocator's events,\n"
      "for `gpuscope stats` and `advise`. torch.profiler (Chrome/Kineto) traces are not read yet.",
      kOptions,
      runImport};
  return command;
}

}  // namespace gpuscope::cli
