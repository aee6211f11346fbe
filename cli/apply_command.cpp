// gpuscope apply: runs a program with the advisor's plan applied, by the bundled runtime (CUDA C++ programs
// that ask it, through GPUSCOPE_PLAN) and the PyTorch bridge (Python programs, with no edit), and with
// --record measures the result in the same run.
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <optional>
#include <sstream>
#include <string>

#include "cli/apply_search.h"
#include "cli/command.h"
#include "collector/launcher.h"
#include "formats/plan.h"

namespace gpuscope::cli {

namespace {

constexpr OptionSpec kOptions[] = {
    {"plan", 0, "FILE", "plan.json written by `gpuscope advise --plan`"},
    {"record", 0, "", "record the run too (as `gpuscope record --torch`)"},
    {"output", 'o', "FILE", "with --record: trace file to write (default: gpuscope-PROGRAM.gpuscope)"},
    {"force", 'f', "", "with --record: overwrite the output file if it exists"},
    {"quiet", 'q', "", "with --record: no summary after the program ends"},
    {"no-verify", 0, "", "no run as written first: the results are not compared"},
    {"search-budget", 0, "SECONDS",
     "when the plan as a whole fails, how long to try it fix by fix and write the fixes that pass as a verified plan "
     "(default 600; 0: no search)"},
};

// A fresh folder for the run as written's output and values (kept: its log is the program's output).
Result<std::string> makeWorkDir() {
  const char* tmp = std::getenv("TMPDIR");
  std::string pattern = std::string(tmp && *tmp ? tmp : "/tmp") + "/gpuscope-apply-XXXXXX";
  if (!mkdtemp(pattern.data())) return Status(ErrorKind::kIo, pattern + ": cannot make a folder");
  std::error_code ec;
  std::filesystem::create_directory(pattern + "/values", ec);
  if (ec) return Status(ErrorKind::kIo, pattern + "/values: " + ec.message());
  return pattern;
}

// Why the program cannot be started, or nothing: checked before it runs twice, so that a wrong name is one
// error here and not a line in the run as written's log.
std::optional<std::string> cannotStart(const std::string& program) {
  if (program.find('/') != std::string::npos) {
    if (access(program.c_str(), X_OK) == 0) return std::nullopt;
    return "cannot run '" + program + "': " + std::strerror(errno);
  }
  const char* path = std::getenv("PATH");
  std::stringstream dirs(path ? path : "");
  for (std::string dir; std::getline(dirs, dir, ':');) {
    if (access(((dir.empty() ? "." : dir) + "/" + program).c_str(), X_OK) == 0) return std::nullopt;
  }
  return "cannot run '" + program + "': not found on PATH";
}

// Runs the program as written, for the PyTorch bridge of the run with the plan to compare with
// (GPUSCOPE_VALUES_REF); returns its wait status.
Result<int> runReference(const std::vector<std::string>& command, const std::string& dir) {
  const std::string log = dir + "/as-written.log";
  std::fprintf(stderr,
               "gpuscope apply: running the program as written first, to compare the results with (its "
               "output: %s; --no-verify skips this)\n",
               log.c_str());
  Result<int> status = collector::runAsWritten(command, dir + "/values", log, "");
  if (status) setenv("GPUSCOPE_VALUES_REF", (dir + "/values").c_str(), 1);
  return status;
}

// After the run with the plan: whether the program ended as it did as written.
void sayHowItEnded(int reference, int applied) {
  const int as_written = collector::exitCodeOf(reference), with_plan = collector::exitCodeOf(applied);
  if (as_written == with_plan) {
    std::fprintf(stderr, "gpuscope apply: exit code %d, as the run as written\n", with_plan);
  } else {
    std::fprintf(stderr,
                 "gpuscope apply: exit code %d, the run as written's %d: the plan changed how the program "
                 "ends\n",
                 with_plan, as_written);
  }
}

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
  if (args.has("no-verify") && !args.has("record"))
    return reportError("apply", collector::execWithPlan(command, plan, ""));
  collector::RecordOptions options;
  options.command = command;
  options.output = args.get("output").value_or(defaultOutput(command.front()));
  options.overwrite = args.has("force");
  options.torch = true;
  options.plan = plan;
  // recordProgram refuses an existing output too, but only after the run as written: say it before that run.
  if (args.has("record") && !args.has("no-verify") && std::filesystem::exists(options.output) && !options.overwrite) {
    return reportError("apply",
                       Status(ErrorKind::kUsage, options.output + ": already exists (use --force to overwrite)"));
  }
  Result<double> budget_s = seconds(args, "search-budget", 600);
  if (!budget_s) return reportError("apply", budget_s.status());
  std::optional<int> reference;
  std::string work_dir;
  if (!args.has("no-verify")) {
    if (std::optional<std::string> why = cannotStart(command.front())) {
      return reportError("apply", Status(ErrorKind::kNotFound, *why));
    }
    Result<std::string> dir = makeWorkDir();
    if (!dir) return reportError("apply", dir.status());
    work_dir = *dir;
    Result<int> status = runReference(command, work_dir);
    if (!status) return reportError("apply", status.status());
    if (WIFSIGNALED(*status)) {  // stopped (Ctrl-C, a scheduler's kill): the run with the plan is not started
      std::fprintf(stderr, "gpuscope apply: the run as written ended on signal %d; the plan was not run\n",
                   WTERMSIG(*status));
      collector::exitLike(*status);
    }
    reference = *status;
  }
  auto at_end = [&](int status) {
    if (reference) sayHowItEnded(*reference, status);
  };
  if (args.has("record")) return recordAndReport(options, args.has("quiet"), at_end);
  const std::string outcome_dir = work_dir + "/outcome";
  std::error_code ec;
  if (reference && std::filesystem::create_directory(outcome_dir, ec)) {
    setenv("GPUSCOPE_APPLY_OUTCOME", outcome_dir.c_str(), 1);
  }
  Result<int> status = collector::runWithPlan(command, plan, "");
  if (!status) return reportError("apply", status.status());
  at_end(*status);
  if (reference && *budget_s > 0 && !stoppedFromOutside(*status)) {
    const int as_written = collector::exitCodeOf(*reference);
    const std::string why = whyFailed(readOutcome(outcome_dir), collector::exitCodeOf(*status), as_written);
    if (!why.empty()) searchFixByFix(command, plan, work_dir, as_written, why, *budget_s);
  }
  collector::exitLike(*status);
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
      "checkpointing of the model's blocks, torch.compile and cuDNN's attention switched off (where it\n"
      "compiles for every new shape), and prints on stderr what it applied and what\n"
      "it could not (fixes that need the model's code changed). JAX programs get the plan's XLA allocator\n"
      "variables (XLA_PYTHON_CLIENT_PREALLOCATE) set before they start, said at exit to be applied only where\n"
      "XLA's pool stayed under half of what it reserved when recorded.\n"
      "Verified by default: PROGRAM first runs as written (its output goes to a log, its input is /dev/null),\n"
      "noting the loss of its first 100 backward passes and the outputs and buffers of its models' first 4\n"
      "calls; the run with the plan compares its own with them (the loss as the mean of each window of 10\n"
      "steps), prints what it compared and the largest difference, and then whether the exit code is the\n"
      "same. Each fix states its tolerance, relative, for single values / window means: 0.1 % for fixes\n"
      "that keep the arithmetic (fused optimizer, checkpointing, allocator), 2 % for TF32 and torch.compile,\n"
      "10 % / 5 % for bf16 autocast and for another attention kernel, 10 % for DataLoader workers; a\n"
      "window's mean may also differ by how far the loss moves from one step to the next as written\n"
      "(docs/apply-results.md).\n"
      "The model's calls 5-7 with the fixes are timed against the same calls of the run as written (with\n"
      "--no-verify or --record: against calls 9-10 run as written in the same run), and the fixes rolled\n"
      "back when they are slower or their results differ beyond the tolerance: at the timing check (the\n"
      "model's 8th call, 11th with --no-verify or --record; GPUSCOPE_APPLY_CHECK=0: no check), or, in a\n"
      "single process, at the first later window of 10 steps whose mean loss differs. A compiled model\n"
      "compiles once for each way the program calls it (training or evaluation, with or without gradients):\n"
      "calls with shapes it has not seen run as written, never compiled again in the program's steps.\n"
      "A fix that raises inside the model's forward (a compile or graph-capture error; under autocast, a\n"
      "dtype error) is rolled back there: that call runs again as written, and every later one.\n"
      "--record records the run with the plan as `gpuscope record --torch` would; compare with the first\n"
      "recording using `gpuscope diff`.\n"
      "When the plan as a whole fails (a fix rolled back, results that differ, another exit code), PROGRAM\n"
      "runs again with one finding's fixes at a time, in the plan's order, each on top of those that passed,\n"
      "for up to --search-budget seconds; the fixes that passed are written beside the plan as\n"
      "PLAN.verified.json, each with what its run said of it, and what was dropped is said with why.",
      kOptions,
      runApply};
  return command;
}

}  // namespace gpuscope::cli
