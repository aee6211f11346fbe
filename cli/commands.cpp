// The command table: every command comes from its own file.
#include <cstdio>
#include <vector>

#include "cli/command.h"

namespace gpuscope::cli {

std::span<const Command> allCommands() {
  static const std::vector<Command> commands = [] {
    std::vector<Command> all{recordCommand(), statsCommand(), adviseCommand(), exportCommand(), importCommand(),
                             diffCommand(),   mergeCommand(), applyCommand(),  infoCommand()};
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
