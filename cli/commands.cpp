// The command table: the built commands come from their own files; the ones not built yet are described
// here with what they will do, so `--help` already documents the whole tool.
#include <cstdio>
#include <vector>

#include "cli/command.h"

namespace gpuscope::cli {

namespace {

constexpr OptionSpec kRecordOptions[] = {
    {"output", 'o', "FILE", "trace file to write (default: gpuscope-<program>.gpuscope)"},
    {"trace", 0, "LIST", "what to record: cuda,nvtx,memory,osrt (default: cuda,nvtx,memory)"},
    {"delay", 0, "SECONDS", "start recording after this many seconds"},
    {"duration", 0, "SECONDS", "stop recording after this many seconds"},
    {"capture-range", 0, "NVTX", "record only inside NVTX ranges with this name"},
    {"force", 'f', "", "overwrite the output file if it exists"},
};
constexpr OptionSpec kStatsOptions[] = {{"format", 0, "table|csv|json", "output format (default: table)"}};
constexpr OptionSpec kAdviseOptions[] = {
    {"format", 0, "text|md|html|json", "report format (default: text)"},
    {"plan", 0, "FILE", "also write the fixes as plan.json for `gpuscope apply`"},
    {"fail-on", 0, "SEVERITY", "exit non-zero if a finding of this severity or worse exists"},
};
constexpr OptionSpec kOutputOptions[] = {
    {"output", 'o', "FILE", "file to write"},
    {"force", 'f', "", "overwrite the output file if it exists"},
};
constexpr OptionSpec kApplyOptions[] = {{"plan", 0, "FILE", "plan.json written by `gpuscope advise --plan`"}};

const Command kNotBuilt[] = {
    {"record", "profile a CUDA program (C++, PyTorch, JAX, CuPy) without changing it",
     "gpuscope record [options] -- PROGRAM [ARGS...]",
     "Runs PROGRAM with the gpuscope collector injected through CUDA_INJECTION64_PATH and writes one trace for\n"
     "the run: kernels, copies, API calls, synchronisation, allocations and NVTX ranges of every process.",
     kRecordOptions, nullptr, "the CUPTI collector is the next piece of work (issue #3)"},
    {"stats", "per-kernel, per-API and memory summaries of a trace", "gpuscope stats TRACE [options]",
     "Prints nsys-stats-like summaries: time per kernel, copy and API call, GPU idle time, peak memory.", kStatsOptions,
     nullptr, "it comes with the analyzer (issue #4)"},
    {"advise", "find what makes the program slow or short of memory, with the fix", "gpuscope advise TRACE [options]",
     "Runs the advisor's rules over a trace and reports each finding with its evidence, the estimated gain\n"
     "and the fix.",
     kAdviseOptions, nullptr, "it comes with the advisor (issue #5)"},
    {"import", "convert a torch.profiler trace or PyTorch memory snapshot into a trace",
     "gpuscope import FILE -o TRACE", "Reads a torch.profiler Chrome trace (JSON) or a PyTorch memory snapshot.",
     kOutputOptions, nullptr, "it comes with the PyTorch support (issue #7)"},
    {"diff",
     "compare two traces (before and after a change)",
     "gpuscope diff BEFORE AFTER",
     "Shows what changed between two runs: time per kernel class, iteration time, peak memory.",
     {},
     nullptr,
     "it comes with the analyzer (issue #4)"},
    {"merge", "merge per-process or per-rank traces into one", "gpuscope merge TRACE... -o TRACE",
     "Combines traces of several processes of one job into one file, keeping process, rank and host.", kOutputOptions,
     nullptr, "it comes with the collector's multi-process support (issue #3)"},
    {"apply", "apply the advisor's plan to a program and measure again", "gpuscope apply --plan FILE -- PROGRAM",
     "Runs PROGRAM with the fixes of plan.json applied by the bundled runtime, then records it again to\n"
     "show the gain.",
     kApplyOptions, nullptr, "it comes with the runtime (issue #6)"},
};

}  // namespace

std::span<const Command> allCommands() {
  static const std::vector<Command> commands = [] {
    std::vector<Command> all{kNotBuilt[0], kNotBuilt[1], kNotBuilt[2], exportCommand(), kNotBuilt[3],
                             kNotBuilt[4], kNotBuilt[5], kNotBuilt[6], infoCommand()};
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
