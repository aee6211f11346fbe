// Every column of every table survives a write and a read unchanged, including NULLs and hostile text.
#include <gtest/gtest.h>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include "formats/trace_merge.h"
#include "formats/trace_reader.h"
#include "formats/trace_writer.h"
#include "tests/support/sample_trace.h"

namespace gpuscope {
namespace {

using namespace schema;
using testing::TempDir;

// Fills every member of a row with a distinct value derived from seed, so a column swapped, dropped or
// truncated anywhere between writer and reader shows up. with_nulls leaves optional columns empty.
struct RowFiller {
  int64_t seed;
  bool with_nulls;
  TraceWriter& writer;
  int64_t next = 0;

  int64_t distinct() { return seed * 1'000'003 + (++next) * 7'919 + (int64_t{1} << 40); }
  void fill(int64_t& v) { v = distinct(); }
  void fill(double& v) { v = static_cast<double>(distinct()) / 3.0; }
  void fill(std::string& v) { v = "text \"" + std::to_string(distinct()) + "\" \\ \n \xff end"; }
  void fill(std::optional<int64_t>& v) { v = with_nulls ? std::nullopt : std::optional<int64_t>(-distinct()); }
  void fill(StringId& v) { v = with_nulls ? StringId{} : writer.intern("s" + std::to_string(distinct())); }
  template <StoredEnum E>
  void fill(E& v) {
    v = static_cast<E>(EnumInfo<E>::kValues[static_cast<size_t>(seed) % std::size(EnumInfo<E>::kValues)].value);
  }
};

template <typename Row>
Row makeRow(int64_t seed, bool with_nulls, TraceWriter& writer) {
  Row row{};
  RowFiller filler{seed, with_nulls, writer};
  forEachColumn(tableOf<Row>(), [&](const auto& c) { filler.fill(row.*(c.member)); });
  return row;
}

template <typename Row>
void expectRoundTrip(const std::string& path) {
  SCOPED_TRACE(std::string(tableOf<Row>().name));
  std::vector<Row> written;
  {
    Result<TraceWriter> writer = TraceWriter::create(path, {.atomic = true, .overwrite = true});
    ASSERT_TRUE(writer) << writer.status().message();
    for (int64_t seed = 1; seed <= 3; ++seed) {
      written.push_back(makeRow<Row>(seed, seed == 2, *writer));
      ASSERT_TRUE(writer->append(written.back()));
    }
    ASSERT_TRUE(writer->finish());
  }
  Result<TraceReader> reader = TraceReader::open(path);
  ASSERT_TRUE(reader) << reader.status().message();
  Result<std::vector<Row>> read = reader->readAll<Row>();
  ASSERT_TRUE(read) << read.status().message();
  EXPECT_EQ(*read, written);
}

TEST(RoundTrip, EveryColumnOfEveryTable) {
  TempDir dir;
  forEachRowType([&](auto row) { expectRoundTrip<decltype(row)>(dir.path("rt.gpuscope")); });
}

TEST(RoundTrip, InternedStringsResolve) {
  TempDir dir;
  StringId a, b, again;
  {
    Result<TraceWriter> writer = TraceWriter::create(dir.path("s.gpuscope"));
    ASSERT_TRUE(writer);
    a = writer->intern("kernel_a");
    b = writer->intern(testing::kHostileKernelName);
    again = writer->intern("kernel_a");
    ASSERT_TRUE(writer->finish());
  }
  EXPECT_EQ(a, again);
  EXPECT_NE(a, b);
  Result<TraceReader> reader = TraceReader::open(dir.path("s.gpuscope"));
  ASSERT_TRUE(reader);
  Result<std::vector<std::string>> strings = reader->loadStrings();
  ASSERT_TRUE(strings);
  EXPECT_EQ(stringOf(*strings, a), "kernel_a");
  EXPECT_EQ(stringOf(*strings, b), testing::kHostileKernelName);  // stored byte for byte
  EXPECT_EQ(stringOf(*strings, StringId{}), "");
  EXPECT_EQ(stringOf(*strings, StringId{999}), "");
}

TEST(RoundTrip, FinishedTraceIsOneFileWithIndexes) {
  TempDir dir;
  ASSERT_TRUE(testing::writeSampleTrace(dir.path("t.gpuscope")));
  EXPECT_FALSE(std::filesystem::exists(dir.path("t.gpuscope-wal")));
  size_t files = 0;
  for ([[maybe_unused]] const auto& entry : std::filesystem::directory_iterator(dir.dir())) ++files;
  EXPECT_EQ(files, 1u) << "temporary or WAL files left behind";
  Result<TraceReader> reader = TraceReader::open(dir.path("t.gpuscope"));
  ASSERT_TRUE(reader);
  Result<int64_t> indexes =
      reader->database().queryInt("SELECT count(*) FROM sqlite_schema WHERE type = 'index' AND name LIKE 'kernel_by%'");
  ASSERT_TRUE(indexes);
  EXPECT_EQ(*indexes, 2);
}

// The collector's mode: rows committed so far are readable while the writer is still open (and so after a
// kill), even before finish().
TEST(RoundTrip, LiveWriterCommitsAreVisibleBeforeFinish) {
  TempDir dir;
  const std::string path = dir.path("live.gpuscope");
  Result<TraceWriter> writer = TraceWriter::create(path, {.atomic = false});
  ASSERT_TRUE(writer);
  ASSERT_TRUE(writer->append(ApiCallRow{1, ApiKind::kRuntime, writer->intern("cudaMalloc"), 20, 1, 10, 20, 1, 0}));
  ASSERT_TRUE(writer->commit());
  ASSERT_TRUE(writer->append(ApiCallRow{1, ApiKind::kRuntime, writer->intern("cudaFree"), 22, 1, 30, 40, 2, 0}));
  // The second row is not committed yet: a reader sees exactly one.
  Result<TraceReader> reader = TraceReader::open(path);
  ASSERT_TRUE(reader) << reader.status().message();
  Result<int64_t> n = reader->count<ApiCallRow>();
  ASSERT_TRUE(n) << n.status().message();
  EXPECT_EQ(*n, 1);
}

// The collector writes a session's row when recording starts and its end, with the CUDA runtime's version where
// the process loaded a runtime library, when it stops; a version it could not learn leaves the row's own.
TEST(RoundTrip, TheSessionsEndAndRuntimeAreWrittenWhenItStops) {
  TempDir dir;
  const std::string path = dir.path("s.gpuscope");
  Result<TraceWriter> writer = TraceWriter::create(path, {.atomic = false});
  ASSERT_TRUE(writer);
  SessionRow first, second;
  first.id = 1;
  second.id = 2;
  second.cuda_runtime_version = 12080;
  ASSERT_TRUE(writer->append(first));
  ASSERT_TRUE(writer->append(second));
  ASSERT_TRUE(writer->updateSessionEnd(1, 500, 13000));
  ASSERT_TRUE(writer->updateSessionEnd(2, 600));
  ASSERT_TRUE(writer->finish());
  Result<TraceReader> reader = TraceReader::open(path);
  ASSERT_TRUE(reader) << reader.status().message();
  Result<std::vector<SessionRow>> sessions = reader->readAll<SessionRow>();
  ASSERT_TRUE(sessions);
  ASSERT_EQ(sessions->size(), 2u);
  EXPECT_EQ((*sessions)[0].end_ns, 500);
  EXPECT_EQ((*sessions)[0].cuda_runtime_version, 13000);
  EXPECT_EQ((*sessions)[1].end_ns, 600);
  EXPECT_EQ((*sessions)[1].cuda_runtime_version, 12080);
}

TEST(RoundTrip, AtomicWriterLeavesNothingWhenAbandoned) {
  TempDir dir;
  const std::string path = dir.path("a.gpuscope");
  testing::writeFile(path, "precious");
  {
    Result<TraceWriter> writer = TraceWriter::create(path, {.atomic = true, .overwrite = true});
    ASSERT_TRUE(writer);
    ASSERT_TRUE(writer->append(TraceInfoRow{"k", "v"}));
  }  // destroyed without finish()
  EXPECT_EQ(testing::readFile(path), "precious");
  size_t files = 0;
  for ([[maybe_unused]] const auto& entry : std::filesystem::directory_iterator(dir.dir())) ++files;
  EXPECT_EQ(files, 1u);
}

TEST(RoundTrip, ExistingFileIsKeptWithoutOverwrite) {
  TempDir dir;
  const std::string path = dir.path("a.gpuscope");
  testing::writeFile(path, "precious");
  Result<TraceWriter> writer = TraceWriter::create(path);
  ASSERT_FALSE(writer);
  EXPECT_NE(writer.status().message().find("already exists"), std::string::npos);
  EXPECT_EQ(testing::readFile(path), "precious");
}

}  // namespace
}  // namespace gpuscope

namespace gpuscope {
namespace {

// A process killed with SIGKILL while writing (the collector's case) leaves a trace that opens, reads and
// merges, holding every row committed before the kill.
TEST(RoundTrip, TraceOfAKilledWriterIsReadable) {
  testing::TempDir dir;
  const std::string path = dir.path("killed.gpuscope");
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    Result<TraceWriter> w = TraceWriter::create(path, {.atomic = false, .page_size = 32768});
    if (!w) _exit(2);
    for (int i = 0; i < 1000; ++i) {
      if (!w->append(schema::ApiCallRow{1, schema::ApiKind::kRuntime, w->intern("cudaLaunchKernel"), 211, 7, i, i + 1,
                                        i, 0})) {
        _exit(3);
      }
    }
    if (!w->commit()) _exit(4);
    (void)w->append(schema::TraceInfoRow{"uncommitted", "lost"});
    raise(SIGKILL);
  }
  int status = 0;
  waitpid(child, &status, 0);
  ASSERT_TRUE(WIFSIGNALED(status)) << "child exit " << WEXITSTATUS(status);
  EXPECT_TRUE(std::filesystem::exists(path + "-wal"));
  Result<TraceReader> reader = TraceReader::open(path);
  ASSERT_TRUE(reader) << reader.status().message();
  Result<int64_t> calls = reader->count<schema::ApiCallRow>();
  ASSERT_TRUE(calls) << calls.status().message();
  EXPECT_EQ(*calls, 1000);
  ASSERT_TRUE(mergeTraces({path}, dir.path("merged.gpuscope"), {}));
  Result<TraceReader> merged = TraceReader::open(dir.path("merged.gpuscope"));
  ASSERT_TRUE(merged);
  EXPECT_EQ(*merged->count<schema::ApiCallRow>(), 1000);
}

}  // namespace
}  // namespace gpuscope
