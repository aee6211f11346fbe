// gpuscope merge: several traces (processes, ranks) into one.
#include <cstdio>

#include "cli/command.h"
#include "formats/trace_merge.h"

namespace gpuscope::cli {

namespace {

constexpr OptionSpec kOptions[] = {
    {"output", 'o', "FILE", "the merged trace to write"},
    {"force", 'f', "", "overwrite the output file if it exists"},
};

int runMerge(const ParsedArgs& args) {
  const auto output = args.get("output");
  if (!output || args.positional.empty()) {
    return reportError("merge", Status(ErrorKind::kUsage, "expected TRACE... -o OUTPUT (see gpuscope merge --help)"));
  }
  if (Status status = mergeTraces(args.positional, *output, {.overwrite = args.has("force")}); !status) {
    return reportError("merge", status);
  }
  std::fprintf(stderr, "gpuscope merge: wrote %s from %zu traces\n", output->c_str(), args.positional.size());
  return kExitOk;
}

}  // namespace

const Command& mergeCommand() {
  static const Command command{"merge",
                               "merge per-process or per-rank traces into one",
                               "gpuscope merge TRACE... -o TRACE [--force]",
                               "Combines traces of several processes of one job into one file: each keeps its "
                               "process, rank and\nhost; strings and kernel configurations are shared.",
                               kOptions,
                               runMerge};
  return command;
}

}  // namespace gpuscope::cli
