// The schema definition generates valid SQL, consistent docs, and usable views.
#include <gtest/gtest.h>

#include <set>

#include "formats/schema_info.h"
#include "formats/sqlite_db.h"
#include "formats/trace_reader.h"
#include "tests/support/sample_trace.h"

namespace gpuscope {
namespace {

using testing::TempDir;

TEST(Schema, TablesAndColumnsHaveUniqueNamesAndDocs) {
  std::set<std::string_view> tables;
  for (const schema::TableInfo& t : schema::allTables()) {
    EXPECT_TRUE(tables.insert(t.name).second) << t.name;
    EXPECT_FALSE(t.doc.empty()) << t.name;
    std::set<std::string_view> columns;
    for (const schema::ColumnInfo& c : t.columns) {
      EXPECT_TRUE(columns.insert(c.name).second) << t.name << "." << c.name;
      EXPECT_FALSE(c.doc.empty()) << t.name << "." << c.name;
    }
  }
  EXPECT_EQ(tables.size(), std::tuple_size_v<schema::AllRows>);
}

TEST(Schema, GeneratedSqlCreatesEveryTableEnumAndView) {
  TempDir dir;
  Result<sqlite::Database> db = sqlite::Database::open(dir.path("schema.db"), sqlite::Database::Mode::kCreate);
  ASSERT_TRUE(db) << db.status().message();
  for (const std::string& sql : schema::createSchemaSql()) ASSERT_TRUE(db->exec(sql)) << sql;
  for (const std::string& sql : schema::createIndexSql()) ASSERT_TRUE(db->exec(sql)) << sql;
  for (const schema::TableInfo& t : schema::allTables()) {
    Result<sqlite::Statement> stmt = db->prepare(schema::selectSql(t));
    ASSERT_TRUE(stmt) << stmt.status().message();
    EXPECT_EQ(stmt->columnCount(), static_cast<int>(t.columns.size()));
  }
  Result<int64_t> kinds = db->queryInt("SELECT count(*) FROM enum_copy_kind");
  ASSERT_TRUE(kinds);
  EXPECT_EQ(*kinds, 11);
  Result<int64_t> pageable = db->queryInt("SELECT id FROM enum_memory_kind WHERE name = 'pageable'");
  ASSERT_TRUE(pageable);
  EXPECT_EQ(*pageable, static_cast<int64_t>(schema::MemoryKind::kPageable));
}

TEST(Schema, ViewsJoinInStringsAndEnumNames) {
  TempDir dir;
  ASSERT_TRUE(testing::writeSampleTrace(dir.path("t.gpuscope")));
  Result<TraceReader> reader = TraceReader::open(dir.path("t.gpuscope"));
  ASSERT_TRUE(reader);
  Result<sqlite::Statement> stmt =
      reader->database().prepare("SELECT name_text FROM kernel_view WHERE name_text LIKE 'triton%'");
  ASSERT_TRUE(stmt);
  ASSERT_TRUE(*stmt->step());
  EXPECT_EQ(stmt->columnText(0), "triton_poi_fused_add_mul_0");
  Result<sqlite::Statement> copies =
      reader->database().prepare("SELECT copy_kind_name, src_kind_name, dst_kind_name FROM memcpy_view");
  ASSERT_TRUE(copies);
  ASSERT_TRUE(*copies->step());
  EXPECT_EQ(copies->columnText(0), "HtoD");
  EXPECT_EQ(copies->columnText(1), "pageable");
  EXPECT_EQ(copies->columnText(2), "device");
}

// docs/schema.md is generated; this fails when the definition changed and the doc was not regenerated.
TEST(Schema, DocsMatchTheDefinition) {
  const std::string committed = testing::readFile(std::string(GPUSCOPE_SOURCE_DIR) + "/docs/schema.md");
  EXPECT_EQ(committed, schema::schemaMarkdown())
      << "docs/schema.md is stale: run `build/bin/gpuscope-schema-doc > docs/schema.md`";
}

TEST(Schema, EnumNamesComeFromTheLookupTables) {
  EXPECT_EQ(schema::enumName(schema::CopyKind::kDeviceToHost), "DtoH");
  EXPECT_EQ(schema::enumName(schema::Severity::kError), "error");
  EXPECT_EQ(schema::enumName(static_cast<schema::Severity>(99)), "unknown");
}

}  // namespace
}  // namespace gpuscope
