// Opens a gpuscope trace read-only, checks that it is one (of this schema version or an older one), and
// streams its rows table by table.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "formats/row_codec.h"
#include "formats/schema_info.h"
#include "formats/sqlite_db.h"
#include "formats/status.h"

namespace gpuscope {

class TraceReader {
 public:
  // Fails with one clear message for a missing file, a file that is not SQLite, an SQLite file that is not
  // a gpuscope trace, a damaged database, or a trace of a newer schema version.
  static Result<TraceReader> open(const std::string& path);

  // Calls fn for every row of Row's table in insertion order; stops early when fn returns false.
  template <typename Row>
  Status forEach(const std::function<bool(const Row&)>& fn) {
    if (absent(schema::tableOf<Row>().name)) return Status::ok();
    Result<sqlite::Statement> stmt = db_.prepare(schema::selectSql(schema::tableInfo<Row>()));
    if (!stmt) return stmt.status();
    Row row;
    while (true) {
      Result<bool> more = stmt->step();
      if (!more) return more.status();
      if (!*more) return Status::ok();
      schema::readRow(*stmt, row);
      if (!fn(row)) return Status::ok();
    }
  }

  template <typename Row>
  Result<std::vector<Row>> readAll() {
    std::vector<Row> rows;
    Status status = forEach<Row>([&](const Row& r) {
      rows.push_back(r);
      return true;
    });
    if (!status) return status;
    return rows;
  }

  // Exact row count of Row's table.
  template <typename Row>
  Result<int64_t> count() {
    if (absent(schema::tableOf<Row>().name)) return int64_t{0};
    return db_.queryInt("SELECT count(*) FROM " + std::string(schema::tableOf<Row>().name));
  }

  // The interned strings, indexed by StringId (index 0 is the empty string).
  Result<std::vector<std::string>> loadStrings();

  // Highest row id of Row's table: its row count unless rows were deleted, found without a scan.
  template <typename Row>
  Result<int64_t> approximateCount() {
    if (absent(schema::tableOf<Row>().name)) return int64_t{0};
    return db_.queryInt("SELECT coalesce(max(id), 0) FROM " + std::string(schema::tableOf<Row>().name));
  }

  // Whether any event table (kernels, copies, API calls, NVTX, …) has a row.
  Result<bool> hasEvents();

  // The file's schema version (older ones are read: the tables added since are empty).
  int64_t version() const { return version_; }
  // Whether a table is missing because the file predates it; such a table reads as empty.
  bool absent(std::string_view table) const;

  sqlite::Database& database() { return db_; }
  const std::string& path() const { return db_.path(); }

 private:
  explicit TraceReader(sqlite::Database db) : db_(std::move(db)) {}
  Status validate();
  bool addedAfterFile(std::string_view table) const;
  sqlite::Database db_;
  int64_t version_ = 0;
  std::vector<std::string> absent_;
};

// The text of a string id, or "" for ids that are 0 or out of range (a damaged trace must not crash us).
inline const std::string& stringOf(const std::vector<std::string>& strings, schema::StringId id) {
  static const std::string kEmpty;
  return id.id > 0 && static_cast<size_t>(id.id) < strings.size() ? strings[static_cast<size_t>(id.id)] : kEmpty;
}

}  // namespace gpuscope
