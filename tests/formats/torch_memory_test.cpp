// PyTorch memory snapshots (tests/fixtures/pytorch_memory_snapshot.pickle, dumped on an H100, and its JSON twin) read
// into trace rows; the bridge's allocator events merged into the session of their process; bad snapshots refused with
// one clear error.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "formats/kineto_import.h"
#include "formats/pickle_file.h"
#include "formats/torch_memory.h"
#include "formats/trace_import.h"
#include "formats/trace_merge.h"
#include "formats/trace_reader.h"
#include "tests/support/sample_trace.h"

namespace gpuscope {
namespace {

using schema::AllocatorAction;

int64_t countOf(const TorchMemory& m, AllocatorAction a) {
  return std::count_if(m.events.begin(), m.events.end(), [&](const auto& e) { return e.action == a; });
}

TEST(TorchMemory, ReadsARealSnapshot) {
  Result<TorchMemory> m = readTorchMemory(testing::fixturePath("pytorch_memory_snapshot.json"));
  ASSERT_TRUE(m) << m.status().message();
  EXPECT_EQ(m->events.size(), 1827u);
  const int64_t allocs = countOf(*m, AllocatorAction::kAlloc);
  EXPECT_GT(allocs, 500);
  // Every tensor freed is first requested, then completed; a few are still alive at the snapshot.
  EXPECT_EQ(countOf(*m, AllocatorAction::kFreeRequested), countOf(*m, AllocatorAction::kFreeCompleted));
  EXPECT_LE(countOf(*m, AllocatorAction::kFreeCompleted), allocs);
  EXPECT_GT(countOf(*m, AllocatorAction::kSegmentAlloc), 0);
  for (const auto& e : m->events) {
    EXPECT_GT(e.timestamp_ns, 1'700'000'000'000'000'000);  // Unix time, in ns (2023 on)
    EXPECT_GT(e.bytes, 0);
    EXPECT_EQ(e.device_id, 0);
  }
  EXPECT_TRUE(std::is_sorted(m->events.begin(), m->events.end(),
                             [](const auto& a, const auto& b) { return a.timestamp_ns < b.timestamp_ns; }));
  EXPECT_FALSE(m->pid);  // a user's snapshot: no "gpuscope" key
  EXPECT_TRUE(m->roles.empty());
}

TEST(TorchMemory, BadSnapshotsGetOneClearError) {
  testing::TempDir dir;
  auto errorOf = [&](const std::string& name, const std::string& text) {
    testing::writeFile(dir.path(name), text);
    Result<TorchMemory> m = readTorchMemory(dir.path(name));
    EXPECT_FALSE(m) << name;
    return m ? std::string() : m.status().message();
  };
  EXPECT_NE(errorOf("a.json", "{\"device_traces\": [[{\"action\": ").find("not JSON"), std::string::npos);
  EXPECT_NE(errorOf("b.json", "{\"segments\": []}").find("not a PyTorch memory snapshot"), std::string::npos);
  EXPECT_NE(errorOf("c.json", "{\"traceEvents\": []}").find("not a PyTorch memory snapshot"), std::string::npos);
  EXPECT_NE(errorOf("d.json", "{\"device_traces\": [], \"gpuscope\": {\"roles\": [[1, 2]]}}").find("tensor role"),
            std::string::npos);
  Result<TorchMemory> missing = readTorchMemory(dir.path("none.json"));
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.status().kind(), ErrorKind::kNotFound);
}

TEST(TorchMemory, UnknownActionsAreCountedNotFatal) {
  testing::TempDir dir;
  testing::writeFile(dir.path("s.json"),
                     R"({"device_traces": [[{"action": "alloc", "addr": 4096, "size": 512, "stream": 0,
                     "time_us": 1700000000000000}, {"action": "snapshot", "addr": 0, "size": 0, "time_us": 1},
                     {"action": "free_requested", "addr": 4096, "size": 512}]]})");
  Result<TorchMemory> m = readTorchMemory(dir.path("s.json"));
  ASSERT_TRUE(m) << m.status().message();
  EXPECT_EQ(m->events.size(), 1u);
  EXPECT_EQ(m->skipped, 2);  // a snapshot marker, and a free without a time
}

// The bridge's own keys read as they come: "wrapped" as a number (a crash under fuzz_import) is absent.
TEST(TorchMemory, BridgeKeysOfAnUnexpectedTypeAreReadAsAbsent) {
  testing::TempDir dir;
  testing::writeFile(dir.path("s.json"), R"({"device_traces": [], "gpuscope": {"wrapped": 1, "pid": "7"}})");
  Result<TorchMemory> m = readTorchMemory(dir.path("s.json"));
  ASSERT_TRUE(m) << m.status().message();
  EXPECT_FALSE(m->wrapped);
  testing::writeFile(dir.path("t.json"), R"({"device_traces": [], "gpuscope": {"wrapped": true}})");
  m = readTorchMemory(dir.path("t.json"));
  ASSERT_TRUE(m) << m.status().message();
  EXPECT_TRUE(m->wrapped);
}

// torch.profiler's trace of the same program (tests/fixtures/pytorch_profiler_trace.json, 2 steps, CUDA
// activity and profile_memory): everything gpuscope reads comes across, each kernel with its launch.
TEST(KinetoImport, ReadsARealTorchProfilerTrace) {
  testing::TempDir dir;
  Status s = importTrace(testing::fixturePath("pytorch_profiler_trace.json"), dir.path("t.gpuscope"), false);
  ASSERT_TRUE(s) << s.message();
  Result<TraceReader> r = TraceReader::open(dir.path("t.gpuscope"));
  ASSERT_TRUE(r) << r.status().message();
  auto query = [&](const std::string& sql) { return *r->database().queryInt(sql); };
  EXPECT_EQ(query("SELECT count(*) FROM kernel"), 644);
  EXPECT_EQ(query("SELECT count(*) FROM api_call"), 863);  // 853 runtime and 10 driver calls
  EXPECT_EQ(query("SELECT count(*) FROM memcpy"), 4);
  // "Memcpy HtoD (Pageable -> Device)" twice (the batches), "Memcpy DtoH (Device -> Pinned)" twice (loss.item()).
  EXPECT_EQ(query("SELECT count(*) FROM memcpy WHERE copy_kind = 1 AND src_kind = 1 AND dst_kind = 3"), 2);
  EXPECT_EQ(query("SELECT count(*) FROM memcpy WHERE copy_kind = 2 AND src_kind = 3 AND dst_kind = 2"), 2);
  EXPECT_EQ(query("SELECT count(*) FROM memset"), 4);
  EXPECT_EQ(query("SELECT count(*) FROM nvtx_view WHERE domain_text = 'PyTorch ops'"), 3045);
  EXPECT_EQ(query("SELECT count(*) FROM nvtx_view WHERE name_text = 'Optimizer.step#AdamW.step'"), 2);
  EXPECT_EQ(query("SELECT count(*) FROM allocator_event"), 821);  // CUDA's [memory] events; the CPU's left out
  EXPECT_EQ(query("SELECT count(*) FROM device WHERE name = 'NVIDIA H100 80GB HBM3' AND sm_count = 132"), 1);
  EXPECT_EQ(query("SELECT count(*) FROM kernel k LEFT JOIN api_call a USING (session_id, correlation_id) "
                  "WHERE a.correlation_id IS NULL"),
            0);
  // Unix time in ns: baseTimeNanoseconds plus each event's µs.
  EXPECT_GT(query("SELECT min(start_ns) FROM kernel"), 1'790'000'000'000'000'000);
  EXPECT_EQ(query("SELECT count(*) FROM kernel WHERE end_ns < start_ns"), 0);
  EXPECT_EQ(query("SELECT count(*) FROM kernel_config WHERE grid_x > 0 AND block_x > 0"),
            query("SELECT count(*) FROM kernel_config"));
}

TEST(KinetoImport, AChromeTraceWithNothingToReadIsRefused) {
  testing::TempDir dir;
  testing::writeFile(dir.path("empty.json"), R"({"traceEvents": [{"ph": "M", "name": "process_name", "pid": 1}]})");
  Status s = importTrace(dir.path("empty.json"), dir.path("t.gpuscope"), false);
  ASSERT_FALSE(s);
  EXPECT_EQ(s.kind(), ErrorKind::kEmpty);
  EXPECT_FALSE(std::filesystem::exists(dir.path("t.gpuscope")));
  testing::writeFile(dir.path("other.json"), R"({"hello": 1})");
  Status other = importTrace(dir.path("other.json"), dir.path("t.gpuscope"), false);
  ASSERT_FALSE(other);
  EXPECT_NE(other.message().find("neither a torch.profiler trace"), std::string::npos) << other.message();
}

// Fields of an unexpected type (found by fuzz_import: "ph" as a number threw out of the importer) are read
// as absent: the events that still make sense come across, the rest are skipped.
TEST(KinetoImport, FieldsOfAnUnexpectedTypeAreReadAsAbsent) {
  testing::TempDir dir;
  testing::writeFile(dir.path("odd.json"), R"({"traceEvents": [
    {"ph": 7, "cat": "kernel", "ts": 1, "dur": 2},
    {"ph": "X", "cat": ["kernel"], "ts": 1},
    {"ph": "X", "cat": "kernel", "name": 3, "ts": 10, "dur": "2",
     "args": {"grid": ["a", 1e300, null], "block": [1, 1, 1], "correlation": 5}},
    {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "ts": 9, "dur": 1,
     "pid": 1e300, "tid": "main", "args": {"correlation": 5}}]})");
  Status s = importTrace(dir.path("odd.json"), dir.path("t.gpuscope"), false);
  ASSERT_TRUE(s) << s.message();
  Result<TraceReader> r = TraceReader::open(dir.path("t.gpuscope"));
  ASSERT_TRUE(r) << r.status().message();
  EXPECT_EQ(*r->database().queryInt("SELECT count(*) FROM kernel"), 1);
  EXPECT_EQ(*r->database().queryInt("SELECT count(*) FROM api_call"), 1);
  EXPECT_EQ(*r->database().queryInt("SELECT grid_x FROM kernel_config"), 0);
}

// torch.profiler's traces of a real 2-rank DDP job, gzip-compressed as it writes them
// (tests/fixtures/multirank/README.md): one imports with its rank; the folder imports as one job.
TEST(KinetoImport, GzipTracesAndAFolderOfRanks) {
  testing::TempDir dir;
  const std::string folder = GPUSCOPE_MULTIRANK_TORCH_PROFILER;
  ASSERT_TRUE(importTrace(folder + "/ddp_gpt2_2rank.torch_profiler.rank1.json.gz", dir.path("r1.gpuscope"), false));
  Result<TraceReader> one = TraceReader::open(dir.path("r1.gpuscope"));
  ASSERT_TRUE(one) << one.status().message();
  Result<std::vector<schema::SessionRow>> session = one->readAll<schema::SessionRow>();
  ASSERT_TRUE(session && session->size() == 1u);
  EXPECT_EQ((*session)[0].rank, 1);
  EXPECT_EQ((*session)[0].world_size, 2);
  EXPECT_EQ(*one->database().queryInt("SELECT count(*) FROM kernel"), 6640);

  Status s = importTrace(folder, dir.path("job.gpuscope"), false);
  ASSERT_TRUE(s) << s.message();
  Result<TraceReader> job = TraceReader::open(dir.path("job.gpuscope"));
  ASSERT_TRUE(job) << job.status().message();
  EXPECT_EQ(*job->database().queryInt("SELECT count(*) FROM session"), 2);
  EXPECT_EQ(*job->database().queryInt("SELECT count(DISTINCT rank) FROM session"), 2);
  EXPECT_EQ(*job->database().queryInt("SELECT count(*) FROM kernel"), 13280);
  // An existing output is kept without --force, and a folder with no traces is refused.
  Status again = importTrace(folder, dir.path("job.gpuscope"), false);
  EXPECT_FALSE(again);
  std::filesystem::create_directory(dir.path("empty"));
  Status empty = importTrace(dir.path("empty"), dir.path("e.gpuscope"), false);
  ASSERT_FALSE(empty);
  EXPECT_NE(empty.message().find("no .json or .json.gz traces"), std::string::npos) << empty.message();
}

TEST(KinetoImport, HostFromTheDefaultFileName) {
  EXPECT_EQ(hostOfTraceFileName("gpu-node-7_12345.1732000000123456789.pt.trace.json.gz"), "gpu-node-7");
  EXPECT_EQ(hostOfTraceFileName("my_host_name_42.1732.pt.trace.json"), "my_host_name");
  EXPECT_EQ(hostOfTraceFileName("trace.json"), "");
  EXPECT_EQ(hostOfTraceFileName("rank0.json.gz"), "");
}

TEST(TorchMemory, ImportWritesATrace) {
  testing::TempDir dir;
  ASSERT_TRUE(importTrace(testing::fixturePath("pytorch_memory_snapshot.json"), dir.path("t.gpuscope"), false));
  Result<TraceReader> r = TraceReader::open(dir.path("t.gpuscope"));
  ASSERT_TRUE(r) << r.status().message();
  EXPECT_EQ(*r->count<schema::AllocatorEventRow>(), 1827);
  EXPECT_EQ(*r->count<schema::SessionRow>(), 1);
  EXPECT_TRUE(*r->hasEvents());
  // The output exists now: not replaced without overwrite.
  EXPECT_FALSE(importTrace(testing::fixturePath("pytorch_memory_snapshot.json"), dir.path("t.gpuscope"), false));
  EXPECT_TRUE(importTrace(testing::fixturePath("pytorch_memory_snapshot.json"), dir.path("t.gpuscope"), true));
}

// torch.cuda.memory._dump_snapshot() pickles the snapshot: the real pickle imports to the rows of its JSON twin.
TEST(TorchMemory, PickledSnapshotsImportLikeTheirJson) {
  testing::TempDir dir;
  ASSERT_TRUE(importTrace(testing::fixturePath("pytorch_memory_snapshot.pickle"), dir.path("p.gpuscope"), false));
  ASSERT_TRUE(importTrace(testing::fixturePath("pytorch_memory_snapshot.json"), dir.path("j.gpuscope"), false));
  Result<TraceReader> p = TraceReader::open(dir.path("p.gpuscope"));
  Result<TraceReader> j = TraceReader::open(dir.path("j.gpuscope"));
  ASSERT_TRUE(p && j);
  EXPECT_EQ(*p->count<schema::AllocatorEventRow>(), 1827);
  Result<std::vector<schema::AllocatorEventRow>> from_pickle = p->readAll<schema::AllocatorEventRow>();
  Result<std::vector<schema::AllocatorEventRow>> from_json = j->readAll<schema::AllocatorEventRow>();
  ASSERT_TRUE(from_pickle && from_json);
  EXPECT_EQ(*from_pickle, *from_json);
}

std::string bytesOf(std::initializer_list<int> bytes) {
  std::string out;
  for (int b : bytes) out.push_back(static_cast<char>(b));
  return out;
}

// Pickles gpuscope will not read: each one clear error, never a crash, never code run.
TEST(TorchMemory, PicklesOfObjectsOrBrokenOnesAreRefused) {
  // pickle.dumps({"a": 7}, protocol=4)
  const std::string good =
      bytesOf({0x80, 4, 0x95, 11, 0, 0, 0, 0, 0, 0, 0, '}', 0x94, 0x8c, 1, 'a', 0x94, 'K', 7, 's', '.'});
  Result<nlohmann::json> ok = parsePickle(good);
  ASSERT_TRUE(ok) << ok.status().message();
  EXPECT_EQ(ok->dump(), R"({"a":7})");
  const std::pair<std::string, std::string> bad[] = {
      {bytesOf({0x80, 4, '}'}), "ends before its STOP"},  // truncated
      {bytesOf({0x80, 4, 0x8c, 8, 'b', 'u', 'i', 'l', 't', 'i', 'n', 's', 0x8c, 4, 'e', 'v', 'a', 'l', 0x93, '.'}),
       "makes a Python object"},                                                // STACK_GLOBAL builtins.eval
      {bytesOf({0x80, 4, ']', 0x94, 'h', 0, 'a', '.'}), "nest"},                // a list that holds itself
      {bytesOf({0x80, 4, 'h', 5, '.'}), "never stored"},                        // a memo entry that is not there
      {bytesOf({0x80, 4, 'K', 1, 'K', 2, 'a', '.'}), "not a list"},             // APPEND to an int
      {bytesOf({0x80, 4, 0x8c, 0xff, 'a', 'b', '.'}), "ends inside a string"},  // longer than the file
      {bytesOf({0x80, 4, 'N', 'N', '(', '0', '0', 't', '.'}), "MARK below"},    // POPs under the mark
  };
  for (const auto& [bytes, why] : bad) {
    Result<nlohmann::json> r = parsePickle(bytes);
    ASSERT_FALSE(r) << why;
    EXPECT_NE(r.status().message().find(why), std::string::npos) << r.status().message();
  }
}

// record --torch: torch-<pid>.json beside the parts joins the session whose process wrote it.
TEST(TorchMemory, MergeAddsTheBridgeEventsToTheirProcess) {
  testing::TempDir dir;
  ASSERT_TRUE(testing::writeSampleTrace(dir.path("part.gpuscope")));
  Result<TraceReader> part = TraceReader::open(dir.path("part.gpuscope"));
  ASSERT_TRUE(part);
  const int64_t pid = (*part->readAll<schema::SessionRow>()).front().pid;
  std::ifstream in(testing::fixturePath("pytorch_memory_snapshot.json"));
  nlohmann::json snapshot = nlohmann::json::parse(in);
  snapshot["gpuscope"] = {{"pid", pid},
                          {"wrapped", true},
                          {"roles",
                           {{1700000000000001, 0, 4096, 1024, "parameter", "Net.fc.weight"},
                            {1700000000000002, 0, 8192, 1024, "gradient", "Net.fc.weight.grad"}}}};
  testing::writeFile(dir.path("torch-" + std::to_string(pid) + ".json"), snapshot.dump());
  testing::writeFile(dir.path("torch-1.json"), "not json");  // no such process: never read
  MergeOptions options;
  options.torch_memory_dir = dir.path("");
  ASSERT_TRUE(mergeTraces({dir.path("part.gpuscope")}, dir.path("merged.gpuscope"), options));
  Result<TraceReader> merged = TraceReader::open(dir.path("merged.gpuscope"));
  ASSERT_TRUE(merged);
  EXPECT_EQ(*merged->count<schema::AllocatorEventRow>(), 1827);
  Result<std::vector<schema::TensorRoleRow>> roles = merged->readAll<schema::TensorRoleRow>();
  ASSERT_TRUE(roles);
  ASSERT_EQ(roles->size(), 2u);
  const std::vector<std::string> strings = *merged->loadStrings();
  EXPECT_EQ(stringOf(strings, (*roles)[1].name), "Net.fc.weight.grad");
  EXPECT_EQ((*roles)[0].role, schema::TensorRole::kParameter);
  EXPECT_EQ((*roles)[0].timestamp_ns, 1700000000000001000);  // µs to ns; the sample's trace clock is Unix time
  EXPECT_EQ((*roles)[0].session_id, 1);
  bool said_full = false;
  (void)merged->forEach<schema::DataQualityRow>([&](const schema::DataQualityRow& q) {
    said_full |= q.code == "allocator_history_full";
    return true;
  });
  EXPECT_TRUE(said_full);
}

// record --cupy: the CuPy bridge's cupy-<pid>.json (CuPy's pool events in a snapshot's shape) joins its process.
TEST(TorchMemory, MergeAddsTheCupyPoolEventsToTheirProcess) {
  testing::TempDir dir;
  ASSERT_TRUE(testing::writeSampleTrace(dir.path("part.gpuscope")));
  Result<TraceReader> part = TraceReader::open(dir.path("part.gpuscope"));
  ASSERT_TRUE(part);
  const int64_t pid = (*part->readAll<schema::SessionRow>()).front().pid;
  // As gpuscope_cupy writes them: a block asked of CUDA, handed out, given back, handed out again.
  const nlohmann::json snapshot = {
      {"device_traces",
       {{{{"action", "segment_alloc"}, {"addr", 1 << 20}, {"size", 1 << 20}, {"time_us", 1700000000000001}},
         {{"action", "alloc"}, {"addr", 1 << 20}, {"size", 1 << 20}, {"time_us", 1700000000000002}},
         {{"action", "free_completed"}, {"addr", 1 << 20}, {"size", 1 << 20}, {"time_us", 1700000000000003}},
         {{"action", "alloc"}, {"addr", 1 << 20}, {"size", 1 << 20}, {"time_us", 1700000000000004}}}}},
      {"gpuscope", {{"version", 1}, {"pid", pid}, {"allocator", "cupy"}, {"wrapped", false}}}};
  testing::writeFile(dir.path("cupy-" + std::to_string(pid) + ".json"), snapshot.dump());
  MergeOptions options;
  options.torch_memory_dir = dir.path("");
  ASSERT_TRUE(mergeTraces({dir.path("part.gpuscope")}, dir.path("merged.gpuscope"), options));
  Result<TraceReader> merged = TraceReader::open(dir.path("merged.gpuscope"));
  ASSERT_TRUE(merged);
  Result<std::vector<schema::AllocatorEventRow>> events = merged->readAll<schema::AllocatorEventRow>();
  ASSERT_TRUE(events);
  ASSERT_EQ(events->size(), 4u);
  EXPECT_EQ((*events)[0].action, schema::AllocatorAction::kSegmentAlloc);
  EXPECT_EQ((*events)[2].action, schema::AllocatorAction::kFreeCompleted);
  EXPECT_EQ((*events)[3].timestamp_ns, 1700000000000004000);
  EXPECT_EQ((*events)[3].session_id, 1);
}

// record --delay/--duration keep the allocator's events and the roles inside the window, as CUDA's.
TEST(TorchMemory, MergeWindowsKeepOnlyTheEventsInside) {
  testing::TempDir dir;
  ASSERT_TRUE(testing::writeSampleTrace(dir.path("part.gpuscope")));
  Result<TraceReader> part = TraceReader::open(dir.path("part.gpuscope"));
  const int64_t pid = (*part->readAll<schema::SessionRow>()).front().pid;
  std::ifstream in(testing::fixturePath("pytorch_memory_snapshot.json"));
  nlohmann::json snapshot = nlohmann::json::parse(in);
  const int64_t first_us = snapshot["device_traces"][0][0]["time_us"].get<int64_t>();
  snapshot["gpuscope"] = {
      {"pid", pid},
      {"roles",
       {{first_us, 0, 4096, 1024, "parameter", "early"}, {first_us + 200'000, 0, 8192, 1024, "parameter", "inside"}}}};
  testing::writeFile(dir.path("torch-" + std::to_string(pid) + ".json"), snapshot.dump());
  Result<TorchMemory> all = readTorchMemory(dir.path("torch-" + std::to_string(pid) + ".json"));
  ASSERT_TRUE(all);
  // 100 ms to 300 ms after the first event (the sample trace's clock is Unix time: no offset).
  const int64_t start = (first_us + 100'000) * 1000, end = (first_us + 300'000) * 1000;
  const auto inside = std::count_if(all->events.begin(), all->events.end(),
                                    [&](const auto& e) { return e.timestamp_ns >= start && e.timestamp_ns <= end; });
  ASSERT_GT(inside, 0);
  ASSERT_LT(inside, static_cast<int64_t>(all->events.size()));
  MergeOptions options;
  options.torch_memory_dir = dir.path("");
  options.windows = {{start, end}};
  ASSERT_TRUE(mergeTraces({dir.path("part.gpuscope")}, dir.path("merged.gpuscope"), options));
  Result<TraceReader> merged = TraceReader::open(dir.path("merged.gpuscope"));
  ASSERT_TRUE(merged);
  EXPECT_EQ(*merged->count<schema::AllocatorEventRow>(), inside);
  Result<std::vector<schema::TensorRoleRow>> roles = merged->readAll<schema::TensorRoleRow>();
  ASSERT_TRUE(roles);
  ASSERT_EQ(roles->size(), 1u);
  EXPECT_EQ(stringOf(*merged->loadStrings(), (*roles)[0].name), "inside");
}

TEST(TorchMemory, AnUnreadableBridgeFileIsSaidAndTheTraceKept) {
  testing::TempDir dir;
  ASSERT_TRUE(testing::writeSampleTrace(dir.path("part.gpuscope")));
  Result<TraceReader> part = TraceReader::open(dir.path("part.gpuscope"));
  const int64_t pid = (*part->readAll<schema::SessionRow>()).front().pid;
  testing::writeFile(dir.path("torch-" + std::to_string(pid) + ".json"), "{\"truncated");
  MergeOptions options;
  options.torch_memory_dir = dir.path("");
  ASSERT_TRUE(mergeTraces({dir.path("part.gpuscope")}, dir.path("merged.gpuscope"), options));
  Result<TraceReader> merged = TraceReader::open(dir.path("merged.gpuscope"));
  ASSERT_TRUE(merged);
  EXPECT_EQ(*merged->count<schema::AllocatorEventRow>(), 0);
  EXPECT_GT(*merged->count<schema::KernelRow>(), 0);
  bool said = false;
  (void)merged->forEach<schema::DataQualityRow>([&](const schema::DataQualityRow& q) {
    said |= q.code == "torch_memory_unreadable" && q.message.find("not JSON") != std::string::npos;
    return true;
  });
  EXPECT_TRUE(said);
}

}  // namespace
}  // namespace gpuscope
