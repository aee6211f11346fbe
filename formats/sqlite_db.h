// Thin RAII wrappers over the SQLite C API. Every error message names the database file.
#pragma once

#include <sqlite3.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "formats/status.h"

namespace gpuscope::sqlite {

class Statement {
 public:
  Statement() = default;
  Statement(sqlite3_stmt* stmt, const std::string* path) : stmt_(stmt), path_(path) {}
  Statement(Statement&& other) noexcept { *this = std::move(other); }
  Statement& operator=(Statement&& other) noexcept;
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;
  ~Statement();

  // Binding; index is 1-based as in SQLite.
  void bindInt(int index, int64_t value) { sqlite3_bind_int64(stmt_, index, value); }
  void bindNull(int index) { sqlite3_bind_null(stmt_, index); }
  void bindReal(int index, double value) { sqlite3_bind_double(stmt_, index, value); }
  void bindText(int index, std::string_view text) {
    sqlite3_bind_text(stmt_, index, text.data(), static_cast<int>(text.size()), SQLITE_TRANSIENT);
  }

  // Returns true while a row is available, false when done; errors become a Status.
  Result<bool> step();
  // Runs a statement that returns no rows, then resets it for reuse.
  Status run();
  void reset() { sqlite3_reset(stmt_); }

  // Reading; index is 0-based as in SQLite.
  bool isNull(int index) const { return sqlite3_column_type(stmt_, index) == SQLITE_NULL; }
  int64_t columnInt(int index) const { return sqlite3_column_int64(stmt_, index); }
  double columnReal(int index) const { return sqlite3_column_double(stmt_, index); }
  std::string_view columnText(int index) const;
  int columnCount() const { return sqlite3_column_count(stmt_); }

 private:
  sqlite3_stmt* stmt_ = nullptr;
  const std::string* path_ = nullptr;
};

class Database {
 public:
  enum class Mode { kReadOnly, kCreate };

  // Opens (kReadOnly) an existing database or creates (kCreate) a new one at path.
  static Result<Database> open(const std::string& path, Mode mode);

  Database(Database&& other) noexcept;
  Database& operator=(Database&& other) noexcept;
  Database(const Database&) = delete;
  Database& operator=(const Database&) = delete;
  ~Database();

  Status exec(const std::string& sql);
  Result<Statement> prepare(const std::string& sql);
  // The single integer a query like "PRAGMA user_version" returns.
  Result<int64_t> queryInt(const std::string& sql);
  Status close();

  const std::string& path() const { return *path_; }
  sqlite3* handle() const { return db_; }
  // "PATH: what SQLite said (while doing what)".
  Status error(std::string_view doing) const;

 private:
  Database(sqlite3* db, std::string path);
  sqlite3* db_ = nullptr;
  // Heap-allocated so statements can keep a stable pointer to it across moves.
  std::unique_ptr<std::string> path_;
};

}  // namespace gpuscope::sqlite
