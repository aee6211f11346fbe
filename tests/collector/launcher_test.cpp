// `gpuscope record` around ordinary (non-CUDA) programs: the program's output, exit status and signals
// pass through unchanged.
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <thread>

#include "formats/trace_reader.h"
#include "tests/support/sample_trace.h"

namespace gpuscope {
namespace {

using testing::TempDir;

using Finished = testing::GpuscopeRun;
using testing::runGpuscope;

// Tests that run a program under `gpuscope record`, which needs the collector library beside gpuscope. The
// sanitizer builds leave it out (it is injected into programs built without the sanitizer's runtime).
class LauncherRun : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!std::filesystem::exists(testing::binDir() + "/../lib/libgpuscope_collector.so")) {
      GTEST_SKIP() << "gpuscope was built without its collector (GPUSCOPE_BUILD_COLLECTOR=OFF): nothing to record with";
    }
  }
};

TEST_F(LauncherRun, OutputAndExitCodePassThrough) {
  TempDir dir;
  Finished f =
      runGpuscope({"record", "-o", dir.path("t.gpuscope"), "--", "sh", "-c", "echo out; echo err >&2; exit 3"}, dir);
  ASSERT_TRUE(WIFEXITED(f.wait_status));
  EXPECT_EQ(WEXITSTATUS(f.wait_status), 3);
  EXPECT_EQ(f.out, "out\n");
  EXPECT_EQ(f.err.rfind("err\n", 0), 0u) << f.err;
  EXPECT_NE(f.err.find("no process of the program used CUDA"), std::string::npos) << f.err;
  EXPECT_FALSE(std::filesystem::exists(dir.path("t.gpuscope")));
  size_t leftovers = 0;
  for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator(dir.dir())) ++leftovers;
  EXPECT_EQ(leftovers, 2u) << "only out and err: the per-process folder is removed";
}

TEST_F(LauncherRun, ProgramKilledBySignalEndsGpuscopeTheSameWay) {
  TempDir dir;
  Finished f = runGpuscope({"record", "-o", dir.path("t.gpuscope"), "--", "sh", "-c", "kill -TERM $$"}, dir);
  ASSERT_TRUE(WIFSIGNALED(f.wait_status));
  EXPECT_EQ(WTERMSIG(f.wait_status), SIGTERM);
}

TEST_F(LauncherRun, SignalsSentToGpuscopeReachTheProgram) {
  TempDir dir;
  const std::string ready = dir.path("ready");
  const std::string script = "trap 'echo got TERM; exit 7' TERM; touch " + ready + "; while :; do sleep 0.05; done";
  Finished f = runGpuscope({"record", "-o", dir.path("t.gpuscope"), "--", "sh", "-c", script}, dir, [&](pid_t pid) {
    for (int i = 0; i < 200 && !std::filesystem::exists(ready); ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    kill(pid, SIGTERM);
  });
  ASSERT_TRUE(WIFEXITED(f.wait_status)) << f.err;
  EXPECT_EQ(WEXITSTATUS(f.wait_status), 7);
  EXPECT_EQ(f.out, "got TERM\n");
}

TEST_F(LauncherRun, MissingProgramIsReportedWithTheShellsCode) {
  TempDir dir;
  Finished f = runGpuscope({"record", "-o", dir.path("t.gpuscope"), "--", "/no/such/program"}, dir);
  ASSERT_TRUE(WIFEXITED(f.wait_status));
  EXPECT_EQ(WEXITSTATUS(f.wait_status), 127);
  EXPECT_NE(f.err.find("cannot run '/no/such/program'"), std::string::npos) << f.err;
}

TEST(Launcher, ExistingOutputIsKeptAndTheProgramNotRun) {
  TempDir dir;
  testing::writeFile(dir.path("t.gpuscope"), "precious");
  Finished f = runGpuscope({"record", "-o", dir.path("t.gpuscope"), "--", "sh", "-c", "echo ran"}, dir);
  ASSERT_TRUE(WIFEXITED(f.wait_status));
  EXPECT_EQ(WEXITSTATUS(f.wait_status), 2);
  EXPECT_EQ(f.out, "");
  EXPECT_NE(f.err.find("--force"), std::string::npos);
  EXPECT_EQ(testing::readFile(dir.path("t.gpuscope")), "precious");
}

// An output folder on a read-only filesystem (a read-only tmpfs): one clear error before the program runs.
TEST_F(LauncherRun, ReadOnlyOutputFolderIsRefusedUpFront) {
  TempDir dir;
  const std::string folder = dir.path("ro");
  ASSERT_EQ(::mkdir(folder.c_str(), 0755), 0);
  if (std::system(("mount -t tmpfs -o ro,size=1m tmpfs " + folder + " 2>/dev/null").c_str()) != 0) {
    GTEST_SKIP() << "cannot mount a read-only tmpfs here (needs CAP_SYS_ADMIN): case not run";
  }
  Finished f = runGpuscope({"record", "-o", folder + "/t.gpuscope", "--", "sh", "-c", "echo ran"}, dir);
  std::system(("umount " + folder).c_str());
  ASSERT_TRUE(WIFEXITED(f.wait_status));
  EXPECT_EQ(WEXITSTATUS(f.wait_status), 1);
  EXPECT_EQ(f.out, "");  // the program did not run
  EXPECT_NE(f.err.find(folder + "/t.gpuscope"), std::string::npos) << f.err;
  EXPECT_NE(f.err.find("Read-only file system"), std::string::npos) << f.err;
}

TEST(Launcher, BadWindowOptionsAreUsageErrors) {
  TempDir dir;
  for (const char* bad : {"-1", "soon", ""}) {
    Finished f = runGpuscope({"record", "--delay", bad, "-o", dir.path("t.gpuscope"), "--", "true"}, dir);
    ASSERT_TRUE(WIFEXITED(f.wait_status));
    EXPECT_EQ(WEXITSTATUS(f.wait_status), 2) << bad;
    EXPECT_NE(f.err.find("--delay needs a number of seconds"), std::string::npos) << f.err;
  }
}

// `gpuscope record OPTION VALUE -- echo ran`: refused as a usage error (exit status 2) before the program ran; what
// it printed on stderr.
std::string usageErrorOf(const std::string& option, const std::string& value) {
  TempDir dir;
  Finished f = runGpuscope({"record", option, value, "-o", dir.path("t.gpuscope"), "--", "echo", "ran"}, dir);
  EXPECT_TRUE(WIFEXITED(f.wait_status)) << option;
  EXPECT_EQ(WIFEXITED(f.wait_status) ? WEXITSTATUS(f.wait_status) : -1, 2) << option;
  EXPECT_EQ(f.out, "") << option;  // the program was not run
  return f.err;
}

TEST(Launcher, UnknownTraceItemIsAUsageError) {
  const std::string err = usageErrorOf("--trace", "cuda,kernels");
  EXPECT_NE(err.find("--trace: unknown item 'kernels'"), std::string::npos) << err;
  EXPECT_NE(err.find("(known: cuda, api, nvtx, memory, um, sync)"), std::string::npos) << err;
}

TEST(Launcher, UnknownGraphTraceModeIsAUsageError) {
  const std::string err = usageErrorOf("--cuda-graph-trace", "nodes");
  EXPECT_NE(err.find("--cuda-graph-trace takes node or graph, not 'nodes'"), std::string::npos) << err;
}

TEST(Launcher, ProgramMustFollowTheSeparator) {
  TempDir dir;
  Finished f = runGpuscope({"record", "-o", dir.path("t.gpuscope")}, dir);
  ASSERT_TRUE(WIFEXITED(f.wait_status));
  EXPECT_EQ(WEXITSTATUS(f.wait_status), 2);
  EXPECT_NE(f.err.find("after --"), std::string::npos);
}

}  // namespace
}  // namespace gpuscope

namespace gpuscope {
namespace {

// --torch puts the bridge first on PYTHONPATH (the program's own entries after it) and asks it to record.
TEST_F(LauncherRun, TorchPutsTheBridgeOnThePythonPath) {
  TempDir dir;
  setenv("PYTHONPATH", "/the/programs/own", 1);
  Finished f = runGpuscope({"record", "--torch", "-o", dir.path("t.gpuscope"), "--", "sh", "-c",
                            "echo \"$GPUSCOPE_TORCH\"; echo \"$PYTHONPATH\""},
                           dir);
  unsetenv("PYTHONPATH");
  ASSERT_TRUE(WIFEXITED(f.wait_status)) << f.err;
  const std::string bridge = testing::binDir() + "/../share/gpuscope/python";
  EXPECT_EQ(f.out, "record\n" + std::filesystem::weakly_canonical(bridge).string() +
                       "/bootstrap:" + std::filesystem::weakly_canonical(bridge).string() + ":/the/programs/own\n");
}

// The collector's capture gate hears of the range and the window from the environment: the window in CUPTI's
// clock (CLOCK_REALTIME), from the start plus --delay, for --duration.
TEST_F(LauncherRun, CaptureSettingsReachTheCollector) {
  TempDir dir;
  const auto now_ns =
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::system_clock::now().time_since_epoch()).count();
  Finished f = runGpuscope({"record", "--capture-range", "cudaProfilerApi", "--delay", "2", "--duration", "0.5", "-o",
                            dir.path("t.gpuscope"), "--", "sh", "-c",
                            "echo \"$GPUSCOPE_CAPTURE_RANGE\"; echo \"$GPUSCOPE_CAPTURE_WINDOW_NS\""},
                           dir);
  ASSERT_TRUE(WIFEXITED(f.wait_status)) << f.err;
  const size_t newline = f.out.find('\n'), comma = f.out.find(',');
  ASSERT_NE(comma, std::string::npos) << f.out;
  EXPECT_EQ(f.out.substr(0, newline), "cudaProfilerApi");
  const int64_t from = std::stoll(f.out.substr(newline + 1, comma - newline - 1));
  const int64_t to = std::stoll(f.out.substr(comma + 1));
  EXPECT_NEAR(static_cast<double>(from - now_ns), 2e9, 1e9) << f.out;
  EXPECT_EQ(to - from, 500'000'000) << f.out;
  // Without them, nothing is set: the collector records throughout.
  Finished plain = runGpuscope({"record", "-o", dir.path("u.gpuscope"), "--", "sh", "-c",
                                "echo \"[$GPUSCOPE_CAPTURE_RANGE$GPUSCOPE_CAPTURE_WINDOW_NS]\""},
                               dir);
  EXPECT_EQ(plain.out, "[]\n");
}

// The bridge's sitecustomize runs the program's own, and when the bridge cannot install itself (here a
// "torch" that is not PyTorch) the program's output and exit code are what they would have been.
TEST_F(LauncherRun, TorchBridgeFailuresLeaveThePythonProgramAlone) {
  if (std::system("python3 -c pass 2>/dev/null") != 0) GTEST_SKIP() << "no python3";
  TempDir dir;
  std::filesystem::create_directories(dir.path("site/torch"));
  testing::writeFile(dir.path("site/torch/__init__.py"), "VALUE = 42\n");
  testing::writeFile(dir.path("site/sitecustomize.py"), "print('own sitecustomize')\n");
  setenv("PYTHONPATH", dir.path("site").c_str(), 1);
  Finished f = runGpuscope({"record", "--torch", "-o", dir.path("t.gpuscope"), "--", "python3", "-c",
                            "import torch; print(torch.VALUE); raise SystemExit(5)"},
                           dir);
  unsetenv("PYTHONPATH");
  ASSERT_TRUE(WIFEXITED(f.wait_status)) << f.err;
  EXPECT_EQ(WEXITSTATUS(f.wait_status), 5);
  EXPECT_EQ(f.out, "own sitecustomize\n42\n");
  EXPECT_NE(f.err.find("gpuscope: PyTorch bridge not installed"), std::string::npos) << f.err;
}

// --cupy: the same bootstrap on the path, the CuPy part asked for, the PyTorch part not.
TEST_F(LauncherRun, CupyPutsTheBridgeOnThePythonPath) {
  TempDir dir;
  Finished f = runGpuscope({"record", "--cupy", "-o", dir.path("t.gpuscope"), "--", "sh", "-c",
                            "echo \"$GPUSCOPE_CUPY\"; echo \"[$GPUSCOPE_TORCH]\"; echo \"$PYTHONPATH\""},
                           dir);
  ASSERT_TRUE(WIFEXITED(f.wait_status)) << f.err;
  const std::string bridge = std::filesystem::weakly_canonical(testing::binDir() + "/../share/gpuscope/python");
  EXPECT_EQ(f.out, "record\n[]\n" + bridge + "/bootstrap:" + bridge + "\n");
}

// A "cupy" that is not CuPy (no memory hooks): the bridge says it is not installed, the program runs as ever.
TEST_F(LauncherRun, CupyBridgeFailuresLeaveThePythonProgramAlone) {
  if (std::system("python3 -c pass 2>/dev/null") != 0) GTEST_SKIP() << "no python3";
  TempDir dir;
  std::filesystem::create_directories(dir.path("site/cupy"));
  testing::writeFile(dir.path("site/cupy/__init__.py"), "VALUE = 7\n");
  setenv("PYTHONPATH", dir.path("site").c_str(), 1);
  Finished f = runGpuscope({"record", "--cupy", "-o", dir.path("t.gpuscope"), "--", "python3", "-c",
                            "import cupy; print(cupy.VALUE); raise SystemExit(3)"},
                           dir);
  unsetenv("PYTHONPATH");
  ASSERT_TRUE(WIFEXITED(f.wait_status)) << f.err;
  EXPECT_EQ(WEXITSTATUS(f.wait_status), 3);
  EXPECT_EQ(f.out, "7\n");
  EXPECT_NE(f.err.find("gpuscope: CuPy bridge not installed"), std::string::npos) << f.err;
}

// The merged trace's data-quality rows whose code starts with PREFIX.
std::vector<schema::DataQualityRow> qualityRows(const std::string& trace, const std::string& prefix) {
  Result<TraceReader> reader = TraceReader::open(trace);
  EXPECT_TRUE(reader) << reader.status().message();
  std::vector<schema::DataQualityRow> rows;
  if (!reader) return rows;
  Result<std::vector<schema::DataQualityRow>> all = reader->readAll<schema::DataQualityRow>();
  EXPECT_TRUE(all);
  for (const schema::DataQualityRow& row : all ? *all : rows) {
    if (row.code.starts_with(prefix)) rows.push_back(row);
  }
  return rows;
}

// The merged trace's rows about the recording's cost per launch.
std::vector<schema::DataQualityRow> costRows(const std::string& trace) { return qualityRows(trace, "recording_cost"); }

// `record` (with extra options) of a "program" that leaves a real recorded trace where the collector would have
// written its own, with CALIBRATOR (a shell script) in gpuscope-calibrate's place; writes dir/OUTPUT.
Finished recordWithCalibrator(TempDir& dir, const std::string& calibrator, const std::string& output,
                              const std::vector<std::string>& options = {}, const std::string& then = "") {
  testing::writeFile(dir.path("calibrator"), "#!/bin/sh\n" + calibrator);
  chmod(dir.path("calibrator").c_str(), 0755);
  setenv("GPUSCOPE_CALIBRATOR", dir.path("calibrator").c_str(), 1);
  std::vector<std::string> args = {"record"};
  args.insert(args.end(), options.begin(), options.end());
  const std::string fixture = testing::fixturePath("pytorch_launch_loop.gpuscope");
  args.insert(args.end(), {"-o", dir.path(output), "--", "sh", "-c",
                           "cp '" + fixture + "' \"$GPUSCOPE_OUTPUT_DIR/gpuscope-1.gpuscope\"" + then});
  Finished f = runGpuscope(args, dir);
  unsetenv("GPUSCOPE_CALIBRATOR");
  if (then.empty()) {
    EXPECT_TRUE(WIFEXITED(f.wait_status) && WEXITSTATUS(f.wait_status) == 0) << f.err;
  }
  return f;
}

// After the program, the calibrator runs plain and with the collector in turn, three times each; the trace keeps
// the difference of the medians. A stand-in prints what a GPU host's runs printed (H200, 2026-11-29: 3.3-4.1 us
// plain, 4.0-6.2 recorded), an outlier among each three, and fails where the collector is not as it should be;
// the real calibrator on a GPU is RecordSample.RecordingCostIsMeasured's.
TEST_F(LauncherRun, RecordingCostPerLaunchIsMeasuredAfterTheProgram) {
  TempDir dir;
  const std::string calibrator =
      "n=$(cat \"$0.n\" 2>/dev/null || echo 0); echo $((n + 1)) > \"$0.n\"\n"
      "[ $((n % 2)) = 1 ] && [ ! -d \"$GPUSCOPE_OUTPUT_DIR\" -o -z \"$CUDA_INJECTION64_PATH\" ] && exit 1\n"
      "[ $((n % 2)) = 0 ] && [ -n \"$CUDA_INJECTION64_PATH\" ] && exit 1\n"
      "case $n in 0) echo 3700;; 1) echo 6650;; 2) echo 9000;; 3) echo 20000;; 4) echo 3600;; 5) echo 6600;; esac\n";
  recordWithCalibrator(dir, calibrator, "t.gpuscope");
  const std::vector<schema::DataQualityRow> rows = costRows(dir.path("t.gpuscope"));
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].code, "recording_cost_per_launch");
  EXPECT_EQ(rows[0].count, 2950);
  EXPECT_FALSE(rows[0].session_id);
  EXPECT_NE(rows[0].message.find("3.70 us a launch plain and 6.65 us recorded"), std::string::npos) << rows[0].message;
  recordWithCalibrator(dir, calibrator, "u.gpuscope", {"--no-calibrate"});
  EXPECT_TRUE(costRows(dir.path("u.gpuscope")).empty());
  // A program killed by a signal (Ctrl-C, a job's time limit): its trace at once, with no calibration after it.
  const Finished killed = recordWithCalibrator(dir, calibrator, "v.gpuscope", {}, "; kill -TERM $$");
  ASSERT_TRUE(WIFSIGNALED(killed.wait_status)) << killed.err;
  EXPECT_TRUE(costRows(dir.path("v.gpuscope")).empty());
}

// Where the calibrator cannot run (no GPU here, or a broken one), the trace says so and keeps everything else.
TEST_F(LauncherRun, RecordingCostNotMeasuredSaysWhy) {
  TempDir dir;
  recordWithCalibrator(dir, "echo 'no usable GPU: no CUDA-capable device' >&2\nexit 1\n", "t.gpuscope");
  const std::vector<schema::DataQualityRow> rows = costRows(dir.path("t.gpuscope"));
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].code, "recording_cost_not_measured");
  EXPECT_NE(rows[0].message.find("no usable GPU: no CUDA-capable device"), std::string::npos) << rows[0].message;
  Result<TraceReader> reader = TraceReader::open(dir.path("t.gpuscope"));
  ASSERT_TRUE(reader);
  EXPECT_GT(*reader->count<schema::KernelRow>(), 0);
}

// The trace says how the program ended, so that a run that failed is never analysed as if it were fine: its exit
// code or signal, and with a bridge the Python exception it died of.
TEST_F(LauncherRun, TheTraceSaysHowTheProgramEnded) {
  TempDir dir;
  const std::string calibrator = "echo 3700\n";
  const auto ending = [&](const std::string& output) {
    const std::vector<schema::DataQualityRow> rows = qualityRows(dir.path(output), "program_");
    EXPECT_EQ(rows.size(), 1u) << output;
    return rows.empty() ? schema::DataQualityRow{} : rows[0];
  };
  recordWithCalibrator(dir, calibrator, "ok.gpuscope");
  EXPECT_EQ(ending("ok.gpuscope").code, "program_exit");
  EXPECT_EQ(ending("ok.gpuscope").severity, schema::Severity::kInfo);

  recordWithCalibrator(dir, calibrator, "code.gpuscope", {}, "; exit 3");
  const schema::DataQualityRow code = ending("code.gpuscope");
  EXPECT_EQ(code.code, "program_failed");
  EXPECT_EQ(code.severity, schema::Severity::kError);
  EXPECT_EQ(code.count, 3);
  EXPECT_EQ(code.message, "the program exited with code 3");
  EXPECT_FALSE(code.session_id);

  recordWithCalibrator(dir, calibrator, "segv.gpuscope", {}, "; kill -SEGV $$");
  EXPECT_EQ(ending("segv.gpuscope").code, "program_failed");
  EXPECT_EQ(ending("segv.gpuscope").message, "the program was ended by signal 11 (SIGSEGV)");

  // Ctrl-C or a job's time limit ended steps that ran as they do: said, not called a failure.
  recordWithCalibrator(dir, calibrator, "term.gpuscope", {}, "; kill -TERM $$");
  EXPECT_EQ(ending("term.gpuscope").code, "program_stopped");
  EXPECT_EQ(ending("term.gpuscope").severity, schema::Severity::kWarning);

  if (std::system("python3 -c pass 2>/dev/null") != 0) GTEST_SKIP() << "no python3";
  const Finished python = recordWithCalibrator(dir, calibrator, "python.gpuscope", {"--torch"},
                                               "; python3 -c \"raise AttributeError('no attribute row_stack')\"");
  EXPECT_NE(python.err.find("AttributeError: no attribute row_stack"), std::string::npos) << "Python's own report";
  EXPECT_EQ(ending("python.gpuscope").message,
            "the program exited with code 1, of Python's AttributeError: no attribute row_stack");
}

// Switched off, the collector tells the NVTX loader its injection failed, so NVTX calls are no-ops, instead of
// handing NVTX to a CUPTI nobody set up (a checkpointed PyTorch model recorded with `--torch` and
// GPUSCOPE_DISABLE=1 died of a segmentation fault there, H200, 2026-11-29).
TEST_F(LauncherRun, SwitchedOffTheCollectorLeavesNvtxAlone) {
#ifdef GPUSCOPE_CUDA_STUB
  // Without a driver, the toolkit's stub stands in for libcuda.so.1 (its soname), which the collector links.
  if (!dlopen("libcuda.so.1", RTLD_NOW | RTLD_GLOBAL)) dlopen(GPUSCOPE_CUDA_STUB, RTLD_NOW | RTLD_GLOBAL);
#endif
  void* collector = dlopen((testing::binDir() + "/../lib/libgpuscope_collector.so").c_str(), RTLD_NOW | RTLD_LOCAL);
  ASSERT_TRUE(collector) << dlerror();
  auto initialize = reinterpret_cast<int (*)(void*)>(dlsym(collector, "InitializeInjectionNvtx2"));
  ASSERT_TRUE(initialize);
  setenv("GPUSCOPE_DISABLE", "1", 1);
  setenv("GPUSCOPE_DEBUG", "1", 1);
  ::testing::internal::CaptureStderr();
  const int result = initialize(nullptr);
  const std::string said = ::testing::internal::GetCapturedStderr();
  unsetenv("GPUSCOPE_DEBUG");
  unsetenv("GPUSCOPE_DISABLE");
  EXPECT_EQ(result, 0);
  EXPECT_EQ(said, "") << "neither the collector nor CUPTI was asked to start";
}

TEST_F(LauncherRun, TorchWithoutTheBridgeIsAClearError) {
  TempDir dir;
  setenv("GPUSCOPE_PYTHON_DIR", dir.path("nowhere").c_str(), 1);
  Finished f = runGpuscope({"record", "--torch", "-o", dir.path("t.gpuscope"), "--", "true"}, dir);
  unsetenv("GPUSCOPE_PYTHON_DIR");
  ASSERT_TRUE(WIFEXITED(f.wait_status));
  EXPECT_NE(WEXITSTATUS(f.wait_status), 0);
  EXPECT_NE(f.err.find("the PyTorch bridge is missing"), std::string::npos) << f.err;
}

}  // namespace
}  // namespace gpuscope
