// Every kind of bad input gets one clear error naming the file, never a crash, never partial output.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <fstream>

#include "formats/chrome_export.h"
#include "formats/sqlite_db.h"
#include "tests/support/sample_trace.h"

namespace gpuscope {
namespace {

using testing::TempDir;

std::string openError(const std::string& path) {
  Result<TraceReader> reader = TraceReader::open(path);
  EXPECT_FALSE(reader) << path << " opened";
  return reader ? std::string() : reader.status().message();
}

void expectMentions(const std::string& message, const std::string& path, const std::string& what) {
  EXPECT_NE(message.find(path), std::string::npos) << message;
  EXPECT_NE(message.find(what), std::string::npos) << message;
  EXPECT_EQ(message.find('\n'), std::string::npos) << "one line: " << message;
}

TEST(BadInput, MissingFile) {
  TempDir dir;
  expectMentions(openError(dir.path("nope.gpuscope")), dir.path("nope.gpuscope"), "no such file");
}

TEST(BadInput, Directory) { expectMentions(openError("/tmp"), "/tmp", "directory"); }

TEST(BadInput, EmptyFile) {
  TempDir dir;
  testing::writeFile(dir.path("e.gpuscope"), "");
  expectMentions(openError(dir.path("e.gpuscope")), dir.path("e.gpuscope"), "empty file");
}

TEST(BadInput, NotSqlite) {
  TempDir dir;
  testing::writeFile(dir.path("j.gpuscope"), "{\"traceEvents\": []}");
  expectMentions(openError(dir.path("j.gpuscope")), dir.path("j.gpuscope"), "not an SQLite database");
}

TEST(BadInput, SqliteButNotATrace) {
  TempDir dir;
  {
    Result<sqlite::Database> db = sqlite::Database::open(dir.path("other.db"), sqlite::Database::Mode::kCreate);
    ASSERT_TRUE(db);
    ASSERT_TRUE(db->exec("CREATE TABLE t(x); INSERT INTO t VALUES (1)"));
  }
  expectMentions(openError(dir.path("other.db")), dir.path("other.db"), "not a gpuscope trace");
}

void setUserVersion(const std::string& path, int64_t version) {
  Result<sqlite::Database> db = sqlite::Database::open(path, sqlite::Database::Mode::kCreate);
  ASSERT_TRUE(db);
  ASSERT_TRUE(db->exec("PRAGMA user_version=" + std::to_string(version)));
}

// What a writer leaves when it stops before its first commit: the trace's two pragmas and no table.
TEST(BadInput, TraceWithoutTables) {
  TempDir dir;
  {
    Result<sqlite::Database> db = sqlite::Database::open(dir.path("t.gpuscope"), sqlite::Database::Mode::kCreate);
    ASSERT_TRUE(db);
    ASSERT_TRUE(db->exec("PRAGMA application_id=" + std::to_string(schema::kApplicationId) +
                         "; PRAGMA user_version=" + std::to_string(schema::kSchemaVersion)));
  }
  expectMentions(openError(dir.path("t.gpuscope")), dir.path("t.gpuscope"), "empty gpuscope trace");
}

TEST(BadInput, NewerSchemaVersion) {
  TempDir dir;
  ASSERT_TRUE(testing::writeSampleTrace(dir.path("t.gpuscope")));
  setUserVersion(dir.path("t.gpuscope"), schema::kSchemaVersion + 1);
  Result<TraceReader> reader = TraceReader::open(dir.path("t.gpuscope"));
  ASSERT_FALSE(reader);
  EXPECT_EQ(reader.status().kind(), ErrorKind::kVersion);
  expectMentions(reader.status().message(), dir.path("t.gpuscope"), "newer gpuscope");
}

TEST(BadInput, OlderSchemaVersion) {
  TempDir dir;
  ASSERT_TRUE(testing::writeSampleTrace(dir.path("t.gpuscope")));
  setUserVersion(dir.path("t.gpuscope"), 0);
  expectMentions(openError(dir.path("t.gpuscope")), dir.path("t.gpuscope"), "older gpuscope");
}

// Version 1 traces (recorded before the PyTorch allocator tables) still open: those tables read as empty.
TEST(BadInput, VersionOneTracesReadWithoutTheLaterTables) {
  TempDir dir;
  ASSERT_TRUE(testing::writeSampleTrace(dir.path("t.gpuscope")));
  {
    Result<sqlite::Database> db = sqlite::Database::open(dir.path("t.gpuscope"), sqlite::Database::Mode::kCreate);
    ASSERT_TRUE(db);
    ASSERT_TRUE(
        db->exec("DROP VIEW IF EXISTS tensor_role_view; DROP VIEW IF EXISTS allocator_event_view; "
                 "DROP TABLE allocator_event; DROP TABLE tensor_role; PRAGMA user_version=1"));
  }
  Result<TraceReader> reader = TraceReader::open(dir.path("t.gpuscope"));
  ASSERT_TRUE(reader) << reader.status().message();
  EXPECT_EQ(reader->version(), 1);
  EXPECT_TRUE(reader->absent("allocator_event"));
  EXPECT_FALSE(reader->absent("kernel"));
  EXPECT_EQ(*reader->count<schema::AllocatorEventRow>(), 0);
  Result<std::vector<schema::TensorRoleRow>> roles = reader->readAll<schema::TensorRoleRow>();
  ASSERT_TRUE(roles);
  EXPECT_TRUE(roles->empty());
  EXPECT_GT(*reader->count<schema::KernelRow>(), 0);
  // A missing table that version 1 had is damage, not age.
  {
    Result<sqlite::Database> db = sqlite::Database::open(dir.path("t.gpuscope"), sqlite::Database::Mode::kCreate);
    ASSERT_TRUE(db);
    ASSERT_TRUE(db->exec("DROP VIEW IF EXISTS kernel_view; DROP TABLE kernel"));
  }
  EXPECT_FALSE(TraceReader::open(dir.path("t.gpuscope")));
}

// A truncated or overwritten trace must fail with a message (at open or during export), never crash,
// and never leave an output file.
void expectExportFailsCleanly(const std::string& trace, const std::string& out) {
  Result<TraceReader> reader = TraceReader::open(trace);
  if (!reader) {
    expectMentions(reader.status().message(), trace, "");
    return;
  }
  Status status = exportChromeTrace(*reader, out, false);
  if (status) return;  // the damage missed everything the export reads; the output must then be valid
  expectMentions(status.message(), trace, "");
  EXPECT_FALSE(std::filesystem::exists(out));
}

TEST(BadInput, TruncatedTrace) {
  TempDir dir;
  ASSERT_TRUE(testing::writeSampleTrace(dir.path("t.gpuscope")));
  const std::string bytes = testing::readFile(dir.path("t.gpuscope"));
  for (size_t keep : {size_t{100}, bytes.size() / 4, bytes.size() / 2, bytes.size() - 1000}) {
    SCOPED_TRACE(keep);
    testing::writeFile(dir.path("cut.gpuscope"), bytes.substr(0, keep));
    std::filesystem::remove(dir.path("cut.json"));
    expectExportFailsCleanly(dir.path("cut.gpuscope"), dir.path("cut.json"));
  }
  testing::writeFile(dir.path("half.gpuscope"), bytes.substr(0, bytes.size() / 2));
  expectMentions(openError(dir.path("half.gpuscope")), dir.path("half.gpuscope"), "damaged or truncated");
}

TEST(BadInput, CorruptedTrace) {
  TempDir dir;
  ASSERT_TRUE(testing::writeSampleTrace(dir.path("t.gpuscope")));
  const std::string bytes = testing::readFile(dir.path("t.gpuscope"));
  // Overwrite a stretch of every page after the first with garbage, one page at a time.
  for (size_t offset = 32768; offset < bytes.size(); offset += 32768) {
    SCOPED_TRACE(offset);
    std::string damaged = bytes;
    for (size_t i = offset + 100; i < std::min(damaged.size(), offset + 4000); ++i)
      damaged[i] = static_cast<char>(i * 31);
    testing::writeFile(dir.path("bad.gpuscope"), damaged);
    std::filesystem::remove(dir.path("bad.json"));
    expectExportFailsCleanly(dir.path("bad.gpuscope"), dir.path("bad.json"));
  }
}

TEST(BadInput, EmptyTraceIsNotExported) {
  TempDir dir;
  ASSERT_TRUE(testing::writeEmptyTrace(dir.path("empty.gpuscope")));
  Result<TraceReader> reader = TraceReader::open(dir.path("empty.gpuscope"));
  ASSERT_TRUE(reader) << reader.status().message();
  Status status = exportChromeTrace(*reader, dir.path("empty.json"), false);
  ASSERT_FALSE(status);
  EXPECT_EQ(status.kind(), ErrorKind::kEmpty);
  expectMentions(status.message(), dir.path("empty.gpuscope"), "no events");
  EXPECT_FALSE(std::filesystem::exists(dir.path("empty.json")));
}

TEST(BadInput, UnwritableOutputPath) {
  TempDir dir;
  ASSERT_TRUE(testing::writeSampleTrace(dir.path("t.gpuscope")));
  Result<TraceReader> reader = TraceReader::open(dir.path("t.gpuscope"));
  ASSERT_TRUE(reader);
  // A directory that does not exist, and a "directory" that is a file: unwritable even for root.
  for (const std::string& out : {dir.path("missing/out.json"), dir.path("t.gpuscope/out.json")}) {
    Status status = exportChromeTrace(*reader, out, false);
    ASSERT_FALSE(status);
    EXPECT_EQ(status.kind(), ErrorKind::kIo);
    expectMentions(status.message(), out, "cannot write");
  }
}

TEST(BadInput, FailedExportKeepsTheExistingOutput) {
  TempDir dir;
  ASSERT_TRUE(testing::writeEmptyTrace(dir.path("empty.gpuscope")));
  testing::writeFile(dir.path("out.json"), "precious");
  Result<TraceReader> reader = TraceReader::open(dir.path("empty.gpuscope"));
  ASSERT_TRUE(reader);
  EXPECT_FALSE(exportChromeTrace(*reader, dir.path("out.json"), /*overwrite=*/true));
  EXPECT_EQ(testing::readFile(dir.path("out.json")), "precious");
}

TEST(BadInput, ExistingOutputNeedsForce) {
  TempDir dir;
  ASSERT_TRUE(testing::writeSampleTrace(dir.path("t.gpuscope")));
  testing::writeFile(dir.path("out.json"), "precious");
  Result<TraceReader> reader = TraceReader::open(dir.path("t.gpuscope"));
  ASSERT_TRUE(reader);
  Status status = exportChromeTrace(*reader, dir.path("out.json"), false);
  ASSERT_FALSE(status);
  expectMentions(status.message(), dir.path("out.json"), "--force");
  EXPECT_EQ(testing::readFile(dir.path("out.json")), "precious");
  EXPECT_TRUE(exportChromeTrace(*reader, dir.path("out.json"), true));
  EXPECT_NE(testing::readFile(dir.path("out.json")), "precious");
}

TEST(BadInput, UnwritableTracePath) {
  TempDir dir;
  Result<TraceWriter> writer = TraceWriter::create(dir.path("missing/t.gpuscope"));
  ASSERT_FALSE(writer);
  expectMentions(writer.status().message(), dir.path("missing/t.gpuscope"), "cannot create");
}

// Traces and exports are made as any program makes its files: 0666 less the user's umask (a private umask
// gives a private trace, a group-writable one a group-writable trace).
TEST(BadInput, OutputsFollowTheUsersUmask) {
  TempDir dir;
  for (const mode_t mask : {mode_t{077}, mode_t{002}, mode_t{022}}) {
    const mode_t before = ::umask(mask);
    const std::string trace = dir.path("t" + std::to_string(mask) + ".gpuscope");
    const std::string json = dir.path("t" + std::to_string(mask) + ".json");
    const Status written = testing::writeSampleTrace(trace);
    Result<TraceReader> reader = TraceReader::open(trace);
    const Status exported = reader ? exportChromeTrace(*reader, json, false) : reader.status();
    ::umask(before);
    ASSERT_TRUE(written) << written.message();
    ASSERT_TRUE(exported) << exported.message();
    struct stat st {};
    ASSERT_EQ(::stat(trace.c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 0777, 0666 & ~mask) << "trace, umask " << std::oct << mask;
    ASSERT_EQ(::stat(json.c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 0777, 0666 & ~mask) << "export, umask " << std::oct << mask;
  }
}

}  // namespace
}  // namespace gpuscope
