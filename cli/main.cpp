// gpuscope: the command-line entry point. Dispatches to a subcommand; `--help` works everywhere.
#include <cstdio>
#include <string>
#include <vector>

#include "cli/command.h"
#include "formats/trace_schema.h"

namespace gpuscope::cli {
namespace {

void printGeneralHelp(std::FILE* out) {
  std::fprintf(out,
               "gpuscope %s: GPU profiler, memory analyser and optimization advisor\n\n"
               "usage: gpuscope COMMAND [options]\n\ncommands:\n",
               GPUSCOPE_VERSION);
  for (const Command& c : allCommands()) {
    std::fprintf(out, "  %-8.*s %.*s\n", static_cast<int>(c.name.size()), c.name.data(),
                 static_cast<int>(c.summary.size()), c.summary.data());
  }
  std::fprintf(out,
               "\n`gpuscope COMMAND --help` describes a command. Exit status: 0 success, 1 failure, 2 usage error.\n"
               "Traces are SQLite files: `sqlite3 run.gpuscope` opens one (schema in docs/schema.md).\n");
}

void printCommandHelp(const Command& c) {
  std::printf("usage: %.*s\n\n%.*s\n", static_cast<int>(c.usage.size()), c.usage.data(),
              static_cast<int>(c.description.size()), c.description.data());
  std::vector<OptionSpec> options(c.options.begin(), c.options.end());
  options.push_back({"help", 'h', "", "show this help"});
  std::printf("\noptions:\n%s", formatOptions(options).c_str());
}

bool wantsHelp(const std::vector<std::string>& args) {
  for (const std::string& a : args) {
    if (a == "--") return false;  // the profiled program's own --help
    if (a == "--help" || a == "-h") return true;
  }
  return false;
}

int runCommand(const Command& command, const std::vector<std::string>& args) {
  if (wantsHelp(args)) {
    printCommandHelp(command);
    return kExitOk;
  }
  Result<ParsedArgs> parsed = parseArgs(args, command.options);
  if (!parsed) {
    return reportError(command.name, Status(ErrorKind::kUsage, parsed.status().message() + " (see gpuscope " +
                                                                   std::string(command.name) + " --help)"));
  }
  return command.run(*parsed);
}

}  // namespace
}  // namespace gpuscope::cli

int main(int argc, char** argv) {
  using namespace gpuscope::cli;
  std::vector<std::string> args(argv + 1, argv + argc);
  if (args.empty()) {
    printGeneralHelp(stderr);
    return kExitUsage;
  }
  const std::string& first = args.front();
  if (first == "--help" || first == "-h" || first == "help") {
    printGeneralHelp(stdout);
    return kExitOk;
  }
  if (first == "--version" || first == "-V") {
    std::printf("gpuscope %s (trace schema %lld)\n", GPUSCOPE_VERSION,
                static_cast<long long>(gpuscope::schema::kSchemaVersion));
    return kExitOk;
  }
  const Command* command = findCommand(first);
  if (!command) {
    std::fprintf(stderr, "gpuscope: unknown command '%s' (see gpuscope --help)\n", first.c_str());
    return kExitUsage;
  }
  args.erase(args.begin());
  return runCommand(*command, args);
}
