// The machinery behind the trace schema: a table is a row struct plus a list of column descriptors
// (member pointer, SQL name, documentation). From that single definition gpuscope generates the DDL,
// the INSERT and SELECT statements, the row binding and reading code, and docs/schema.md.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>

namespace gpuscope::schema {

// Reference to an interned string (table `string`). Id 0 means "no string" and is stored as NULL.
struct StringId {
  int64_t id = 0;
  bool empty() const { return id == 0; }
  friend bool operator==(StringId, StringId) = default;
};

// One value of an enumeration stored as an integer; the enum's lookup table is generated from these.
struct EnumValue {
  int64_t value;
  std::string_view name;
  std::string_view doc;
};

// Specialised for each enum stored in the trace: the lookup table's name and its values.
template <typename E>
struct EnumInfo;

template <typename T>
concept StoredEnum = std::is_enum_v<T> && requires {
  EnumInfo<T>::kTable;
  EnumInfo<T>::kValues;
};

enum class SqlType { kInteger, kReal, kText };

// The SQL shape of each C++ member type a row may use.
template <typename T>
struct ColumnTraits;
template <>
struct ColumnTraits<int64_t> {
  static constexpr SqlType kType = SqlType::kInteger;
  static constexpr bool kNullable = false;
};
template <>
struct ColumnTraits<std::optional<int64_t>> {
  static constexpr SqlType kType = SqlType::kInteger;
  static constexpr bool kNullable = true;  // NULL = not known / not applicable
};
template <>
struct ColumnTraits<double> {
  static constexpr SqlType kType = SqlType::kReal;
  static constexpr bool kNullable = false;
};
template <>
struct ColumnTraits<std::string> {
  static constexpr SqlType kType = SqlType::kText;
  static constexpr bool kNullable = false;
};
template <>
struct ColumnTraits<StringId> {
  static constexpr SqlType kType = SqlType::kInteger;
  static constexpr bool kNullable = true;  // id 0 is stored as NULL
};
template <StoredEnum E>
struct ColumnTraits<E> {
  static constexpr SqlType kType = SqlType::kInteger;
  static constexpr bool kNullable = false;
};

template <typename Row, typename Member>
struct Column {
  Member Row::*member;
  std::string_view name;
  std::string_view doc;
  std::string_view references = {};  // "table" when the value is an id of that table's rows
};

template <typename Row, typename Member>
constexpr Column<Row, Member> column(Member Row::*member, std::string_view name, std::string_view doc,
                                     std::string_view references = {}) {
  return {member, name, doc, references};
}

template <typename Row, typename... Columns>
struct Table {
  std::string_view name;
  std::string_view doc;
  std::tuple<Columns...> columns;
  // Indexes created when a trace is finished (not while writing, to keep inserts fast).
  std::span<const std::string_view> indexes = {};
  // Rows are deduplicated by the writer (like strings) and joined into the views of the tables that use them.
  bool interned = false;
  static constexpr size_t kColumnCount = sizeof...(Columns);
};

template <typename Row, typename... Columns>
constexpr Table<Row, Columns...> table(std::string_view name, std::string_view doc, Columns... columns) {
  return {name, doc, std::tuple<Columns...>(columns...)};
}

template <typename Row, typename... Columns>
constexpr Table<Row, Columns...> indexedTable(std::string_view name, std::string_view doc,
                                              std::span<const std::string_view> indexes, Columns... columns) {
  return {name, doc, std::tuple<Columns...>(columns...), indexes};
}

template <typename Row, typename... Columns>
constexpr Table<Row, Columns...> internedTable(std::string_view name, std::string_view doc, Columns... columns) {
  return {name, doc, std::tuple<Columns...>(columns...), {}, true};
}

// Calls fn(column) for each column of a table, in order.
template <typename TableT, typename Fn>
constexpr void forEachColumn(const TableT& t, Fn&& fn) {
  std::apply([&](const auto&... c) { (fn(c), ...); }, t.columns);
}

// Column-level facts used by the DDL and documentation generators.
struct ColumnInfo {
  std::string_view name;
  std::string_view doc;
  SqlType type;
  bool nullable;
  std::string_view references;  // "string", an enum table, another table, or empty
};

template <typename Row, typename Member>
ColumnInfo columnInfo(const Column<Row, Member>& c) {
  std::string_view references = c.references;
  if constexpr (std::is_same_v<Member, StringId>) {
    references = "string";
  } else if constexpr (StoredEnum<Member>) {
    references = EnumInfo<Member>::kTable;
  }
  return {c.name, c.doc, ColumnTraits<Member>::kType, ColumnTraits<Member>::kNullable, references};
}

}  // namespace gpuscope::schema
