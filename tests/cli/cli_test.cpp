// The gpuscope executable, run as a user would: exit statuses, help, messages, outputs.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <algorithm>
#include <sstream>

#include <nlohmann/json.hpp>

#include "cli/record_summary.h"
#include "formats/bridge_marks.h"
#include "formats/sqlite_db.h"
#include "tests/support/sample_trace.h"
#include "tests/support/trace_builder.h"

namespace gpuscope {
namespace {

using testing::TempDir;

struct CliRun {
  int status;
  std::string out;
  std::string err;
};

CliRun gpuscope(const std::vector<std::string>& args) {
  TempDir dir;
  testing::GpuscopeRun run = testing::runGpuscope(args, dir);
  return {WIFEXITED(run.wait_status) ? WEXITSTATUS(run.wait_status) : -1, run.out, run.err};
}

int lines(const std::string& s) { return static_cast<int>(std::count(s.begin(), s.end(), '\n')); }

// Unified memory's records by kind, under its own name and nsys's: migrations with their bytes and time, CPU faults
// counted (CUPTI gives them no duration).
TEST(Cli, TheUnifiedMemoryReportSumsEachKind) {
  TempDir dir;
  testing::TraceBuilder b(dir.path("t.gpuscope"));
  b.kernel("k", 1'000'000, 9'000'000);
  for (int i = 0; i < 4; ++i) {
    const int64_t t = 2'000'000 + i * 1'000'000;
    b.row(schema::UnifiedMemoryRow{1, schema::MigrationKind::kToDevice, t, t + 250'000, 2 << 20});
    b.row(schema::UnifiedMemoryRow{1, schema::MigrationKind::kHostFault, t, t});
  }
  ASSERT_TRUE(b.finish());
  for (const char* name : {"unified_memory", "um_sum"}) {
    const CliRun r = gpuscope({"stats", "--report", name, "--format", "csv", dir.path("t.gpuscope")});
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_NE(r.out.find("to_device,4,8388608,1000000"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("host_fault,4,0,0"), std::string::npos) << r.out;
  }
}

// The steps `record --torch`'s bridge ran with the recording paused are listed as such: no kernels of theirs are in the
// trace, and they are in no step figure.
TEST(Cli, TheIterationsReportNamesThePausedSteps) {
  TempDir dir;
  testing::TraceBuilder b(dir.path("t.gpuscope"));
  int64_t t = 1'000'000;
  for (int step = 0; step < 10; ++step) {
    if (step == 1) b.mark("gpuscope: module hooks removed", t - 100);
    if (step == 4) b.mark(std::string(marks::kRecordingPaused), t - 100);
    if (step == 6) b.mark(std::string(marks::kRecordingResumed), t - 100);
    b.nvtx("Net (forward)", t, t + 40'000);
    if (step < 4 || step >= 6) b.kernel("k", t + 2'000, t + 9'000);
    b.nvtx("optimizer.step (SGD)", t + 60'000, t + 70'000);
    t += 100'000;
  }
  ASSERT_TRUE(b.finish());
  const CliRun r = gpuscope({"stats", "--report", "iterations", "--format", "csv", dir.path("t.gpuscope")});
  ASSERT_EQ(r.status, 0) << r.err;
  std::istringstream rows(r.out);
  std::string row;
  std::vector<std::string> recorded;
  while (std::getline(rows, row)) {
    if (row.empty() || !std::isdigit(static_cast<unsigned char>(row[0]))) continue;  // the header
    std::istringstream cells(row);
    std::vector<std::string> cell(3);
    for (std::string& c : cell) std::getline(cells, c, ',');
    recorded.push_back(cell[2]);  // index, warm-up, recorded, ...
  }
  EXPECT_EQ(recorded,
            (std::vector<std::string>{"yes", "yes", "yes", "yes", "paused", "paused", "yes", "yes", "yes", "yes"}))
      << r.out;
}

// What `record` prints when it ends: CUDA graph launches recorded whole (--cuda-graph-trace graph) are counted.
TEST(Cli, TheRecordSummaryCountsGraphsRecordedWhole) {
  TempDir dir;
  const std::string path = dir.path("sample.gpuscope");
  ASSERT_TRUE(testing::writeSampleTrace(path));
  Result<TraceReader> reader = TraceReader::open(path);
  ASSERT_TRUE(reader);
  Result<cli::RecordSummary> s = cli::summarize(*reader);
  ASSERT_TRUE(s) << s.status().message();
  EXPECT_EQ(s->graph_launches, 1);
  EXPECT_NE(cli::formatSummary(path, *s).find(" kernels, 1 CUDA graph launch recorded whole, GPU busy"),
            std::string::npos)
      << cli::formatSummary(path, *s);
}

TEST(Cli, VersionAndHelp) {
  CliRun v = gpuscope({"--version"});
  EXPECT_EQ(v.status, 0);
  EXPECT_NE(v.out.find("gpuscope 0.1.0 (trace schema 5)"), std::string::npos) << v.out;
  CliRun h = gpuscope({"--help"});
  EXPECT_EQ(h.status, 0);
  for (const char* cmd : {"record", "stats", "advise", "export", "import", "diff", "merge", "apply"}) {
    EXPECT_NE(h.out.find(std::string("\n  ") + cmd + " "), std::string::npos) << cmd;
  }
}

TEST(Cli, NoArgumentsIsAUsageError) {
  CliRun r = gpuscope({});
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("usage: gpuscope COMMAND"), std::string::npos);
}

TEST(Cli, EveryCommandHasHelp) {
  for (const char* cmd : {"record", "stats", "advise", "export", "import", "diff", "merge", "apply", "info"}) {
    CliRun r = gpuscope({cmd, "--help"});
    EXPECT_EQ(r.status, 0) << cmd;
    EXPECT_EQ(r.out.rfind(std::string("usage: gpuscope ") + cmd, 0), 0u) << r.out;
    EXPECT_NE(r.out.find("--help"), std::string::npos) << cmd;
  }
}

// apply checks the plan before it starts anything, then becomes the program, with the plan and the
// bridge in its environment.
TEST(Cli, ApplyRunsTheProgramWithThePlan) {
  TempDir dir;
  CliRun bad = gpuscope({"apply", "--plan", dir.path("none.json"), "--", "true"});
  EXPECT_EQ(bad.status, 1);
  EXPECT_EQ(lines(bad.err), 1) << bad.err;
  CliRun usage = gpuscope({"apply", "--", "true"});
  EXPECT_EQ(usage.status, 2);
  testing::writeFile(dir.path("plan.json"),
                     R"({"format": "gpuscope-plan", "version": 1, "trace": "t.gpuscope", "step_basis": "run",)"
                     R"( "measured": {"step_time_ns": 10, "peak_memory_bytes": 0},)"
                     R"( "predicted": {"step_time_ns": 5, "peak_memory_bytes": 0}, "prediction_basis": "x",)"
                     R"( "fixes": [{"id": "precision-1", "kind": "precision", "rule": "fp32_gemm",)"
                     R"( "setting": "bf16_autocast"}]})");
  CliRun run = gpuscope({"apply", "--plan", dir.path("plan.json"), "--", "sh", "-c",
                         "echo \"$GPUSCOPE_TORCH $GPUSCOPE_PLAN\"; case \"$PYTHONPATH\" in */python/bootstrap:*) "
                         "echo bridge;; esac; exit 4"});
  EXPECT_EQ(run.status, 4);
  EXPECT_EQ(run.out, "apply " + std::filesystem::absolute(dir.path("plan.json")).string() + "\nbridge\n") << run.err;
  // It ran as written first, its output kept in a log (the bridge noting values there), and ended the same way.
  const std::string first = "its output: ";
  const size_t at = run.err.find(first);
  ASSERT_NE(at, std::string::npos) << run.err;
  const std::string log = run.err.substr(at + first.size(), run.err.find(';', at) - at - first.size());
  EXPECT_EQ(testing::readFile(log), "values \nbridge\n");
  EXPECT_NE(run.err.find("gpuscope apply: exit code 4, as the run as written"), std::string::npos) << run.err;
  // Stopped by a signal as written (Ctrl-C, a scheduler's kill): gpuscope ends the same way, the plan not run.
  CliRun stopped = gpuscope({"apply", "--plan", dir.path("plan.json"), "--", "sh", "-c",
                             "[ \"$GPUSCOPE_TORCH\" = values ] && kill -TERM $$; echo ran"});
  EXPECT_EQ(stopped.status, -1);  // killed, not exited
  EXPECT_EQ(stopped.out, "");
  EXPECT_NE(stopped.err.find("the run as written ended on signal 15; the plan was not run"), std::string::npos)
      << stopped.err;
  CliRun once = gpuscope({"apply", "--plan", dir.path("plan.json"), "--no-verify", "--", "sh", "-c", "exit 5"});
  EXPECT_EQ(once.status, 5);
  EXPECT_EQ(once.err.find("as written"), std::string::npos) << once.err;
  // A budget that is no number of seconds is one usage error before the program runs.
  CliRun budget =
      gpuscope({"apply", "--plan", dir.path("plan.json"), "--search-budget", "soon", "--", "sh", "-c", "echo ran"});
  EXPECT_EQ(budget.status, 2);
  EXPECT_EQ(budget.out, "");
  EXPECT_EQ(budget.err, "gpuscope apply: --search-budget needs a number of seconds, not 'soon'\n");
  CliRun missing = gpuscope({"apply", "--plan", dir.path("plan.json"), "--", "/no/such/program"});
  EXPECT_EQ(missing.status, 1);
  EXPECT_NE(missing.err.find("cannot run '/no/such/program'"), std::string::npos) << missing.err;
}

TEST(Cli, ImportReadsAMemorySnapshot) {
  TempDir dir;
  CliRun r = gpuscope({"import", testing::fixturePath("pytorch_memory_snapshot.json"), "-o", dir.path("t.gpuscope")});
  EXPECT_EQ(r.status, 0) << r.err;
  CliRun info = gpuscope({"info", dir.path("t.gpuscope")});
  EXPECT_NE(info.out.find("allocator_event    1827 rows"), std::string::npos) << info.out;
  testing::writeFile(dir.path("trace.json"), "{\"traceEvents\": []}");  // nothing in it to read
  CliRun chrome = gpuscope({"import", dir.path("trace.json"), "-o", dir.path("c.gpuscope")});
  EXPECT_EQ(chrome.status, 1);
  EXPECT_EQ(lines(chrome.err), 1) << chrome.err;
  EXPECT_FALSE(std::filesystem::exists(dir.path("c.gpuscope")));
  CliRun usage = gpuscope({"import", dir.path("trace.json")});
  EXPECT_EQ(usage.status, 2);
}

// A trace whose program failed says so on its first lines, in info and in advise, and advise predicts nothing.
TEST(Cli, AFailedRunIsSaidFirst) {
  TempDir dir;
  std::filesystem::copy_file(testing::fixturePath("advisor_naive.gpuscope"), dir.path("t.gpuscope"));
  std::filesystem::permissions(dir.path("t.gpuscope"), std::filesystem::perms::owner_write,
                               std::filesystem::perm_options::add);
  {
    Result<sqlite::Database> db = sqlite::Database::open(dir.path("t.gpuscope"), sqlite::Database::Mode::kCreate);
    ASSERT_TRUE(db);
    ASSERT_TRUE(
        db->exec("INSERT INTO data_quality (session_id, severity, code, count, message) VALUES (NULL, 2, "
                 "'program_failed', 1, 'the program exited with code 1')"));
  }
  const CliRun info = gpuscope({"info", dir.path("t.gpuscope")});
  EXPECT_EQ(info.status, 0) << info.err;
  EXPECT_EQ(info.out.find("FAILED RUN: the program exited with code 1\n"), info.out.find('\n') + 1) << info.out;
  const CliRun advise = gpuscope({"advise", dir.path("t.gpuscope")});
  EXPECT_EQ(advise.status, 0) << advise.err;
  EXPECT_NE(advise.out.find("Failed    the program exited with code 1: the figures below"), std::string::npos)
      << advise.out;
  EXPECT_EQ(advise.out.find("Predicted"), std::string::npos) << advise.out;
}

TEST(Cli, MergeCombinesTraces) {
  TempDir dir;
  ASSERT_TRUE(testing::writeSampleTrace(dir.path("a.gpuscope")));
  ASSERT_TRUE(testing::writeSampleTrace(dir.path("b.gpuscope")));
  CliRun r = gpuscope({"merge", dir.path("a.gpuscope"), dir.path("b.gpuscope"), "-o", dir.path("ab.gpuscope")});
  EXPECT_EQ(r.status, 0) << r.err;
  CliRun info = gpuscope({"info", dir.path("ab.gpuscope")});
  EXPECT_NE(info.out.find("processes: 2"), std::string::npos) << info.out;
  EXPECT_NE(info.out.find("kernel             10 rows"), std::string::npos) << info.out;
  EXPECT_EQ(gpuscope({"merge", dir.path("a.gpuscope")}).status, 2);  // no -o
}

// The real 2-rank DDP job (tests/fixtures/multirank/README.md): each GPU once though three processes saw both,
// the ranks with their world size, and a ranks table with one row per rank.
TEST(Cli, MultiRankJob) {
  CliRun info = gpuscope({"info", GPUSCOPE_MULTIRANK_TRACE});
  EXPECT_EQ(info.status, 0) << info.err;
  EXPECT_NE(info.out.find("GPUs: 2\n"), std::string::npos) << info.out;
  EXPECT_NE(info.out.find("seen by pids 629, 650, 651"), std::string::npos) << info.out;
  EXPECT_NE(info.out.find("rank 1 of 2 (local rank 1)"), std::string::npos) << info.out;
  EXPECT_NE(info.out.find("in 3 processes"), std::string::npos) << info.out;
  CliRun ranks = gpuscope({"stats", "--report", "ranks", "--format", "csv", GPUSCOPE_MULTIRANK_TRACE});
  EXPECT_EQ(ranks.status, 0) << ranks.err;
  EXPECT_EQ(std::count(ranks.out.begin(), ranks.out.end(), '\n'), 3) << ranks.out;  // header and two ranks
  CliRun table = gpuscope({"stats", GPUSCOPE_MULTIRANK_TRACE});
  EXPECT_NE(table.out.find("Ranks (2 ranks on one host"), std::string::npos) << table.out;
  // Each rank's own code (its host's stretches with no CUDA call): rank 1, the late one, 2.2 ms a step.
  CliRun json = gpuscope({"stats", "--report", "ranks", "--format", "json", GPUSCOPE_MULTIRANK_TRACE});
  ASSERT_EQ(json.status, 0) << json.err;
  const nlohmann::json rows = nlohmann::json::parse(json.out)["ranks"];
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0]["away_ns"].get<int64_t>(), 0);
  EXPECT_NEAR(rows[1]["away_ns"].get<double>(), 2.18e6, 0.01e6);
  CliRun single = gpuscope({"stats", testing::fixturePath("pytorch_gpt2_step.gpuscope")});
  EXPECT_EQ(single.out.find("Ranks"), std::string::npos);  // one process: no ranks table
  // Three processes saw both GPUs; each rank ran on one, the launcher on none: two rows, not six.
  for (const char* report : {"devices", "timeline"}) {
    CliRun per_gpu = gpuscope({"stats", "--report", report, "--format", "json", GPUSCOPE_MULTIRANK_TRACE});
    ASSERT_EQ(per_gpu.status, 0) << per_gpu.err;
    EXPECT_EQ(nlohmann::json::parse(per_gpu.out)[report].size(), 2u) << report << ": " << per_gpu.out;
  }
}

// NCCL's sizes survive the way to HTA and back (the recorded sweep of tests/fixtures/multirank/README.md): the
// per-rank export writes torch.profiler's args for each NCCL kernel, and importing that folder gives the same
// collectives table, bus bandwidths included.
TEST(Cli, CollectivesSurviveExportAndImport) {
  const std::string trace = std::string(GPUSCOPE_NCCL_SWEEP) + "/sweep-on.gpuscope";
  TempDir dir;
  ASSERT_EQ(gpuscope({"export", "--per-rank", trace, "-o", dir.path("ranks")}).status, 0);
  const nlohmann::json rank0 = nlohmann::json::parse(testing::readFile(dir.path("ranks/rank-0.json")));
  int64_t sized = 0;
  for (const nlohmann::json& e : rank0["traceEvents"]) {
    if (e.value("cat", "") != "kernel" || !e["name"].get<std::string>().starts_with("ncclDevKernel")) continue;
    sized += e["args"].contains("In msg nelems") && e["args"]["Group size"] == 2;
  }
  EXPECT_EQ(sized, 288);  // every NCCL kernel of rank 0
  ASSERT_EQ(gpuscope({"import", dir.path("ranks"), "-o", dir.path("again.gpuscope")}).status, 0);
  const CliRun before = gpuscope({"stats", "--report", "collectives", "--format", "csv", trace});
  const CliRun after = gpuscope({"stats", "--report", "collectives", "--format", "csv", dir.path("again.gpuscope")});
  ASSERT_EQ(before.status, 0) << before.err;
  EXPECT_EQ(lines(before.out), 27);  // header, 13 kinds and sizes on each rank
  // The same rows up to the bus bandwidth: torch.profiler's args do not carry NCCL's algorithm and protocol.
  auto sizes = [](const std::string& csv) {
    std::string kept;
    std::istringstream in(csv);
    for (std::string line; std::getline(in, line);) {
      size_t end = 0;
      for (int field = 0; field < 7 && end != std::string::npos; ++field) end = line.find(',', end + 1);
      kept += line.substr(0, end) + "\n";
    }
    return kept;
  };
  EXPECT_EQ(sizes(after.out), sizes(before.out));
}

// info names the GPUs' NVLink once per pair and the environment each value once (the sweep with peer-to-peer off).
TEST(Cli, InfoShowsTheLinksAndTheEnvironment) {
  const CliRun info = gpuscope({"info", std::string(GPUSCOPE_NCCL_SWEEP) + "/sweep-off.gpuscope"});
  EXPECT_EQ(info.status, 0) << info.err;
  EXPECT_NE(info.out.find("\n  NVLink 4 between GPU 0 and GPU 1: 18 links through NVSwitch, 425.0 GB/s each way\n"),
            std::string::npos)
      << info.out;
  EXPECT_EQ(info.out.find("NVLink 4 between GPU 1"), std::string::npos) << info.out;  // each pair once
  EXPECT_NE(info.out.find("\n  NCCL_P2P_DISABLE=1 (3 processes)\n"), std::string::npos) << info.out;
  EXPECT_EQ(info.out.find("CUDA_INJECTION64_PATH"), std::string::npos) << info.out;  // gpuscope's own: not kept
}

TEST(Cli, UsageErrorsExitWithTwo) {
  CliRun unknown = gpuscope({"frobnicate"});
  EXPECT_EQ(unknown.status, 2);
  EXPECT_EQ(unknown.err, "gpuscope: unknown command 'frobnicate' (see gpuscope --help)\n");
  CliRun option = gpuscope({"export", "--bogus", "t.gpuscope"});
  EXPECT_EQ(option.status, 2);
  EXPECT_EQ(option.err, "gpuscope export: unknown option '--bogus' (see gpuscope export --help)\n");
  CliRun value = gpuscope({"export", "t.gpuscope", "-o"});
  EXPECT_EQ(value.status, 2);
  EXPECT_NE(value.err.find("needs a value"), std::string::npos);
  CliRun format = gpuscope({"export", "t.gpuscope", "--format", "pprof"});
  EXPECT_EQ(format.status, 2);
  EXPECT_NE(format.err.find("unknown format 'pprof'"), std::string::npos);
}

TEST(Cli, ExportWritesChromeJson) {
  TempDir dir;
  ASSERT_TRUE(testing::writeSampleTrace(dir.path("run.gpuscope")));
  CliRun r = gpuscope({"export", dir.path("run.gpuscope"), "--format=chrome"});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.err.find("wrote " + dir.path("run.json")), std::string::npos) << r.err;  // default name
  const auto trace = nlohmann::json::parse(testing::readFile(dir.path("run.json")));
  EXPECT_GT(trace["traceEvents"].size(), 20u);
  // A second export to the same file needs --force.
  CliRun again = gpuscope({"export", dir.path("run.gpuscope"), "-o", dir.path("run.json")});
  EXPECT_EQ(again.status, 2);
  EXPECT_NE(again.err.find("--force"), std::string::npos);
  EXPECT_EQ(gpuscope({"export", dir.path("run.gpuscope"), "-o", dir.path("run.json"), "-f", "-q"}).status, 0);
}

TEST(Cli, BadInputsGiveOneLineAndExitOne) {
  TempDir dir;
  testing::writeFile(dir.path("text.gpuscope"), "hello");
  ASSERT_TRUE(testing::writeEmptyTrace(dir.path("empty.gpuscope")));
  ASSERT_TRUE(testing::writeSampleTrace(dir.path("ok.gpuscope")));
  const std::vector<std::vector<std::string>> cases = {
      {"export", dir.path("missing.gpuscope")},
      {"export", dir.path("text.gpuscope")},
      {"export", dir.path("empty.gpuscope")},
      {"export", dir.path("ok.gpuscope"), "-o", dir.path("no/such/dir/out.json")},
      {"info", dir.path("text.gpuscope")},
      {"stats", dir.path("missing.gpuscope")},
      {"stats", dir.path("text.gpuscope")},
      {"advise", dir.path("missing.gpuscope")},
      {"advise", dir.path("text.gpuscope")},
      {"advise", dir.path("ok.gpuscope"), "-o", dir.path("no/such/dir/advice.md")},
  };
  for (const auto& args : cases) {
    CliRun r = gpuscope(args);
    EXPECT_EQ(r.status, 1) << args[1];
    EXPECT_EQ(lines(r.err), 1) << r.err;
    EXPECT_EQ(r.err.rfind("gpuscope " + args[0] + ": ", 0), 0u) << r.err;
  }
}

TEST(Cli, StatsJsonHasTheDocumentedSummary) {
  CliRun r = gpuscope({"stats", testing::fixturePath("multi_stream.gpuscope"), "--format", "json"});
  ASSERT_EQ(r.status, 0) << r.err;
  const auto stats = nlohmann::json::parse(r.out);
  EXPECT_EQ(stats["gpuscope_stats_version"], 1);
  EXPECT_EQ(stats["summary"]["kernel_count"], 32);
  EXPECT_GT(stats["summary"]["duration_ns"].get<int64_t>(), stats["summary"]["gpu_busy_ns"].get<int64_t>());
  EXPECT_EQ(stats["kernels"][0]["name"], "work(float*, int, int)");
  EXPECT_EQ(stats["streams"].size(), 4u);
  for (const char* report : {"kernel_classes", "api", "transfers", "nvtx", "devices", "warnings"}) {
    EXPECT_TRUE(stats[report].is_array()) << report;
  }
}

TEST(Cli, StatsTablesCsvAndReportNames) {
  const std::string trace = testing::fixturePath("elementwise_chain.gpuscope");
  CliRun table = gpuscope({"stats", trace});
  ASSERT_EQ(table.status, 0) << table.err;
  for (const char* title : {"Summary", "Kernels by name", "Kernels by class", "CUDA API calls", "Copies and memsets",
                            "Devices", "Streams"}) {
    EXPECT_NE(table.out.find(title), std::string::npos) << title;
  }
  EXPECT_NE(table.out.find("Total (ms)"), std::string::npos) << table.out;  // units in the headers
  CliRun csv = gpuscope({"stats", trace, "--report", "cuda_gpu_kern_sum", "--format", "csv"});
  ASSERT_EQ(csv.status, 0) << csv.err;
  EXPECT_EQ(csv.out.rfind("share_of_gpu,count,total_ns,", 0), 0u) << csv.out;
  EXPECT_EQ(lines(csv.out), 5);                                        // header and four kernels
  EXPECT_EQ(gpuscope({"stats", trace, "--format", "csv"}).status, 2);  // CSV needs one report
  EXPECT_EQ(gpuscope({"stats", trace, "--report", "bogus"}).status, 2);
  EXPECT_EQ(gpuscope({"stats", trace, "--format", "xml"}).status, 2);
  EXPECT_EQ(gpuscope({"stats", trace, "--limit", "-3"}).status, 2);
}

// advisor_tuned.gpuscope holds two processes on GPU 0: the training loop, and torch.compile's compile worker,
// which opened the device and allocated nothing. Only the first has a memory peak to report.
TEST(Cli, MemoryReportLeavesOutProcessesThatAllocatedNothing) {
  CliRun csv =
      gpuscope({"stats", testing::fixturePath("advisor_tuned.gpuscope"), "--report", "memory", "--format", "csv"});
  ASSERT_EQ(csv.status, 0) << csv.err;
  EXPECT_EQ(lines(csv.out), 2) << csv.out;  // header and one device
  EXPECT_EQ(csv.out.find(",-"), std::string::npos) << csv.out;
}

TEST(Cli, DiffComparesTwoRuns) {
  const std::string a = testing::fixturePath("pytorch_gpt2_step.gpuscope");
  const std::string b = testing::fixturePath("pytorch_resnet_step.gpuscope");
  CliRun table = gpuscope({"diff", a, b});
  ASSERT_EQ(table.status, 0) << table.err;
  EXPECT_NE(table.out.find("Step (start to start)"), std::string::npos) << table.out;
  EXPECT_NE(table.out.find("Kernel time by class (per steady iteration)"), std::string::npos);
  CliRun json = gpuscope({"diff", a, b, "--format", "json"});
  ASSERT_EQ(json.status, 0) << json.err;
  const auto d = nlohmann::json::parse(json.out);
  EXPECT_EQ(d["gpuscope_diff_version"], 1);
  EXPECT_TRUE(d["per_iteration"].get<bool>());
  EXPECT_GT(d["iteration_ns"]["before"].get<double>(), d["iteration_ns"]["after"].get<double>());
  EXPECT_FALSE(d["appeared"].empty());
  EXPECT_EQ(gpuscope({"diff", a}).status, 2);
  EXPECT_EQ(gpuscope({"diff", a, "/nonexistent.gpuscope"}).status, 1);
}

TEST(Cli, AdviseWritesEachFormatAndThePlan) {
  TempDir dir;
  const std::string naive = testing::fixturePath("advisor_naive.gpuscope");
  CliRun text = gpuscope({"advise", naive});
  EXPECT_EQ(text.status, 0) << text.err;
  EXPECT_NE(text.out.find("[high]"), std::string::npos) << text.out;
  EXPECT_EQ(text.out.find("\033["), std::string::npos);  // no colour when not on a terminal
  CliRun md =
      gpuscope({"advise", naive, "--format", "md", "-o", dir.path("advice.md"), "--plan", dir.path("plan.json")});
  EXPECT_EQ(md.status, 0) << md.err;
  EXPECT_EQ(md.out, "");
  EXPECT_EQ(testing::readFile(dir.path("advice.md")).rfind("# gpuscope advice", 0), 0u);
  EXPECT_EQ(testing::jsonSchemaProblem("formats/plan.schema.json", dir.path("plan.json")), "");
  // Neither file is replaced without --force, and a refusal leaves both as they were.
  const std::string before = testing::readFile(dir.path("advice.md"));
  CliRun again = gpuscope({"advise", naive, "--format", "html", "-o", dir.path("advice.md")});
  EXPECT_NE(again.status, 0);
  EXPECT_EQ(testing::readFile(dir.path("advice.md")), before);
  EXPECT_EQ(gpuscope({"advise", naive, "--format", "html", "-o", dir.path("advice.md"), "-f"}).status, 0);
  EXPECT_EQ(testing::readFile(dir.path("advice.md")).rfind("<!DOCTYPE html>", 0), 0u);
  CliRun json = gpuscope({"advise", naive, "--format", "json"});
  EXPECT_EQ(nlohmann::json::parse(json.out)["format"], "gpuscope-advice");
}

TEST(Cli, AdviseFailOnAndUsageErrors) {
  const std::string naive = testing::fixturePath("advisor_naive.gpuscope");
  EXPECT_EQ(gpuscope({"advise", naive, "--fail-on", "high"}).status, 3);
  EXPECT_EQ(gpuscope({"advise", testing::fixturePath("multi_stream.gpuscope"), "--fail-on", "low"}).status, 0);
  CliRun format = gpuscope({"advise", naive, "--format", "pdf"});
  EXPECT_EQ(format.status, 2);
  EXPECT_NE(format.err.find("unknown format 'pdf'"), std::string::npos);
  CliRun severity = gpuscope({"advise", naive, "--fail-on", "urgent"});
  EXPECT_EQ(severity.status, 2);
  EXPECT_NE(severity.err.find("unknown severity 'urgent'"), std::string::npos);
  EXPECT_EQ(gpuscope({"advise"}).status, 2);
  CliRun rules = gpuscope({"advise", "--rules"});
  EXPECT_EQ(rules.status, 0);
  EXPECT_NE(rules.out.find("launch_bound\n"), std::string::npos);
  EXPECT_NE(rules.out.find("fires when"), std::string::npos);
}

// The real 2-rank DDP job: --rank chooses the process advised on (by default rank 0's, the one with the most GPU
// work); a rank the trace has not, or no number, is one clear error.
TEST(Cli, AdviseOnTheRankChosen) {
  CliRun first = gpuscope({"advise", GPUSCOPE_MULTIRANK_TRACE});
  EXPECT_EQ(first.status, 0) << first.err;
  EXPECT_NE(first.out.find("of pid 650 (rank 0)"), std::string::npos) << first.out;
  CliRun late = gpuscope({"advise", "--rank", "1", GPUSCOPE_MULTIRANK_TRACE});
  EXPECT_EQ(late.status, 0) << late.err;
  EXPECT_NE(late.out.find("PyTorch on GPU 1 (NVIDIA H200) of pid 651 (rank 1)"), std::string::npos) << late.out;
  EXPECT_NE(late.out.find("Rank 1 makes the other ranks wait"), std::string::npos) << late.out;
  CliRun absent = gpuscope({"advise", "--rank", "7", GPUSCOPE_MULTIRANK_TRACE});
  EXPECT_EQ(absent.status, 2);
  EXPECT_NE(absent.err.find("no process of rank 7 in "), std::string::npos) << absent.err;
  EXPECT_NE(absent.err.find("(its ranks: 0, 1)"), std::string::npos) << absent.err;
  EXPECT_EQ(gpuscope({"advise", "--rank", "one", GPUSCOPE_MULTIRANK_TRACE}).status, 2);
  CliRun single = gpuscope({"advise", "--rank", "0", testing::fixturePath("advisor_naive.gpuscope")});
  EXPECT_EQ(single.status, 2);
  EXPECT_NE(single.err.find("(its ranks: none)"), std::string::npos) << single.err;
}

TEST(Cli, InfoDescribesTheTrace) {
  TempDir dir;
  ASSERT_TRUE(testing::writeSampleTrace(dir.path("run.gpuscope")));
  CliRun r = gpuscope({"info", dir.path("run.gpuscope")});
  EXPECT_EQ(r.status, 0) << r.err;
  for (const char* text : {"pid 4242 on gpu-node-1, rank 0 of 1 (local rank 0): python train.py --lr 0.1",
                           "CUDA driver 13.0", "GPU 0: NVIDIA H100 80GB HBM3, sm_90, 132 SMs, 79.2 GiB",
                           "kernel             5 rows", "warning dropped_records (3)"}) {
    EXPECT_NE(r.out.find(text), std::string::npos) << text << "\n" << r.out;
  }
}

}  // namespace
}  // namespace gpuscope
