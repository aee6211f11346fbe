// The gpuscope subcommands: each has a usage line, a description, its options and a run function.
#pragma once

#include <functional>
#include <span>
#include <string>
#include <string_view>

#include "cli/arg_parser.h"
#include "collector/launcher.h"
#include "formats/status.h"

namespace gpuscope::cli {

// Exit statuses of the gpuscope CLI (the profiled program's own status is passed through by `record`).
inline constexpr int kExitOk = 0;
inline constexpr int kExitFailure = 1;
inline constexpr int kExitUsage = 2;

struct Command {
  std::string_view name;
  std::string_view summary;      // one line for `gpuscope --help`
  std::string_view usage;        // e.g. "gpuscope export TRACE [options]"
  std::string_view description;  // what it does, for `gpuscope CMD --help`
  std::span<const OptionSpec> options;
  int (*run)(const ParsedArgs& args) = nullptr;
};

std::span<const Command> allCommands();
const Command* findCommand(std::string_view name);

// Prints "gpuscope CMD: message" on stderr and returns the exit status for the error's kind.
int reportError(std::string_view command, const Status& status);

// `record` and `apply --record`: runs the program under the collector, prints the summary (unless quiet),
// calls at_end with the program's wait status, and ends gpuscope the way the program ended; returns only when
// the program could not be recorded.
int recordAndReport(const collector::RecordOptions& options, bool quiet,
                    const std::function<void(int wait_status)>& at_end = {});
// gpuscope-PROGRAM.gpuscope
std::string defaultOutput(const std::string& program);
// The option's non-negative number of seconds (ABSENT where it is not given), or a usage error naming the option.
Result<double> seconds(const ParsedArgs& args, const char* option, double absent = 0);

// Commands defined in their own files.
const Command& adviseCommand();
const Command& exportCommand();
const Command& importCommand();
const Command& applyCommand();
const Command& mergeCommand();
const Command& recordCommand();
const Command& infoCommand();
const Command& statsCommand();
const Command& diffCommand();

}  // namespace gpuscope::cli
