#include "formats/sqlite_db.h"

#include <memory>

namespace gpuscope::sqlite {

namespace {

// SQLite's codes for files that are not databases or are damaged are data problems, not I/O problems.
ErrorKind kindOf(int code) {
  switch (code & 0xff) {
    case SQLITE_NOTADB:
    case SQLITE_CORRUPT:
    case SQLITE_FORMAT:
    case SQLITE_SCHEMA:
    case SQLITE_ERROR: return ErrorKind::kBadFormat;
    case SQLITE_CANTOPEN: return ErrorKind::kNotFound;
    default: return ErrorKind::kIo;
  }
}

std::string describe(int code, const char* message) {
  if ((code & 0xff) == SQLITE_NOTADB) return "not an SQLite database";
  if ((code & 0xff) == SQLITE_CORRUPT) return "the database is damaged or truncated";
  return message ? message : sqlite3_errstr(code);
}

}  // namespace

Statement& Statement::operator=(Statement&& other) noexcept {
  if (this != &other) {
    sqlite3_finalize(stmt_);
    stmt_ = other.stmt_;
    path_ = other.path_;
    other.stmt_ = nullptr;
  }
  return *this;
}

Statement::~Statement() { sqlite3_finalize(stmt_); }

Result<bool> Statement::step() {
  const int rc = sqlite3_step(stmt_);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  sqlite3* db = sqlite3_db_handle(stmt_);
  return Status(kindOf(rc), *path_ + ": " + describe(rc, sqlite3_errmsg(db)));
}

Status Statement::run() {
  Result<bool> r = step();
  sqlite3_reset(stmt_);
  if (!r) return r.status();
  return Status::ok();
}

std::string_view Statement::columnText(int index) const {
  const auto* text = reinterpret_cast<const char*>(sqlite3_column_text(stmt_, index));
  if (!text) return {};
  return {text, static_cast<size_t>(sqlite3_column_bytes(stmt_, index))};
}

Database::Database(sqlite3* db, std::string path) : db_(db), path_(std::make_unique<std::string>(std::move(path))) {}

Database::Database(Database&& other) noexcept { *this = std::move(other); }

Database& Database::operator=(Database&& other) noexcept {
  if (this != &other) {
    if (db_) sqlite3_close_v2(db_);
    db_ = other.db_;
    path_ = std::move(other.path_);
    other.db_ = nullptr;
  }
  return *this;
}

Database::~Database() {
  if (db_) sqlite3_close_v2(db_);
}

Result<Database> Database::open(const std::string& path, Mode mode) {
  sqlite3* db = nullptr;
  const int flags = mode == Mode::kReadOnly ? SQLITE_OPEN_READONLY : (SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE);
  const int rc = sqlite3_open_v2(path.c_str(), &db, flags | SQLITE_OPEN_NOMUTEX, nullptr);
  if (rc != SQLITE_OK) {
    std::string message = path + ": cannot open: " + describe(rc, db ? sqlite3_errmsg(db) : nullptr);
    sqlite3_close_v2(db);
    return Status(kindOf(rc) == ErrorKind::kNotFound ? ErrorKind::kIo : kindOf(rc), message);
  }
  sqlite3_extended_result_codes(db, 1);
  return Database(db, path);
}

Status Database::error(std::string_view doing) const {
  const int rc = sqlite3_errcode(db_);
  return Status(kindOf(rc), *path_ + ": " + describe(rc, sqlite3_errmsg(db_)) + " (" + std::string(doing) + ")");
}

Status Database::exec(const std::string& sql) {
  if (sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, nullptr) != SQLITE_OK) return error(sql);
  return Status::ok();
}

Result<Statement> Database::prepare(const std::string& sql) {
  sqlite3_stmt* stmt = nullptr;
  if (sqlite3_prepare_v3(db_, sql.c_str(), -1, SQLITE_PREPARE_PERSISTENT, &stmt, nullptr) != SQLITE_OK) {
    return error(sql);
  }
  return Statement(stmt, path_.get());
}

Result<int64_t> Database::queryInt(const std::string& sql) {
  Result<Statement> stmt = prepare(sql);
  if (!stmt) return stmt.status();
  Result<bool> row = stmt->step();
  if (!row) return row.status();
  if (!*row) return Status(ErrorKind::kBadFormat, *path_ + ": no result for " + sql);
  return stmt->columnInt(0);
}

Status Database::close() {
  if (!db_) return Status::ok();
  if (sqlite3_close(db_) != SQLITE_OK) {
    Status s = error("close");
    sqlite3_close_v2(db_);
    db_ = nullptr;
    return s;
  }
  db_ = nullptr;
  return Status::ok();
}

}  // namespace gpuscope::sqlite
