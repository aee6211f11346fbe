#include "formats/trace_reader.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <filesystem>

namespace gpuscope {

namespace {

// The first 16 bytes of every SQLite database file.
constexpr char kSqliteMagic[] = "SQLite format 3";

Status checkFile(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) return Status(ErrorKind::kNotFound, path + ": no such file");
  if (std::filesystem::is_directory(path, ec))
    return Status(ErrorKind::kBadFormat, path + ": is a directory, not a trace");
  FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) return Status(ErrorKind::kIo, path + ": cannot read: " + std::strerror(errno));
  char header[16] = {};
  const size_t n = std::fread(header, 1, sizeof header, f);
  std::fclose(f);
  if (n == 0) return Status(ErrorKind::kBadFormat, path + ": empty file, not a gpuscope trace");
  if (n < sizeof header || std::memcmp(header, kSqliteMagic, sizeof header) != 0) {
    return Status(ErrorKind::kBadFormat, path + ": not a gpuscope trace (not an SQLite database)");
  }
  return Status::ok();
}

}  // namespace

Result<TraceReader> TraceReader::open(const std::string& path) {
  GPUSCOPE_RETURN_IF_ERROR(checkFile(path));
  Result<sqlite::Database> db = sqlite::Database::open(path, sqlite::Database::Mode::kReadOnly);
  if (!db) return db.status();
  TraceReader reader(std::move(*db));
  GPUSCOPE_RETURN_IF_ERROR(reader.validate());
  return reader;
}

Status TraceReader::validate() {
  Result<int64_t> app = db_.queryInt("PRAGMA application_id");
  if (!app) return app.status();
  if (*app != schema::kApplicationId) {
    return Status(ErrorKind::kBadFormat, path() + ": an SQLite database, but not a gpuscope trace");
  }
  Result<int64_t> version = db_.queryInt("PRAGMA user_version");
  if (!version) return version.status();
  if (*version > schema::kSchemaVersion) {
    return Status(ErrorKind::kVersion, path() + ": written by a newer gpuscope (trace schema " +
                                           std::to_string(*version) + "); this gpuscope reads schema " +
                                           std::to_string(schema::kSchemaVersion) + ": upgrade gpuscope");
  }
  if (*version < 1) {
    return Status(ErrorKind::kVersion, path() + ": written by an older gpuscope (trace schema " +
                                           std::to_string(*version) + ") that this one cannot read: record it again");
  }
  version_ = *version;
  // A writer sets these two first; a file with them and no table was left by one that stopped before its
  // first commit (a full disk, a crash at start).
  Result<int64_t> tables = db_.queryInt("SELECT count(*) FROM sqlite_master WHERE type = 'table'");
  if (!tables) return tables.status();
  if (*tables == 0) {
    return Status(ErrorKind::kBadFormat,
                  path() +
                      ": an empty gpuscope trace: its writer stopped before the first commit (a full disk, or "
                      "a crash at start)");
  }
  // Touch every table once: a truncated or damaged file fails here with a clear message rather than
  // halfway through an export. Tables added after the file's version are allowed to be missing.
  for (const schema::TableInfo& t : schema::allTables()) {
    if (addedAfterFile(t.name)) {
      Result<int64_t> exists = db_.queryInt("SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = '" +
                                            std::string(t.name) + "'");
      if (!exists) return exists.status();
      if (*exists == 0) {
        absent_.emplace_back(t.name);
        continue;
      }
    }
    Result<int64_t> rows = db_.queryInt("SELECT count(*) FROM (SELECT 1 FROM " + std::string(t.name) + " LIMIT 1)");
    if (!rows) return rows.status();
  }
  return Status::ok();
}

bool TraceReader::addedAfterFile(std::string_view table) const {
  for (const schema::AddedTable& added : schema::kAddedTables) {
    if (added.name == table && added.version > version_) return true;
  }
  return false;
}

bool TraceReader::absent(std::string_view table) const {
  return std::find(absent_.begin(), absent_.end(), table) != absent_.end();
}

Result<std::vector<std::string>> TraceReader::loadStrings() {
  std::vector<std::string> strings(1);
  Status status = forEach<schema::StringRow>([&](const schema::StringRow& row) {
    // Ids are dense from 1 in a well-formed trace; tolerate gaps in a damaged one without huge allocations.
    if (row.id <= 0 || row.id > static_cast<int64_t>(strings.size()) + 1'000'000) return true;
    if (static_cast<size_t>(row.id) >= strings.size()) strings.resize(static_cast<size_t>(row.id) + 1);
    strings[static_cast<size_t>(row.id)] = row.value;
    return true;
  });
  if (!status) return status;
  return strings;
}

Result<bool> TraceReader::hasEvents() {
  Result<bool> found = false;
  std::apply(
      [&](auto... rows) {
        auto check = [&](std::string_view table) {
          if (!found || *found || absent(table)) return;
          Result<int64_t> n = db_.queryInt("SELECT EXISTS (SELECT 1 FROM " + std::string(table) + ")");
          found = n ? Result<bool>(*n != 0) : Result<bool>(n.status());
        };
        (check(schema::tableOf<decltype(rows)>().name), ...);
      },
      schema::EventRows{});
  return found;
}

}  // namespace gpuscope
