// Records each sample program on a real GPU with `gpuscope record` and checks the trace against what the
// sample knows it did. Skipped, with a message, where there is no GPU.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <algorithm>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <optional>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "formats/trace_reader.h"
#include "tests/support/sample_trace.h"

namespace gpuscope {
namespace {

using testing::TempDir;

bool haveGpu() { return std::system("nvidia-smi -L >/dev/null 2>&1") == 0; }

// The GPUs this process may use: those CUDA_VISIBLE_DEVICES names, where it is set, else the host's.
int gpuCount() {
  FILE* pipe = popen("nvidia-smi -L 2>/dev/null | grep -c '^GPU '", "r");
  int count = 0;
  if (pipe && std::fscanf(pipe, "%d", &count) != 1) count = 0;
  if (pipe) pclose(pipe);
  if (const char* visible = std::getenv("CUDA_VISIBLE_DEVICES")) {
    const std::string list = visible;
    const int named = list.empty() ? 0 : 1 + static_cast<int>(std::count(list.begin(), list.end(), ','));
    count = std::min(count, named);
  }
  return count;
}

// `gpuscope record OPTIONS -o TRACE -- PROGRAM`: gpuscope's exit status (the program's own, 128 + the signal
// when a signal ended it, as a shell reports it; -1 if gpuscope itself was killed), what it printed, and the
// trace if it opens.
struct RecordRun {
  int status = -1;
  std::string out, err;
  std::optional<TraceReader> trace;
  std::string trace_error;  // why it did not open
};

RecordRun runRecord(const TempDir& dir, const std::string& options, const std::string& output,
                    const std::string& program) {
  RecordRun run;
  const std::string cmd = testing::gpuscopeBinary() + " record " + options + " -o " + output + " -- " + program + " >" +
                          dir.path("out") + " 2>" + dir.path("err");
  const int status = std::system(cmd.c_str());
  run.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  run.out = testing::readFile(dir.path("out"));
  run.err = testing::readFile(dir.path("err"));
  Result<TraceReader> reader = TraceReader::open(output);
  if (reader) {
    run.trace.emplace(std::move(*reader));
  } else {
    run.trace_error = reader.status().message();
  }
  return run;
}

class RecordSample : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!haveGpu()) GTEST_SKIP() << "no NVIDIA GPU here (nvidia-smi -L failed): GPU tests skipped";
  }

  // Records build/bin/sample_NAME; returns the open trace. The sample's own self-check must pass.
  TraceReader record(const std::string& name, const std::string& options = "") {
    return recordCommand(name, options, testing::binDir() + "/sample_" + name);
  }

  TraceReader recordCommand(const std::string& name, const std::string& options, const std::string& program,
                            bool self_check = true) {
    const std::string trace = dir_.path(name + ".gpuscope");
    RecordRun run = runRecord(dir_, options, trace, program);
    out_ = run.out;
    err_ = run.err;
    EXPECT_EQ(run.status, 0) << err_;
    if (self_check) {
      EXPECT_NE(out_.find("self-check passed"), std::string::npos) << out_ << err_;
    }
    EXPECT_TRUE(run.trace) << run.trace_error << "\n" << err_;
    return std::move(*run.trace);
  }

  static int64_t query(TraceReader& r, const std::string& sql) {
    Result<int64_t> v = r.database().queryInt(sql);
    EXPECT_TRUE(v) << sql << ": " << (v ? "" : v.status().message());
    return v ? *v : -1;
  }

  TempDir dir_;
  std::string out_, err_;
};

TEST_F(RecordSample, ElementwiseChain) {
  TraceReader r = record("elementwise_chain");
  for (const char* k : {"scale", "add_bias", "relu", "multiply"}) {
    EXPECT_EQ(query(r, std::string("SELECT count(*) FROM kernel_view WHERE name_text LIKE '") + k + "(%'"), 50) << k;
  }
  EXPECT_EQ(query(r, "SELECT count(*) FROM memcpy WHERE copy_kind = 1 AND bytes = 67108864"), 50);
  // CUPTI describes every GPU of the host, those CUDA_VISIBLE_DEVICES hides too (the visible ones first): each once,
  // and the program's kernels on one of them.
  EXPECT_GE(query(r, "SELECT count(*) FROM device WHERE sm_count > 0"), 1);
  EXPECT_EQ(query(r, "SELECT count(*) - count(DISTINCT uuid) FROM device"), 0);
  EXPECT_EQ(query(r, "SELECT count(DISTINCT device_id) FROM kernel"), 1);
  EXPECT_EQ(query(r,
                  "SELECT count(*) FROM kernel k LEFT JOIN api_call a USING (session_id, correlation_id) "
                  "WHERE a.id IS NULL"),
            0)
      << "every kernel has its launch";
  EXPECT_NE(err_.find("gpuscope: wrote"), std::string::npos) << err_;
  EXPECT_EQ(query(r, "SELECT count(*) FROM unified_memory"), 0);  // no managed allocation, nothing turned on
}

// A CUDA graph whose loop runs on the GPU (a while node), replayed for two seconds: recorded whole, the periodic
// flush left on (a one-GPU program never loses it).
TEST_F(RecordSample, GraphsWithWhileNodesAreRecordedWhole) {
  TraceReader r = record("graph_while");
  EXPECT_EQ(query(r, "SELECT count(*) FROM data_quality WHERE code = 'periodic_flush_off'"), 0);
  EXPECT_EQ(query(r, "SELECT count(*) FROM api_call_view WHERE name_text LIKE 'cudaGraphLaunch%'"), 1500);
  EXPECT_GE(query(r, "SELECT count(*) FROM kernel_view WHERE name_text LIKE 'damp(%'"), 1500);
}

// XLA's pattern: a graph with a copy node, a flag copied to the host and waited for, a kernel chosen by it; with
// CUPTI's peer-copy records on as well, flushing while it ran made a JAX program fail (see Collector::watchContexts).
TEST_F(RecordSample, GraphsCopiesAndHostBranchesRunWhole) {
  TraceReader r = record("graph_copies");
  EXPECT_EQ(query(r, "SELECT count(*) FROM kernel_view WHERE name_text LIKE 'branch(%'"), 40000);
  EXPECT_GE(query(r, "SELECT count(*) FROM memcpy WHERE bytes = 4"), 40000);
  EXPECT_EQ(query(r, "SELECT count(*) FROM data_quality WHERE code = 'periodic_flush_off'"), 0);
}

// Two GPUs in one process: the peer copies are recorded (CUPTI's MEMCPY2, on at the second GPU's context) and the
// trace says the periodic flush stopped.
TEST_F(RecordSample, PeerCopiesOfTwoGpusAreRecorded) {
  if (gpuCount() < 2) GTEST_SKIP() << "fewer than 2 GPUs here: peer copies need 2";
  TraceReader r = record("peer_copy");
  EXPECT_EQ(query(r, "SELECT count(*) FROM memcpy WHERE src_device_id = 0 AND dst_device_id = 1"), 100);
  EXPECT_EQ(query(r, "SELECT count(*) FROM data_quality WHERE code = 'periodic_flush_off'"), 1);
}

TEST_F(RecordSample, LaunchBound) {
  TraceReader r = record("launch_bound");
  EXPECT_EQ(query(r, "SELECT count(*) FROM kernel_view WHERE name_text LIKE 'tiny(%'"), 20000);
  EXPECT_EQ(query(r, "SELECT count(*) FROM data_quality WHERE code = 'dropped_records'"), 0);
}

// After the program, the real gpuscope-calibrate ran plain and recorded: the trace holds what recording added to a
// launch on this machine (2.45 us on an H100 host by tests/bench/launch_cost.cu; bounds far outside any host's).
TEST_F(RecordSample, RecordingCostIsMeasured) {
  TraceReader r = record("launch_bound");
  EXPECT_EQ(query(r, "SELECT count(*) FROM data_quality WHERE code = 'recording_cost_not_measured'"), 0) << err_;
  EXPECT_EQ(query(r,
                  "SELECT count(*) FROM data_quality WHERE code = 'recording_cost_per_launch' AND session_id IS "
                  "NULL AND count BETWEEN 200 AND 20000"),
            1);
}

TEST_F(RecordSample, PageableSync) {
  TraceReader r = record("pageable_sync", "--trace cuda,api,sync");
  EXPECT_EQ(query(r, "SELECT count(*) FROM memcpy WHERE copy_kind = 1 AND src_kind = 1"), 40);  // HtoD, pageable
  EXPECT_GE(query(r, "SELECT count(*) FROM sync WHERE kind = 4"), 40);                          // context syncs
  EXPECT_GE(query(r, "SELECT count(*) FROM api_call_view WHERE name_text LIKE 'cudaDeviceSynchronize%'"), 40);
}

TEST_F(RecordSample, MemoryLeak) {
  TraceReader r = record("memory_leak");
  EXPECT_EQ(query(r, "SELECT count(*) FROM memory_event WHERE op = 1 AND memory_kind = 3 AND bytes = 8388608"), 64);
  EXPECT_EQ(query(r, "SELECT count(*) FROM memory_event WHERE op = 2 AND memory_kind = 3 AND bytes = 8388608"), 64);
}

// Unified memory's migrations and faults, recorded from the program's first managed allocation: both ways in every
// turn, and a note that says so. A program with no managed memory records none (ElementwiseChain).
TEST_F(RecordSample, ManagedMemoryMigrationsAreRecorded) {
  TraceReader r = record("managed_memory");
  EXPECT_EQ(query(r, "SELECT count(*) FROM kernel"), 20);
  EXPECT_GE(query(r, "SELECT sum(value) FROM unified_memory WHERE kind = 1"), 20 * (32 << 20) / 2);  // to the GPU
  EXPECT_GE(query(r, "SELECT count(*) FROM unified_memory WHERE kind = 2"), 20);                     // back
  EXPECT_GE(query(r, "SELECT count(*) FROM unified_memory WHERE kind = 4"), 20);                     // GPU fault groups
  EXPECT_GE(query(r, "SELECT count(*) FROM unified_memory WHERE kind = 3"), 20);                     // CPU faults
  EXPECT_EQ(query(r, "SELECT count(*) FROM data_quality WHERE code = 'unified_memory_recorded'"), 1);
}

TEST_F(RecordSample, MultiStreamOverlaps) {
  TraceReader r = record("multi_stream");
  EXPECT_EQ(query(r, "SELECT count(DISTINCT stream_id) FROM kernel"), 4);
  EXPECT_EQ(query(r, "SELECT count(*) FROM memcpy WHERE src_kind = 2 OR dst_kind = 2"), 64);  // pinned
  EXPECT_GT(query(r,
                  "SELECT count(*) FROM kernel k JOIN memcpy m ON m.stream_id != k.stream_id "
                  "AND m.start_ns < k.end_ns AND k.start_ns < m.end_ns"),
            0)
      << "copies overlap kernels";
}

TEST_F(RecordSample, GraphReplayKernelsCarryTheGraph) {
  TraceReader r = record("graph_replay");
  EXPECT_EQ(query(r, "SELECT count(*) FROM kernel WHERE graph_id IS NOT NULL"), 600);
  EXPECT_EQ(query(r, "SELECT count(*) FROM api_call_view WHERE name_text LIKE 'cudaGraphLaunch%'"), 200);
}

// `--cuda-graph-trace graph`: a record per replay, with the graph's id and its launch's correlation, and none of
// the replays' kernels.
TEST_F(RecordSample, GraphReplaysRecordedAsAWhole) {
  TraceReader r = record("graph_replay", "--cuda-graph-trace graph");
  EXPECT_EQ(query(r, "SELECT count(*) FROM kernel WHERE graph_id IS NOT NULL"), 0);
  EXPECT_EQ(query(r, "SELECT count(*) FROM graph_launch"), 200);
  EXPECT_EQ(query(r, "SELECT count(DISTINCT graph_id) FROM graph_launch"), 1);
  EXPECT_EQ(query(r,
                  "SELECT count(*) FROM graph_launch g JOIN api_call a ON a.correlation_id = g.correlation_id "
                  "WHERE a.start_ns < g.start_ns AND g.start_ns < g.end_ns"),
            200);
}

TEST_F(RecordSample, NvtxTrainingRangesAndAllocations) {
  TraceReader r = record("nvtx_training");
  EXPECT_EQ(query(r, "SELECT count(*) FROM nvtx_view WHERE name_text = 'forward'"), 20);
  EXPECT_EQ(query(r, "SELECT count(*) FROM nvtx_view WHERE name_text = 'optimizer'"), 20);
  EXPECT_EQ(query(r, "SELECT count(*) FROM nvtx_view WHERE name_text LIKE 'step %'"), 20);
  // parameters 4 + input, target (6 large) + loss, per step 4 activations + 1 gradient, 4 grads, 8 moments.
  EXPECT_EQ(query(r, "SELECT count(*) FROM memory_event WHERE op = 1 AND bytes = 4194304"), 6 + 20 * 5 + 4 + 8);
}

TEST_F(RecordSample, CaptureRangeKeepsOnlyWorkInsideTheRanges) {
  TraceReader r = record("nvtx_training", "--capture-range forward");
  EXPECT_EQ(query(r, "SELECT count(*) FROM nvtx_view WHERE name_text = 'forward'"), 20);
  EXPECT_EQ(query(r, "SELECT count(*) FROM kernel_view WHERE name_text LIKE 'layer_forward%'"), 80);
  EXPECT_EQ(query(r, "SELECT count(*) FROM kernel_view WHERE name_text LIKE 'adam%'"), 0);
  // The collector switched recording on at each of the 20 ranges, not only cut the trace at the merge.
  EXPECT_EQ(query(r, "SELECT count FROM data_quality WHERE code = 'capture_gate'"), 20);
}

TEST_F(RecordSample, EveryCudaProcessOfTheProgramIsRecordedAndMerged) {
  const std::string bin = testing::binDir();
  TraceReader r = recordCommand("two_processes", "",
                                "sh -c '" + bin + "/sample_launch_bound & " + bin + "/sample_graph_replay; wait'");
  EXPECT_EQ(query(r, "SELECT count(*) FROM session"), 2);
  EXPECT_EQ(query(r, "SELECT count(DISTINCT session_id) FROM kernel"), 2);
  EXPECT_EQ(query(r, "SELECT count(*) FROM kernel"), 20600);
}

// A process killed mid-run: kill -9 leaves what was committed (at most about 1.2 s is lost: CUPTI is asked for its
// records once a second, and they are committed every 200 ms); SIGTERM, which the program does not handle, first
// flushes and notes the signal.
TEST_F(RecordSample, KilledProgramsLeaveReadableTraces) {
  // Ten million launches, so that the program is still launching when the signal comes (its default million took
  // under 2.5 s recorded on an H200).
  const std::string stress = testing::binDir() + "/sample_stress_launch 2500000";
  for (const char* sig : {"KILL", "TERM"}) {
    SCOPED_TRACE(sig);
    TraceReader r = recordCommand(std::string("killed_") + sig, "",
                                  "sh -c '" + stress + " & p=$!; sleep 2.5; kill -" + sig + " $p; wait $p; exit 0'",
                                  /*self_check=*/false);
    const int64_t kernels = query(r, "SELECT count(*) FROM kernel");
    EXPECT_GT(kernels, 10000);
    EXPECT_LT(kernels, 10000000);
    EXPECT_EQ(query(r, "SELECT count(*) - count(DISTINCT uuid) FROM device"), 0);
    EXPECT_EQ(query(r, "SELECT count(DISTINCT device_id) FROM kernel"), 1);
    EXPECT_EQ(query(r, "SELECT count(*) FROM data_quality WHERE code = 'terminated_by_signal'"),
              std::string(sig) == "TERM" ? 1 : 0);
  }
}

// A file of the source tree: where this binary was built, or (on a machine the build was carried to) the
// current directory, which scripts/gpu-run makes the repository root.
std::string sourceFile(const std::string& relative) {
  const std::string built = std::string(GPUSCOPE_SOURCE_DIR) + "/" + relative;
  return std::filesystem::exists(built) ? built : std::filesystem::absolute(relative).string();
}

// A JAX program that recording once failed (CUDA_ERROR_LAUNCH_FAILED at its solver's first conditional): a diffrax
// neural ODE, the corpus's case, runs whole and prints what it prints plain.
TEST_F(RecordSample, JaxWhileLoopsRunWholeUnderRecording) {
  if (std::system("python3 -c 'import jax, diffrax' >/dev/null 2>&1") != 0) {
    GTEST_SKIP() << "no JAX with diffrax for python3";
  }
  const std::string program = "python3 " + sourceFile("bench/corpus/jax_diffrax_neural_ode/program.py");
  TraceReader r = recordCommand("diffrax", "", program, /*self_check=*/false);
  EXPECT_NE(out_.find("ms/step"), std::string::npos) << out_ << err_;
  EXPECT_GT(query(r, "SELECT count(*) FROM kernel"), 10000);
}

// record --torch on a GPT-2 training loop: the program's output unchanged, and the trace holding module
// ranges on both passes, the optimizer step, the allocator's tensors and the roles of what it trains.
TEST_F(RecordSample, TorchBridgeRecordsModulesAndTensors) {
  if (std::system("python3 -c 'import torch, transformers' >/dev/null 2>&1") != 0) {
    GTEST_SKIP() << "no PyTorch with transformers for python3";
  }
  const std::string program = "python3 " + sourceFile("samples/pytorch/bridge_train.py");
  ASSERT_EQ(std::system((program + " >" + dir_.path("plain") + " 2>/dev/null").c_str()), 0);
  TraceReader r = recordCommand("bridge", "--torch", program, /*self_check=*/false);
  EXPECT_EQ(out_, testing::readFile(dir_.path("plain")));
  EXPECT_EQ(err_.find("PyTorch bridge not installed"), std::string::npos) << err_;
  EXPECT_EQ(query(r, "SELECT count(*) FROM nvtx_view WHERE name_text = 'GPT2LMHeadModel (forward)'"), 6);
  // The root module's range marks every step; the blocks' ranges are in the first --torch-steps steps (default 5),
  // after which the bridge removes its module hooks.
  EXPECT_EQ(query(r, "SELECT count(*) FROM nvtx_view WHERE name_text = 'GPT2LMHeadModel.transformer.h.0 (backward)'"),
            5);
  EXPECT_EQ(query(r, "SELECT count(*) FROM nvtx_view WHERE name_text = 'optimizer.step (AdamW)'"), 6);
  EXPECT_GT(query(r, "SELECT count(*) FROM allocator_event WHERE action = 1"), 1000);
  // Frees as the analyzer reads them (free_completed); the requests before them are not recorded (memory.py).
  EXPECT_GT(query(r, "SELECT count(*) FROM allocator_event WHERE action = 3"), 1000);
  EXPECT_EQ(query(r, "SELECT count(*) FROM allocator_event WHERE action = 2"), 0);
  EXPECT_EQ(query(r, "SELECT count(*) FROM tensor_role WHERE role = 1"), 28);
  EXPECT_EQ(query(r, "SELECT count(*) FROM tensor_role WHERE role = 4"), 56);
  // PyTorch loads libcudart as a library: the session says which runtime (CUDA 13.x).
  EXPECT_EQ(query(r, "SELECT count(*) FROM session WHERE cuda_runtime_version / 1000 = 13"), 1);
}

// record --torch of a 2-rank torchrun job: the program's output and exit code unchanged, one trace holding both
// ranks (and the launcher), each rank's NCCL kernels, and the job view of `gpuscope stats`.
TEST_F(RecordSample, TorchrunJobIsOneTraceOfItsRanks) {
  if (gpuCount() < 2) GTEST_SKIP() << "fewer than 2 GPUs here: the multi-rank record test needs 2";
  if (std::system("python3 -c 'import torch' >/dev/null 2>&1") != 0) GTEST_SKIP() << "no PyTorch for python3";
  const std::string program = "torchrun --standalone --nproc_per_node=2 " + sourceFile("tests/gpu/ddp_two_ranks.py");
  ASSERT_EQ(std::system((program + " >" + dir_.path("plain") + " 2>/dev/null").c_str()), 0);
  TraceReader r = recordCommand("job", "--torch", program, /*self_check=*/false);
  EXPECT_EQ(out_, testing::readFile(dir_.path("plain")));
  EXPECT_EQ(query(r, "SELECT count(DISTINCT rank) FROM session WHERE rank IS NOT NULL"), 2);
  EXPECT_EQ(query(r, "SELECT count(DISTINCT k.session_id) FROM kernel_view k WHERE k.name_text LIKE 'ncclDevKernel%'"),
            2);
  EXPECT_EQ(query(r, "SELECT count(*) FROM nvtx_view WHERE name_text = 'DistributedDataParallel (forward)'"), 24);
  // NCCL loaded the collector as its profiler plugin: each rank's gradient all-reduces with their sizes (the
  // MLP's 2.1 M fp32 parameters: at least one all-reduce a step), and the environment.
  EXPECT_EQ(query(r, "SELECT count(DISTINCT session_id) FROM collective_view WHERE operation_text = 'AllReduce'"), 2);
  EXPECT_GE(query(r, "SELECT count(*) FROM collective_view WHERE operation_text = 'AllReduce' AND rank = 0"), 12);
  EXPECT_EQ(query(r, "SELECT count(*) FROM collective_view WHERE datatype_text IS NULL OR count <= 0"), 0);
  EXPECT_GT(query(r, "SELECT count(*) FROM environment"), 0);
  // Each rank drives one GPU: no process opened a second one, so the periodic flush stayed on in both.
  EXPECT_EQ(query(r, "SELECT count(*) FROM data_quality WHERE code = 'periodic_flush_off'"), 0);
  const std::string stats = dir_.path("ranks.txt");
  ASSERT_EQ(
      std::system(
          (testing::gpuscopeBinary() + " stats --report ranks " + dir_.path("job.gpuscope") + " >" + stats).c_str()),
      0);
  EXPECT_NE(testing::readFile(stats).find("2 ranks on one host"), std::string::npos) << testing::readFile(stats);
}

// plan.json in DIR holding FIXES (their JSON objects, comma-separated), with placeholder measurements.
void writePlan(const TempDir& dir, const std::string& fixes) {
  testing::writeFile(dir.path("plan.json"), R"({"format": "gpuscope-plan", "version": 1, "trace": "t",
    "step_basis": "run", "measured": {"step_time_ns": 1, "peak_memory_bytes": 1},
    "predicted": {"step_time_ns": 1, "peak_memory_bytes": 1}, "prediction_basis": "none", "fixes": [)" +
                                                fixes + "]}");
}

// apply --record with a plan of every fix kind: each applied (attention reported as needing code), the
// program still trains, and the trace shows the change (bf16 GEMMs where the plain run had fp32 ones).
TEST_F(RecordSample, TorchApplyAppliesEveryKindOfFix) {
  if (std::system("python3 -c 'import torch, transformers' >/dev/null 2>&1") != 0) {
    GTEST_SKIP() << "no PyTorch with transformers for python3";
  }
  writePlan(dir_, R"({"id": "precision-1", "kind": "precision", "rule": "r", "setting": "bf16_autocast"},
    {"id": "optimizer-1", "kind": "optimizer", "rule": "r", "setting": "fused"},
    {"id": "allocator-1", "kind": "allocator", "rule": "r", "setting": "expandable_segments:True"},
    {"id": "data_loader-1", "kind": "data_loader", "rule": "r", "num_workers": 4, "pin_memory": true,
     "persistent_workers": true},
    {"id": "checkpoint-1", "kind": "checkpoint", "rule": "r", "segments": 2},
    {"id": "attention-1", "kind": "attention", "rule": "r", "setting": "sdpa"})");
  const std::string program = "python3 " + sourceFile("samples/pytorch/bridge_train.py");
  const std::string trace = dir_.path("applied.gpuscope");
  const std::string cmd = testing::gpuscopeBinary() + " apply --plan " + dir_.path("plan.json") + " --record -o " +
                          trace + " -- " + program + " >" + dir_.path("out") + " 2>" + dir_.path("err");
  ASSERT_EQ(std::system(cmd.c_str()), 0) << testing::readFile(dir_.path("err"));
  const std::string err = testing::readFile(dir_.path("err"));
  for (const char* line :
       {"precision-1 (precision): applied", "optimizer-1 (optimizer): applied", "allocator-1 (allocator): applied",
        "data_loader-1 (data_loader): applied",
        "checkpoint-1 (checkpoint): applied: GPT2LMHeadModel.gradient_checkpointing_enable() (non-reentrant)",
        "attention-1 (attention): not applied: needs the model's code changed"}) {
    EXPECT_NE(err.find(std::string("gpuscope apply: ") + line), std::string::npos) << line << "\n" << err;
  }
  EXPECT_EQ(std::count(err.begin(), err.end(), '\n') >= 7, true);
  EXPECT_NE(testing::readFile(dir_.path("out")).find("step 5 loss"), std::string::npos);
  Result<TraceReader> r = TraceReader::open(trace);
  ASSERT_TRUE(r) << r.status().message();
  EXPECT_GT(query(*r, "SELECT count(*) FROM kernel_view WHERE name_text LIKE '%bf16%' OR name_text LIKE '%bfloat16%'"),
            0);
  EXPECT_EQ(query(*r, "SELECT count(*) FROM nvtx_view WHERE name_text = 'optimizer.step (AdamW)'"), 6);
}

// `gpuscope apply --plan` with one fix (its JSON; the plan written here) on a Python program, run plain first:
// the program's exit code and output must be the same; returns what the bridge said on stderr.
std::string applyOneFix(const TempDir& dir, const std::string& fix, const std::string& program) {
  writePlan(dir, fix);
  const std::string plain = "python3 " + program + " >" + dir.path("plain") + " 2>" + dir.path("plain_err");
  EXPECT_EQ(std::system(plain.c_str()), 0) << testing::readFile(dir.path("plain_err"));
  const std::string cmd = testing::gpuscopeBinary() + " apply --plan " + dir.path("plan.json") + " -- python3 " +
                          program + " >" + dir.path("applied") + " 2>" + dir.path("applied_err");
  EXPECT_EQ(std::system(cmd.c_str()), 0) << testing::readFile(dir.path("applied_err"));
  EXPECT_EQ(testing::readFile(dir.path("applied")), testing::readFile(dir.path("plain")));
  return testing::readFile(dir.path("applied_err"));
}

// Autocast makes a mixture-of-experts layer's experts return bf16, which its index assignment into an fp32 buffer
// refuses: the fix is rolled back at that call, the call runs again as written, and the program's results are
// those of the run without gpuscope (issue 26: a fix forced to fail).
TEST_F(RecordSample, ApplyRollsBackAutocastThatBreaksTheForward) {
  if (std::system("python3 -c 'import torch' >/dev/null 2>&1") != 0) GTEST_SKIP() << "no PyTorch for python3";
  const std::string err =
      applyOneFix(dir_, R"({"id": "precision-1", "kind": "precision", "rule": "r", "setting": "bf16_autocast"})",
                  sourceFile("tests/python/programs/expert_routing.py"));
  EXPECT_NE(err.find("precision-1 (precision): rolled back: RuntimeError: Index put requires the source and "
                     "destination dtypes match"),
            std::string::npos)
      << err;
}

// CUDA graphs over a generation loop's KV cache: `apply` must not crash the program nor change one greedy token
// (issue 26); the graphs are given up for the cache the forward is handed back.
TEST_F(RecordSample, ApplyKeepsTheTokensOfAGenerationLoop) {
  if (std::system("python3 -c 'import torch, transformers' >/dev/null 2>&1") != 0) {
    GTEST_SKIP() << "no PyTorch with transformers for python3";
  }
  const std::string err = applyOneFix(dir_, R"({"id": "cuda_graphs-1", "kind": "cuda_graphs", "rule": "r"})",
                                      sourceFile("tests/gpu/kv_generate.py"));
  EXPECT_NE(err.find("cuda_graphs-1 (cuda_graphs): rolled back: CUDA graphs: the forward is handed tensors its "
                     "previous call returned"),
            std::string::npos)
      << err;
}

// `gpuscope advise TRACE --format json`, parsed (null when it fails).
nlohmann::json adviceJson(const TempDir& dir, const std::string& trace) {
  const std::string out = dir.path(std::filesystem::path(trace).stem().string() + "_advice.json");
  const std::string cmd = testing::gpuscopeBinary() + " advise " + trace + " --format json >" + out;
  if (std::system(cmd.c_str()) != 0) return nullptr;
  return nlohmann::json::parse(testing::readFile(out), nullptr, false);
}

std::vector<std::string> findingIds(const nlohmann::json& advice) {
  std::vector<std::string> ids;
  for (const auto& f : advice.value("findings", nlohmann::json::array())) ids.push_back(f.value("id", ""));
  return ids;
}

// The whole loop on the naive training loop of samples/pytorch/advisor_cases.py: record --torch, advise with a
// plan for both goals (the time plan holds no checkpointing, which costs time), apply the plan with --record. Its
// fixes are applied, what they fix is gone from the new trace, and the step and the peak fall. (How close the plan's
// prediction comes is a benchmark: tests/gpu/torch_loop.sh, with the results in docs/benchmarks.md.) 30 steps: the
// check of `apply --record` takes the model's first 11 calls, and its 12 default steps left one step after it.
TEST_F(RecordSample, TorchLoopAppliesTheAdvisorsPlan) {
  if (std::system("python3 -c 'import torch' >/dev/null 2>&1") != 0) GTEST_SKIP() << "no PyTorch for python3";
  const std::string program = "python3 " + sourceFile("samples/pytorch/advisor_cases.py") + " naive --steps 30";
  recordCommand("before", "--torch", program, /*self_check=*/false);
  const std::string before = dir_.path("before.gpuscope"), plan = dir_.path("plan.json");
  const std::string after = dir_.path("after.gpuscope");
  ASSERT_EQ(
      std::system(
          (testing::gpuscopeBinary() + " advise " + before + " --goal both --plan " + plan + " >/dev/null").c_str()),
      0);
  const std::string cmd = testing::gpuscopeBinary() + " apply --plan " + plan + " --record -q -o " + after + " -- " +
                          program + " >" + dir_.path("out") + " 2>" + dir_.path("err");
  ASSERT_EQ(std::system(cmd.c_str()), 0) << testing::readFile(dir_.path("err"));
  const std::string err = testing::readFile(dir_.path("err"));
  for (const char* line : {"checkpoint-1 (checkpoint): applied", "data_loader-1 (data_loader): applied",
                           "precision-1 (precision): applied", "optimizer-1 (optimizer): applied"}) {
    EXPECT_NE(err.find(std::string("gpuscope apply: ") + line), std::string::npos) << line << "\n" << err;
  }
  const nlohmann::json a = adviceJson(dir_, before), b = adviceJson(dir_, after);
  ASSERT_TRUE(a.is_object() && b.is_object());
  const std::vector<std::string> seen = findingIds(a), left = findingIds(b);
  std::string left_titles;
  for (const auto& f : b.value("findings", nlohmann::json::array())) left_titles += f.value("title", "") + "\n";
  for (const char* id : {"unfused_optimizer", "fp32_gemm", "input_pipeline"}) {
    EXPECT_NE(std::find(seen.begin(), seen.end(), id), seen.end()) << id;
    EXPECT_EQ(std::find(left.begin(), left.end(), id), left.end()) << id << " left after apply:\n"
                                                                   << left_titles << "apply said:\n"
                                                                   << err;
  }
  const auto step = [](const nlohmann::json& advice) { return advice["measured"].value("step_time_ns", 0.0); };
  const auto peak = [](const nlohmann::json& advice) { return advice["measured"].value("peak_memory_bytes", 0.0); };
  EXPECT_LT(step(b), 0.5 * step(a));
  EXPECT_LT(peak(b), 0.6 * peak(a));
}

TEST_F(RecordSample, DisableSwitchLeavesTheProgramAlone) {
  const std::string trace = dir_.path("off.gpuscope");
  const std::string cmd = "GPUSCOPE_DISABLE=1 " + testing::gpuscopeBinary() + " record -o " + trace + " -- " +
                          testing::binDir() + "/sample_launch_bound >" + dir_.path("out") + " 2>" + dir_.path("err");
  const int status = std::system(cmd.c_str());
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  EXPECT_NE(testing::readFile(dir_.path("out")).find("self-check passed"), std::string::npos);
  EXPECT_FALSE(std::filesystem::exists(trace));
}

// `gpuscope record -q -o TRACE -- sample_faults MODE`.
RecordRun recordFault(const TempDir& dir, const std::string& mode, const std::string& output) {
  return runRecord(dir, "-q", output, testing::binDir() + "/sample_faults " + mode);
}

// A program that aborts, segfaults or leaves with _exit ends as it would without gpuscope, and its trace
// holds the work done before the end (the collector flushes on the signal; _exit allows no flush, so what
// the periodic flush committed is kept), with a data-quality row naming the signal.
TEST_F(RecordSample, FaultEndingsKeepTheExitStatusAndTheTrace) {
  struct Case {
    const char* mode;
    int status;
    int64_t signal_rows;
  };
  for (const Case& c : {Case{"abort", 128 + SIGABRT, 1}, Case{"segv", 128 + SIGSEGV, 1}, Case{"exit", 7, 0}}) {
    SCOPED_TRACE(c.mode);
    RecordRun run = recordFault(dir_, c.mode, dir_.path(std::string(c.mode) + ".gpuscope"));
    EXPECT_EQ(run.status, c.status) << run.err;
    EXPECT_NE(run.out.find("work done"), std::string::npos) << run.out;
    ASSERT_TRUE(run.trace) << run.err;
    TraceReader& r = *run.trace;
    EXPECT_GE(query(r, "SELECT count(*) FROM kernel"), 1000);
    EXPECT_EQ(query(r, "SELECT count(*) FROM data_quality WHERE code = 'terminated_by_signal'"), c.signal_rows);
  }
}

// Under GPUSCOPE_DEBUG a crash says whose code it was in: the faulting thread's native frames, the program's
// own among them, before the signal acts as it would have.
TEST_F(RecordSample, DebugCrashPrintsTheNativeStack) {
  const RecordRun quiet = recordFault(dir_, "segv", dir_.path("segv-quiet.gpuscope"));
  EXPECT_EQ(quiet.err.find("native stack:"), std::string::npos) << "printed without GPUSCOPE_DEBUG:\n" << quiet.err;
  const RecordRun run = runRecord(dir_, "-q", dir_.path("segv-debug.gpuscope"),
                                  "env GPUSCOPE_DEBUG=1 " + testing::binDir() + "/sample_faults segv");
  EXPECT_EQ(run.status, 128 + SIGSEGV) << run.err;
  EXPECT_NE(run.err.find("native stack:"), std::string::npos) << run.err;
  EXPECT_NE(run.err.find("sample_faults("), std::string::npos) << run.err;
}

// Runs that end well under stress are recorded whole: the program's self-check passes, and the trace holds
// what it did.
TEST_F(RecordSample, FaultStressRunsAreRecordedWhole) {
  struct Case {
    const char* mode;
    std::vector<std::pair<std::string, int64_t>> expected;  // query, its value
  };
  const Case cases[] = {
      // 16 host threads on 8 streams: every kernel, on its stream, none dropped.
      {"threads",
       {{"SELECT count(*) FROM kernel", 80000},
        {"SELECT count(DISTINCT stream_id) FROM kernel", 8},
        {"SELECT count(*) FROM data_quality WHERE code = 'dropped_records'", 0}}},
      // Out of GPU memory is the program's to handle: it sees cudaMalloc fail, frees, works on; the trace
      // shows the failed calls.
      {"oom",
       {{"SELECT count(*) > 0 FROM api_call_view WHERE name_text LIKE 'cudaMalloc%' AND return_code != 0", 1},
        {"SELECT count(*) FROM kernel", 1000}}},
      // A CUDA program that forks and execs itself: both processes recorded and merged into one trace.
      {"fork", {{"SELECT count(*) FROM session", 2}, {"SELECT count(*) FROM kernel", 3000}}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.mode);
    RecordRun run = recordFault(dir_, c.mode, dir_.path(std::string(c.mode) + ".gpuscope"));
    EXPECT_EQ(run.status, 0) << run.err;
    EXPECT_NE(run.out.find(std::string("faults ") + c.mode + ": self-check passed"), std::string::npos)
        << run.out << run.err;
    ASSERT_TRUE(run.trace) << run.err;
    for (const auto& [sql, value] : c.expected) EXPECT_EQ(query(*run.trace, sql), value) << sql;
  }
}

// An output folder that cannot be written: one clear error before the program runs, nothing left behind.
TEST_F(RecordSample, FaultUnwritableOutputIsRefusedUpFront) {
  RecordRun run = recordFault(dir_, "child", "/proc/gpuscope-no-such-folder/t.gpuscope");
  EXPECT_EQ(run.status, 1);
  EXPECT_NE(run.err.find("/proc/gpuscope-no-such-folder/t.gpuscope"), std::string::npos) << run.err;
  EXPECT_EQ(run.out.find("self-check"), std::string::npos) << "the program ran: " << run.out;
}

// A full filesystem (a 1 MiB tmpfs): the program runs and ends as without gpuscope; gpuscope says the disk
// was full and that no trace was written, and keeps what the process wrote.
TEST_F(RecordSample, FaultFullFilesystemLeavesTheProgramAlone) {
  const std::string small = dir_.path("small");
  std::filesystem::create_directory(small);
  if (std::system(("mount -t tmpfs -o size=1m tmpfs " + small + " 2>/dev/null").c_str()) != 0) {
    GTEST_SKIP() << "cannot mount a small tmpfs here (needs CAP_SYS_ADMIN): full-filesystem case not run";
  }
  RecordRun run = recordFault(dir_, "threads", small + "/threads.gpuscope");
  std::system(("umount " + small).c_str());
  EXPECT_EQ(run.status, 0) << run.err;  // the program's
  EXPECT_NE(run.out.find("self-check passed"), std::string::npos) << run.out << run.err;
  EXPECT_NE(run.err.find("disk is full"), std::string::npos) << run.err;
  EXPECT_NE(run.err.find("no trace written"), std::string::npos) << run.err;
  EXPECT_NE(run.err.find("empty gpuscope trace"), std::string::npos) << run.err;
  EXPECT_FALSE(run.trace);
}

}  // namespace
}  // namespace gpuscope
