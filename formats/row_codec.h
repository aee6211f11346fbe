// Moves row structs in and out of SQLite statements, column by column, following the schema definition.
#pragma once

#include "formats/sqlite_db.h"
#include "formats/trace_schema.h"

namespace gpuscope::schema {

inline void bindValue(sqlite::Statement& s, int i, int64_t v) { s.bindInt(i, v); }
inline void bindValue(sqlite::Statement& s, int i, double v) { s.bindReal(i, v); }
inline void bindValue(sqlite::Statement& s, int i, const std::string& v) { s.bindText(i, v); }
inline void bindValue(sqlite::Statement& s, int i, const std::optional<int64_t>& v) {
  if (v) {
    s.bindInt(i, *v);
  } else {
    s.bindNull(i);
  }
}
inline void bindValue(sqlite::Statement& s, int i, StringId v) {
  if (v.empty()) {
    s.bindNull(i);
  } else {
    s.bindInt(i, v.id);
  }
}
template <StoredEnum E>
void bindValue(sqlite::Statement& s, int i, E v) {
  s.bindInt(i, static_cast<int64_t>(v));
}

inline void readValue(const sqlite::Statement& s, int i, int64_t& v) { v = s.columnInt(i); }
inline void readValue(const sqlite::Statement& s, int i, double& v) { v = s.columnReal(i); }
inline void readValue(const sqlite::Statement& s, int i, std::string& v) { v.assign(s.columnText(i)); }
inline void readValue(const sqlite::Statement& s, int i, std::optional<int64_t>& v) {
  v = s.isNull(i) ? std::nullopt : std::optional<int64_t>(s.columnInt(i));
}
inline void readValue(const sqlite::Statement& s, int i, StringId& v) { v.id = s.isNull(i) ? 0 : s.columnInt(i); }
template <StoredEnum E>
void readValue(const sqlite::Statement& s, int i, E& v) {
  v = static_cast<E>(s.columnInt(i));
}

// Binds every column of row to parameters first..first+N-1 of an insertSql() statement (1-based; a
// multi-row INSERT binds row k at first = 1 + k·N).
template <typename Row>
void bindRow(sqlite::Statement& stmt, const Row& row, int first = 1) {
  int index = first;
  forEachColumn(tableOf<Row>(), [&](const auto& c) { bindValue(stmt, index++, row.*(c.member)); });
}

// Reads columns 0..N-1 of a selectSql() statement's current row into row.
template <typename Row>
void readRow(const sqlite::Statement& stmt, Row& row) {
  int index = 0;
  forEachColumn(tableOf<Row>(), [&](const auto& c) { readValue(stmt, index++, row.*(c.member)); });
}

}  // namespace gpuscope::schema
