#include "collector/launcher.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <functional>
#include <optional>

#include "collector/capture_gate.h"
#include "collector/program_exit.h"
#include "formats/trace_merge.h"

namespace gpuscope::collector {

namespace fs = std::filesystem;

namespace {

std::atomic<pid_t> g_child{0};

// Signals sent to gpuscope by another process (kill, timeout, a job scheduler) are passed to the program.
// Those the kernel sends on behalf of the terminal (Ctrl-C, Ctrl-\) are not: the program, in the same
// foreground process group, already received its own.
void forwardSignal(int sig, siginfo_t* info, void*) {
  const pid_t child = g_child.load();
  if (child > 0 && info && info->si_code <= 0) kill(child, sig);
}

constexpr int kForwardedSignals[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2};

void installForwarding() {
  struct sigaction action {};
  action.sa_sigaction = forwardSignal;
  action.sa_flags = SA_SIGINFO | SA_RESTART;
  sigemptyset(&action.sa_mask);
  for (int sig : kForwardedSignals) sigaction(sig, &action, nullptr);
}

void restoreDefaults() {
  for (int sig : kForwardedSignals) signal(sig, SIG_DFL);
}

// Held back from fork until the child's pid is known, so that a signal arriving in between is forwarded
// once unblocked, never lost.
void blockForwarded(int how) {
  sigset_t set;
  sigemptyset(&set);
  for (int sig : kForwardedSignals) sigaddset(&set, sig);
  sigprocmask(how, &set, nullptr);
}

// Replaces this process with the program (returns only when it cannot be run, with errno set).
void execCommand(const std::vector<std::string>& command) {
  std::vector<char*> argv;
  for (const std::string& arg : command) argv.push_back(const_cast<char*>(arg.c_str()));
  argv.push_back(nullptr);
  execvp(argv[0], argv.data());
}

// PYTHONPATH with the bridge's bootstrap (its sitecustomize) and package first, the program's own after;
// modes: "record", "apply", "values" (the run as written of `gpuscope apply`) or "record,apply".
void addPythonPath(const std::string& python_dir) {
  std::string path = python_dir + "/bootstrap:" + python_dir;
  if (const char* old = std::getenv("PYTHONPATH"); old && *old) path += std::string(":") + old;
  setenv("PYTHONPATH", path.c_str(), 1);
}

void addPythonBridge(const std::string& python_dir, const char* modes, const std::string& plan) {
  addPythonPath(python_dir);
  setenv("GPUSCOPE_TORCH", modes, 1);
  if (!plan.empty()) setenv("GPUSCOPE_PLAN", plan.c_str(), 1);
}

// The bridge's folder, absolute, or why it cannot be used.
Result<std::string> bridgeFolder(const std::string& asked) {
  std::error_code ec;
  std::string dir = fs::weakly_canonical(asked.empty() ? defaultPythonDir() : asked, ec).string();
  if (ec || !fs::exists(dir + "/bootstrap/sitecustomize.py", ec)) {
    return Status(ErrorKind::kNotFound, (dir.empty() ? asked : dir) +
                                            ": the PyTorch bridge is missing (set GPUSCOPE_PYTHON_DIR to gpuscope's "
                                            "advisor/runtime/python)");
  }
  return dir;
}

// The bridge's folder for running command under it, or why it cannot run (no command, no bridge): what every
// way of running a program under `gpuscope apply` checks first.
Result<std::string> bridgeFor(const std::vector<std::string>& command, const std::string& python_dir) {
  if (command.empty()) return Status(ErrorKind::kUsage, "no program to run (give it after --)");
  return bridgeFolder(python_dir);
}

// In a child that could not run the program: says why and ends with the shell's code for it.
[[noreturn]] void cannotRun(const char* who, const std::string& program) {
  const int err = errno;
  std::fprintf(stderr, "gpuscope %s: cannot run '%s': %s\n", who, program.c_str(), std::strerror(err));
  _exit(err == ENOENT ? 127 : 126);  // the shell's codes for "not found" and "not executable"
}

int waitFor(pid_t child) {
  int status = 0;
  while (waitpid(child, &status, 0) < 0) {
    if (errno != EINTR) return 0;
  }
  return status;
}

// Runs start_program in a child process (it sets the child up and replaces it with the program), passing
// the signals sent to gpuscope on to it; returns its wait status.
Result<int> runChild(const std::function<void()>& start_program) {
  installForwarding();
  blockForwarded(SIG_BLOCK);
  const pid_t child = fork();
  if (child == 0) {
    restoreDefaults();
    blockForwarded(SIG_UNBLOCK);
    start_program();
    _exit(126);
  }
  if (child > 0) g_child = child;
  blockForwarded(SIG_UNBLOCK);
  if (child < 0) return Status(ErrorKind::kIo, std::string("cannot start the program: ") + std::strerror(errno));
  const int status = waitFor(child);
  g_child = 0;
  restoreDefaults();
  return status;
}

bool hasTimeWindow(const RecordOptions& options) { return options.delay_s > 0 || options.duration_s > 0; }

// The --delay/--duration window in CUPTI's clock (CLOCK_REALTIME, as start_ns is); INT64_MAX: no end.
TimeWindow timeWindow(const RecordOptions& options, int64_t start_ns) {
  const int64_t from = start_ns + static_cast<int64_t>(options.delay_s * 1e9);
  return {from, options.duration_s > 0 ? from + static_cast<int64_t>(options.duration_s * 1e9) : INT64_MAX};
}

// The collector's capture gate (collector/capture_gate.h): the range, and the window ("from,to", to 0: no end).
void setCaptureEnvironment(const RecordOptions& options, int64_t start_ns) {
  if (!options.capture_range.empty()) setenv("GPUSCOPE_CAPTURE_RANGE", options.capture_range.c_str(), 1);
  if (!hasTimeWindow(options)) return;
  const TimeWindow w = timeWindow(options, start_ns);
  const int64_t to = w.end_ns == INT64_MAX ? 0 : w.end_ns;
  setenv("GPUSCOPE_CAPTURE_WINDOW_NS", (std::to_string(w.start_ns) + "," + std::to_string(to)).c_str(), 1);
}

[[noreturn]] void execProgram(const RecordOptions& options, const std::string& collector, const std::string& parts,
                              int64_t start_ns) {
  setCaptureEnvironment(options, start_ns);
  setenv("CUDA_INJECTION64_PATH", collector.c_str(), 1);
  setenv("NVTX_INJECTION64_PATH", collector.c_str(), 1);
  setenv("GPUSCOPE_OUTPUT_DIR", parts.c_str(), 1);
  setenv("GPUSCOPE_TRACE", options.trace.c_str(), 1);
  setenv("GPUSCOPE_CUDA_GRAPH_TRACE", options.cuda_graph_trace.c_str(), 1);
  // NCCL's sizes, algorithms and protocols come from its profiler plugin interface (collector/nccl_profiler.h);
  // a plugin the user chose stays theirs.
  setenv("NCCL_PROFILER_PLUGIN", collector.c_str(), 0);
  if (options.torch) {
    addPythonBridge(options.python_dir, options.plan.empty() ? "record" : "record,apply", options.plan);
    if (!options.torch_steps.empty()) setenv("GPUSCOPE_TORCH_STEPS", options.torch_steps.c_str(), 1);
  }
  // The CuPy and JAX bridges need the bootstrap on the path, which the PyTorch bridge has put there already.
  if ((options.cupy || options.jax) && !options.torch) addPythonPath(options.python_dir);
  if (options.cupy) setenv("GPUSCOPE_CUPY", "record", 1);
  if (options.jax) setenv("GPUSCOPE_JAX", "record", 1);
  execCommand(options.command);
  cannotRun("record", options.command.front());
}

std::vector<std::string> partsIn(const std::string& dir) {
  std::vector<std::string> parts;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    if (entry.path().extension() == ".gpuscope") parts.push_back(entry.path().string());
  }
  std::sort(parts.begin(), parts.end());
  return parts;
}

int64_t realtimeNs() {
  timespec ts{};
  clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

std::string secondsText(double s) {
  char text[32];
  std::snprintf(text, sizeof text, "%g s", s);
  return text;
}

// The merge options that narrow the recording as asked (CUPTI's clock is CLOCK_REALTIME, as start_ns is).
Result<MergeOptions> windowsFor(const RecordOptions& options, const std::vector<std::string>& parts, int64_t start_ns) {
  MergeOptions merge{.overwrite = options.overwrite};
  const bool timed = hasTimeWindow(options);
  const TimeWindow span = timeWindow(options, start_ns);
  if (timed) {
    merge.windows = {span};
    merge.window_note = "only events from " + secondsText(options.delay_s) + " after the start" +
                        (options.duration_s > 0 ? " for " + secondsText(options.duration_s) : "") + " were kept";
  }
  if (options.capture_range.empty() || options.capture_range == CaptureGate::kProfilerApi) return merge;
  Result<std::vector<TimeWindow>> ranges = nvtxRangeWindows(parts, options.capture_range);
  if (!ranges) return ranges.status();
  merge.windows.clear();
  for (const TimeWindow& r : *ranges) {
    const TimeWindow w{std::max(r.start_ns, span.start_ns), std::min(r.end_ns, span.end_ns)};
    if (!timed || w.start_ns <= w.end_ns) merge.windows.push_back(timed ? w : r);
  }
  if (merge.windows.empty()) {
    return Status(ErrorKind::kEmpty, "no NVTX range named '" + options.capture_range + "' was recorded" +
                                         (timed ? " inside the --delay/--duration window" : ""));
  }
  merge.window_note = "only events inside the " + std::to_string(merge.windows.size()) + " NVTX ranges named '" +
                      options.capture_range + "' were kept" + (timed ? ", within the --delay/--duration window" : "");
  return merge;
}

Result<std::string> makePartsDir(const std::string& output) {
  std::string pattern = output + ".parts-XXXXXX";
  if (!mkdtemp(pattern.data())) {
    return Status(ErrorKind::kIo, output + ": cannot create a folder beside it: " + std::strerror(errno));
  }
  return fs::absolute(pattern).string();
}

}  // namespace

namespace {

// <prefix>/<relative>, where the running gpuscope is <prefix>/bin/gpuscope.
std::string besideExecutable(const char* relative) {
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  return (exe.parent_path().parent_path() / relative).string();
}

}  // namespace

std::string defaultCollectorPath() {
  if (const char* path = std::getenv("GPUSCOPE_COLLECTOR"); path && *path) return path;
  return besideExecutable("lib/libgpuscope_collector.so");
}

Status execWithPlan(const std::vector<std::string>& command, const std::string& plan, const std::string& python_dir) {
  Result<std::string> dir = bridgeFor(command, python_dir);
  if (!dir) return dir.status();
  addPythonBridge(*dir, "apply", plan);
  execCommand(command);
  return Status(errno == ENOENT ? ErrorKind::kNotFound : ErrorKind::kIo,
                "cannot run '" + command.front() + "': " + std::strerror(errno));
}

namespace {

// In a child just forked: its output to the open file OUT, its input /dev/null (the run with the plan's).
void outputTo(int out) {
  const int nothing = open("/dev/null", O_RDONLY);
  if (nothing >= 0) dup2(nothing, STDIN_FILENO);
  dup2(out, STDOUT_FILENO);
  dup2(out, STDERR_FILENO);
}

}  // namespace

Result<int> runWithPlan(const std::vector<std::string>& command, const std::string& plan, const std::string& python_dir,
                        const std::string& log) {
  Result<std::string> dir = bridgeFor(command, python_dir);
  if (!dir) return dir.status();
  const int out = log.empty() ? -1 : open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (!log.empty() && out < 0) return Status(ErrorKind::kIo, log + ": cannot write: " + std::strerror(errno));
  Result<int> status = runChild([&] {
    if (out >= 0) outputTo(out);
    addPythonBridge(*dir, "apply", plan);
    execCommand(command);
    cannotRun("apply", command.front());
  });
  if (out >= 0) close(out);
  return status;
}

Result<int> runAsWritten(const std::vector<std::string>& command, const std::string& values_dir, const std::string& log,
                         const std::string& python_dir) {
  Result<std::string> dir = bridgeFor(command, python_dir);
  if (!dir) return dir.status();
  const int out = open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (out < 0) return Status(ErrorKind::kIo, log + ": cannot write: " + std::strerror(errno));
  Result<int> status = runChild([&] {
    outputTo(out);
    addPythonBridge(*dir, "values", "");
    unsetenv("GPUSCOPE_PLAN");
    setenv("GPUSCOPE_VALUES_OUT", values_dir.c_str(), 1);
    execCommand(command);
    cannotRun("apply", command.front());
  });
  close(out);
  return status;
}

std::string defaultPythonDir() {
  if (const char* path = std::getenv("GPUSCOPE_PYTHON_DIR"); path && *path) return path;
  return besideExecutable("share/gpuscope/python");
}

int exitCodeOf(int wait_status) {
  if (WIFEXITED(wait_status)) return WEXITSTATUS(wait_status);
  if (WIFSIGNALED(wait_status)) return 128 + WTERMSIG(wait_status);
  return 1;
}

void exitLike(int wait_status) {
  if (WIFSIGNALED(wait_status)) {
    const int sig = WTERMSIG(wait_status);
    signal(sig, SIG_DFL);
    raise(sig);
  }
  std::exit(exitCodeOf(wait_status));
}

namespace {

// One run of the calibrator, its output into out_file; the nanoseconds per launch it printed, or nothing (why
// then holds its first line of error).
std::optional<int64_t> runCalibrator(const std::string& calibrator, const RecordOptions* recorded,
                                     const std::string& out_file, std::string& why) {
  const int out = open(out_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (out < 0) {
    why = out_file + ": cannot write: " + std::strerror(errno);
    return std::nullopt;
  }
  Result<int> status = runChild([&] {
    outputTo(out);
    for (const char* name :
         {"CUDA_INJECTION64_PATH", "NVTX_INJECTION64_PATH", "GPUSCOPE_CAPTURE_RANGE", "GPUSCOPE_CAPTURE_WINDOW_NS"}) {
      unsetenv(name);
    }
    if (recorded) {
      setenv("CUDA_INJECTION64_PATH", recorded->collector_path.c_str(), 1);
      setenv("GPUSCOPE_OUTPUT_DIR", fs::path(out_file).parent_path().c_str(), 1);
      setenv("GPUSCOPE_TRACE", recorded->trace.c_str(), 1);
    }
    execCommand({calibrator});
    cannotRun("record", calibrator);
  });
  close(out);
  std::ifstream in(out_file);
  std::string line;
  std::getline(in, line);
  if (status && WIFEXITED(*status) && WEXITSTATUS(*status) == 0) {
    char* end = nullptr;
    const long long ns = std::strtoll(line.c_str(), &end, 10);
    if (end != line.c_str() && ns > 0) return ns;
  }
  why = line.empty() ? "gpuscope-calibrate printed nothing" : line;
  return std::nullopt;
}

std::string microseconds(int64_t ns) {
  char text[32];
  std::snprintf(text, sizeof text, "%.2f us", static_cast<double>(ns) / 1000.0);
  return text;
}

}  // namespace

// The median of three processes each, alternated: one process's launches run slower or faster than the next's
// by more than recording adds (0.7-2.8 us measured by two processes each on one H200 host, where the C++ loop of
// tests/bench/launch_cost.cu paid 1.0-1.2 us more recorded: docs/benchmarks.md).
schema::DataQualityRow calibrateLaunches(const RecordOptions& run, const std::string& work_dir) {
  const char* asked = std::getenv("GPUSCOPE_CALIBRATOR");
  const std::string calibrator = asked && *asked ? asked : besideExecutable("bin/gpuscope-calibrate");
  schema::DataQualityRow row{std::nullopt, schema::Severity::kInfo, "recording_cost_not_measured", 0, "", std::nullopt};
  std::error_code ec;
  if (!fs::exists(calibrator, ec)) {
    row.message = "the recording's cost per kernel launch was not measured: " + calibrator + " is missing";
    return row;
  }
  constexpr int kRounds = 3;
  std::vector<int64_t> plain, recorded;
  for (int round = 0; round < 2 * kRounds; ++round) {
    std::string why;
    const bool with_collector = round % 2 == 1;
    const std::string out = work_dir + "/calibrate-" + std::to_string(round) + ".out";
    const std::optional<int64_t> ns = runCalibrator(calibrator, with_collector ? &run : nullptr, out, why);
    if (!ns) {
      row.message = "the recording's cost per kernel launch was not measured: " + why;
      return row;
    }
    (with_collector ? recorded : plain).push_back(*ns);
  }
  const auto median = [](std::vector<int64_t>& v) {
    std::nth_element(v.begin(), v.begin() + kRounds / 2, v.end());
    return v[kRounds / 2];
  };
  const int64_t plain_ns = median(plain), recorded_ns = median(recorded);
  row.code = "recording_cost_per_launch";
  row.count = std::max<int64_t>(recorded_ns - plain_ns, 0);
  row.message = "recording added " + microseconds(row.count) + " to each kernel launch on this machine: an empty " +
                "kernel launched through the CUDA runtime took " + microseconds(plain_ns) + " a launch plain and " +
                microseconds(recorded_ns) +
                " recorded (gpuscope-calibrate after the program, 10,000 launches a process, the median of three "
                "processes each)";
  return row;
}

Result<RecordOutcome> recordProgram(const RecordOptions& options) {
  if (options.command.empty()) return Status(ErrorKind::kUsage, "no program to record (give it after --)");
  std::error_code ec;
  if (fs::exists(options.output, ec) && !options.overwrite) {
    return Status(ErrorKind::kUsage, options.output + ": already exists (use --force to overwrite)");
  }
  const std::string collector = options.collector_path.empty() ? defaultCollectorPath() : options.collector_path;
  if (!fs::exists(collector, ec)) {
    return Status(ErrorKind::kNotFound, collector +
                                            ": the collector library is missing (was gpuscope built "
                                            "without the CUDA toolkit?)");
  }
  RecordOptions run = options;
  run.collector_path = fs::absolute(collector).string();
  if (run.torch || run.cupy || run.jax || !run.plan.empty()) {
    Result<std::string> dir = bridgeFolder(run.python_dir);
    if (!dir) return dir.status();
    run.python_dir = *dir;
    run.torch = run.torch || !run.plan.empty();
  }
  Result<std::string> parts = makePartsDir(options.output);
  if (!parts) return parts.status();

  const int64_t start_ns = realtimeNs();
  Result<int> status = runChild([&] { execProgram(run, run.collector_path, *parts, start_ns); });
  if (!status) return status.status();
  RecordOutcome outcome;
  outcome.wait_status = *status;

  const std::vector<std::string> files = partsIn(*parts);
  outcome.processes = static_cast<int>(files.size());
  if (files.empty()) {
    outcome.problem = "no process of the program used CUDA, so there is nothing to record";
    fs::remove_all(*parts, ec);
    return outcome;
  }
  Result<MergeOptions> merge = windowsFor(options, files, start_ns);
  if (merge && (run.torch || run.cupy || run.jax)) merge->torch_memory_dir = *parts;
  if (merge) merge->notes.push_back(programExitNote(outcome.wait_status, *parts));
  // Not after a program killed by a signal (Ctrl-C, a job's time limit): the trace is wanted now.
  if (merge && run.calibrate && WIFEXITED(outcome.wait_status) && run.trace.find("cuda") != std::string::npos) {
    const std::string calibration = *parts + "/calibration";
    if (fs::create_directory(calibration, ec)) merge->notes.push_back(calibrateLaunches(run, calibration));
  }
  Status merged = merge ? mergeTraces(files, options.output, *merge) : merge.status();
  if (!merged) {
    outcome.problem = merged.message() + "; the per-process traces are kept in " + *parts;
    return outcome;
  }
  outcome.trace_written = true;
  fs::remove_all(*parts, ec);
  return outcome;
}

}  // namespace gpuscope::collector
