// The command table: the built commands come from their own files; the ones not built yet are described
// here with what they will do, so `--help` already documents the whole tool.
#include <cstdio>
#include <vector>

#include "cli/command.h"

namespace gpuscope::cli {

namespace {

constexpr OptionSpec kApplyOptions[] = {{"plan", 0, "FILE", "plan.json written by `gpuscope advise --plan`"}};

const Command kNotBuilt[] = {
    {"apply", "apply the advisor's plan to a program and measure again", "gpuscope apply --plan FILE -- PROGRAM",
     "Runs PROGRAM with the fixes of plan.json applied by the bundled runtime, then records it again to\n"
     "show the gain.",
     kApplyOptions, nullptr, "it comes with the runtime (issue #6)"},
};

}  // namespace

std::span<const Command> allCommands() {
  static const std::vector<Command> commands = [] {
    // apply is not built yet.
    std::vector<Command> all{recordCommand(), statsCommand(), adviseCommand(), exportCommand(), importCommand(),
                             diffCommand(),   mergeCommand(), kNotBuilt[0],    infoCommand()};
    return all;
  }();
  return commands;
}

const Command* findCommand(std::string_view name) {
  for (const Command& c : allCommands()) {
    if (c.name == name) return &c;
  }
  return nullptr;
}

int reportError(std::string_view command, const Status& status) {
  std::fprintf(stderr, "gpuscope %.*s: %s\n", static_cast<int>(command.size()), command.data(),
               status.message().c_str());
  return status.kind() == ErrorKind::kUsage ? kExitUsage : kExitFailure;
}

}  // namespace gpuscope::cli
