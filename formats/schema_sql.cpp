// SQL generated from the schema definition in trace_schema.h.
#include <algorithm>

#include "formats/schema_info.h"

namespace gpuscope::schema {

std::string_view sqlTypeName(SqlType type) {
  switch (type) {
    case SqlType::kInteger: return "INTEGER";
    case SqlType::kReal: return "REAL";
    case SqlType::kText: return "TEXT";
  }
  return "BLOB";
}

std::vector<TableInfo> allTables() {
  std::vector<TableInfo> tables;
  forEachRowType([&](auto row) { tables.push_back(tableInfo<decltype(row)>()); });
  return tables;
}

std::vector<EnumTableInfo> allEnums() {
  std::vector<EnumTableInfo> enums;
  std::apply(
      [&](auto... e) {
        (enums.push_back({EnumInfo<decltype(e)>::kTable, EnumInfo<decltype(e)>::kValues}), ...);
      },
      AllEnums{});
  return enums;
}

namespace {

std::string quoteSqlText(std::string_view text) {
  std::string out = "'";
  for (char c : text) {
    if (c == '\'') out += '\'';
    out += c;
  }
  return out + "'";
}

std::string createTableSql(const TableInfo& t) {
  std::string sql = "CREATE TABLE " + std::string(t.name) + " (";
  bool first = true;
  if (!t.hasIdColumn) {
    sql += "\n  id INTEGER PRIMARY KEY";
    first = false;
  }
  for (const ColumnInfo& c : t.columns) {
    sql += first ? "\n  " : ",\n  ";
    first = false;
    sql += std::string(c.name) + " " + std::string(sqlTypeName(c.type));
    if (c.name == "id") {
      sql += " PRIMARY KEY";
      continue;
    }
    if (!c.nullable) sql += " NOT NULL";
    if (!c.references.empty()) sql += " REFERENCES " + std::string(c.references) + "(id)";
  }
  return sql + "\n)";
}

const TableInfo* findTable(const std::vector<TableInfo>& tables, std::string_view name) {
  for (const TableInfo& t : tables) {
    if (t.name == name) return &t;
  }
  return nullptr;
}

struct ViewParts {
  std::string select = "t.*";
  std::string joins;
  int aliases = 0;
};

// Adds, for each column of t (read through `alias`) that references a string, an enum or an interned table,
// a join and the readable columns it brings: <col>_text, <col>_name, or the interned row's own columns.
void addViewJoins(const TableInfo& t, const std::string& alias, const std::vector<TableInfo>& tables, ViewParts& v) {
  for (const ColumnInfo& c : t.columns) {
    if (c.references.empty() || c.name == "id") continue;
    const TableInfo* interned = c.references == "string" ? nullptr : findTable(tables, c.references);
    if (interned && !interned->interned) continue;  // e.g. session: nothing to inline
    const std::string join = "j" + std::to_string(v.aliases++);
    const std::string name(c.name);
    v.joins += " LEFT JOIN " + std::string(c.references) + " " + join + " ON " + join + ".id = " + alias + "." + name;
    if (c.references == "string") {
      v.select += ", " + join + ".value AS " + name + "_text";
    } else if (!interned) {
      v.select += ", " + join + ".name AS " + name + "_name";
    } else {
      for (const ColumnInfo& inner : interned->columns) {
        if (inner.name != "id") v.select += ", " + join + "." + std::string(inner.name);
      }
      addViewJoins(*interned, join, tables, v);
    }
  }
}

// <table>_view: the table with interned strings, enum names and interned rows joined in, for people using
// sqlite3 directly.
std::string createViewSql(const TableInfo& t, const std::vector<TableInfo>& tables) {
  ViewParts v;
  addViewJoins(t, "t", tables, v);
  if (v.joins.empty()) return {};
  const std::string table(t.name);
  return "CREATE VIEW " + table + "_view AS SELECT " + v.select + " FROM " + table + " t" + v.joins;
}

}  // namespace

std::vector<std::string> createSchemaSql() {
  std::vector<std::string> sql;
  for (const EnumTableInfo& e : allEnums()) {
    const std::string table(e.table);
    sql.push_back("CREATE TABLE " + table + " (id INTEGER PRIMARY KEY, name TEXT NOT NULL, doc TEXT NOT NULL)");
    for (const EnumValue& v : e.values) {
      sql.push_back("INSERT INTO " + table + " VALUES (" + std::to_string(v.value) + ", " + quoteSqlText(v.name) +
                    ", " + quoteSqlText(v.doc) + ")");
    }
  }
  const std::vector<TableInfo> tables = allTables();
  for (const TableInfo& t : tables) sql.push_back(createTableSql(t));
  for (const TableInfo& t : tables) {
    if (std::string view = createViewSql(t, tables); !view.empty()) sql.push_back(std::move(view));
  }
  return sql;
}

std::vector<std::string> createIndexSql() {
  std::vector<std::string> sql;
  for (const TableInfo& t : allTables()) {
    for (std::string_view columns : t.indexes) {
      std::string suffix(columns);
      std::erase(suffix, ' ');
      std::replace(suffix.begin(), suffix.end(), ',', '_');
      const std::string table(t.name);
      sql.push_back("CREATE INDEX IF NOT EXISTS " + table + "_by_" + suffix + " ON " + table + "(" +
                    std::string(columns) + ")");
    }
  }
  return sql;
}

std::string insertSql(const TableInfo& t, int rows) {
  std::string params = "(";
  for (size_t i = 0; i < t.columns.size(); ++i) params += i == 0 ? "?" : ", ?";
  params += ")";
  std::string values = params;
  for (int r = 1; r < rows; ++r) values += ", " + params;
  return "INSERT INTO " + std::string(t.name) + " (" + columnList(t) + ") VALUES " + values;
}

std::string columnList(const TableInfo& t, std::string_view alias) {
  const std::string prefix = alias.empty() ? std::string() : std::string(alias) + ".";
  std::string names;
  for (const ColumnInfo& c : t.columns) {
    names += names.empty() ? "" : ", ";
    names += prefix + std::string(c.name);
  }
  return names;
}

std::string selectSql(const TableInfo& t) {
  return "SELECT " + columnList(t) + " FROM " + std::string(t.name) + " ORDER BY id";
}

}  // namespace gpuscope::schema
