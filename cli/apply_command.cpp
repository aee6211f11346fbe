// gpuscope apply: runs a program with the advisor's plan applied, by the bundled runtime (CUDA C++ programs
// that ask it, through GPUSCOPE_PLAN) and the PyTorch bridge (Python programs, with no edit), and with
// --record measures the result in the same run.
#include <filesystem>

#include "cli/command.h"
#include "formats/plan.h"

namespace gpuscope::cli {

namespace {

constexpr OptionSpec kOptions[] = {
    {"plan", 0, "FILE", "plan.json written by `gpuscope advise --plan`"},
    {"record", 0, "", "record the run too (as `gpuscope record --torch`)"},
    {"output", 'o', "FILE", "with --record: trace file to write (default: gpuscope-PROGRAM.gpuscope)"},
    {"force", 'f', "", "with --record: overwrite the output file if it exists"},
    {"quiet", 'q', "", "with --record: no summary after the program ends"},
};

int runApply(const ParsedArgs& args) {
  const std::vector<std::string>& command = args.after_separator;
  const auto plan_path = args.get("plan");
  if (!plan_path || !args.has_separator || command.empty() || !args.positional.empty()) {
    return reportError(
        "apply", Status(ErrorKind::kUsage, "expected --plan FILE -- PROGRAM [ARGS...] (see gpuscope apply --help)"));
  }
  // Checked here, so a broken plan is one clear error before the program starts.
  if (Result<plan::Plan> p = plan::readPlan(*plan_path); !p) return reportError("apply", p.status());
  const std::string plan = std::filesystem::absolute(*plan_path).string();
  if (!args.has("record")) return reportError("apply", collector::execWithPlan(command, plan, ""));
  collector::RecordOptions options;
  options.command = command;
  options.output = args.get("output").value_or(defaultOutput(command.front()));
  options.overwrite = args.has("force");
  options.torch = true;
  options.plan = plan;
  return recordAndReport(options, args.has("quiet"));
}

}  // namespace

const Command& applyCommand() {
  static const Command command{
      "apply",
      "run a program with the advisor's plan applied, and measure it again",
      "gpuscope apply --plan FILE [--record [-o TRACE]] -- PROGRAM [ARGS...]",
      "Runs PROGRAM with plan.json's fixes applied, with no change to it: CUDA C++ programs built on\n"
      "gpuscope's runtime read the plan from GPUSCOPE_PLAN; PyTorch programs get the bridge, which applies\n"
      "bf16 autocast or TF32, fused optimizers, allocator settings, DataLoader workers, activation\n"
      "checkpointing of the model's blocks and torch.compile, and prints on stderr what it applied and what\n"
      "it could not (fixes that need the model's code changed). The model's fixes are timed against the\n"
      "model as written in the same run and rolled back when slower (GPUSCOPE_APPLY_CHECK=0: no check).\n"
      "--record records the run as `gpuscope record --torch` would; compare with the first recording\n"
      "using `gpuscope diff`.",
      kOptions,
      runApply};
  return command;
}

}  // namespace gpuscope::cli
