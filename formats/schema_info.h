// Plain (non-template) description of the trace schema, derived from trace_schema.h, for the
// generators of SQL and documentation.
#pragma once

#include <span>
#include <string>
#include <vector>

#include "formats/trace_schema.h"

namespace gpuscope::schema {

struct TableInfo {
  std::string_view name;
  std::string_view doc;
  std::vector<ColumnInfo> columns;
  std::span<const std::string_view> indexes;
  bool hasIdColumn = false;  // the row struct carries its own `id`; otherwise SQLite assigns it
  bool interned = false;     // deduplicated rows, joined into the views of the tables that reference them
};

struct EnumTableInfo {
  std::string_view table;
  std::span<const EnumValue> values;
};

template <typename Row>
TableInfo tableInfo() {
  const auto& t = tableOf<Row>();
  TableInfo info{t.name, t.doc, {}, t.indexes, false, t.interned};
  forEachColumn(t, [&](const auto& c) {
    info.columns.push_back(columnInfo(c));
    if (c.name == "id") info.hasIdColumn = true;
  });
  return info;
}

std::vector<TableInfo> allTables();
std::vector<EnumTableInfo> allEnums();

// SQL generated from the definition.
std::vector<std::string> createSchemaSql();                   // tables, enum tables with their rows, *_view views
std::vector<std::string> createIndexSql();                    // run when a trace is finished
std::string insertSql(const TableInfo& table, int rows = 1);  // INSERT of `rows` rows at once
std::string selectSql(const TableInfo& table);                // columns in definition order, by id
// "alias.col1, alias.col2, …" in definition order (alias may be empty), for custom queries.
std::string columnList(const TableInfo& table, std::string_view alias = {});

// docs/schema.md, generated from the definition.
std::string schemaMarkdown();

std::string_view sqlTypeName(SqlType type);

}  // namespace gpuscope::schema
