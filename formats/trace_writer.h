// Writes a gpuscope trace: rows are inserted with prepared statements inside batched transactions,
// in WAL mode, so a reader (or a crash) sees everything up to the last commit.
#pragma once

#include <array>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "formats/row_codec.h"
#include "formats/sqlite_db.h"
#include "formats/status.h"
#include "formats/trace_schema.h"

namespace gpuscope {

namespace detail {
template <typename T, typename Tuple>
struct TupleIndex;
template <typename T, typename... Ts>
struct TupleIndex<T, std::tuple<T, Ts...>> : std::integral_constant<size_t, 0> {};
template <typename T, typename U, typename... Ts>
struct TupleIndex<T, std::tuple<U, Ts...>>
    : std::integral_constant<size_t, 1 + TupleIndex<T, std::tuple<Ts...>>::value> {};

// Heterogeneous lookup so interning a string_view does not allocate when the string is known.
struct StringHash {
  using is_transparent = void;
  size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
};
// Hash of every column but `id`, for deduplicating interned rows.
template <typename Row>
struct RowHash {
  size_t operator()(const Row& row) const {
    size_t h = 0;
    schema::forEachColumn(schema::tableOf<Row>(), [&](const auto& c) {
      if (c.name == "id") return;
      const auto& v = row.*(c.member);
      size_t x = 0;
      using T = std::decay_t<decltype(v)>;
      if constexpr (std::is_same_v<T, schema::StringId>) {
        x = std::hash<int64_t>{}(v.id);
      } else if constexpr (std::is_enum_v<T>) {
        x = std::hash<int64_t>{}(static_cast<int64_t>(v));
      } else {
        x = std::hash<T>{}(v);
      }
      h ^= x + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
    });
    return h;
  }
};
}  // namespace detail

class TraceWriter {
 public:
  struct Options {
    // Write to a temporary file beside the target and rename it into place in finish(), so an existing
    // file is never left half-overwritten. The collector turns this off: its file must be readable even
    // if the process is killed.
    bool atomic = true;
    bool overwrite = false;  // replace an existing file at the target path
    int64_t rows_per_transaction = 200000;
    // SQLite page size. Large pages suit the collector's bulk inserts; small ones keep finished traces
    // small (every table and index takes at least one page).
    int64_t page_size = 4096;
  };

  static Result<TraceWriter> create(const std::string& path, const Options& options);
  static Result<TraceWriter> create(const std::string& path) { return create(path, Options{}); }

  TraceWriter(TraceWriter&&) noexcept;
  TraceWriter& operator=(TraceWriter&&) noexcept;
  ~TraceWriter();  // without finish(): an atomic writer removes its temporary file, a live one commits

  // Returns the id of text in the string table, adding it the first time. A failure to store it is
  // reported by the next append(), commit() or finish().
  schema::StringId intern(std::string_view text);

  // Returns the id of a kernel configuration (config.id is ignored), adding it the first time.
  int64_t intern(const schema::KernelConfigRow& config);

  // Queues a row; rows reach the file in batches, and all queued rows by the next commit().
  template <typename Row>
  Status append(const Row& row) {
    if (!failure_.isOk()) return failure_;
    std::vector<Row>& pending = std::get<std::vector<Row>>(pending_);
    pending.push_back(row);
    if (pending.size() == kBatchRows) GPUSCOPE_RETURN_IF_ERROR(flushPending<Row>());
    ++rows_written_;
    if (++rows_in_transaction_ >= options_.rows_per_transaction) return commit();
    return Status::ok();
  }

  // Records when a session's recording ended, and the CUDA runtime's version where it is known by then (its row
  // is written at the start, before either is known).
  Status updateSessionEnd(int64_t session_id, int64_t end_ns, std::optional<int64_t> runtime_version = std::nullopt);

  Status commit();  // makes every row appended so far visible to readers and durable against a crash
  Status finish();  // commit, create indexes, fold the WAL into the file, close, rename into place

  const std::string& path() const { return path_; }
  int64_t rowsWritten() const { return rows_written_; }

 private:
  TraceWriter(sqlite::Database db, std::string path, std::string write_path, Options options);
  Status prepareStatements();
  Status beginIfNeeded();
  Status fail(Status status);
  Status flushAllPending();

  // Inserts the queued rows of one table: a full batch with one multi-row INSERT (a single statement per
  // batch is what makes SQLite fast: per-statement costs dominate one-row inserts), a partial one row by row.
  template <typename Row>
  Status flushPending() {
    std::vector<Row>& pending = std::get<std::vector<Row>>(pending_);
    if (pending.empty()) return Status::ok();
    GPUSCOPE_RETURN_IF_ERROR(beginIfNeeded());
    constexpr size_t kTable = detail::TupleIndex<Row, schema::AllRows>::value;
    constexpr int kColumns = static_cast<int>(std::decay_t<decltype(schema::tableOf<Row>())>::kColumnCount);
    Status status;
    if (pending.size() == kBatchRows) {
      for (size_t i = 0; i < pending.size(); ++i) {
        schema::bindRow(batch_inserts_[kTable], pending[i], 1 + static_cast<int>(i) * kColumns);
      }
      status = batch_inserts_[kTable].run();
    } else {
      for (size_t i = 0; i < pending.size() && status.isOk(); ++i) {
        schema::bindRow(inserts_[kTable], pending[i]);
        status = inserts_[kTable].run();
      }
    }
    pending.clear();
    return status.isOk() ? status : fail(status);
  }
  void abandon();

  sqlite::Database db_;
  std::string path_;        // where the trace ends up
  std::string write_path_;  // where it is written (a temporary file when atomic)
  Options options_;
  static constexpr size_t kBatchRows = 64;
  template <typename Tuple>
  struct RowQueues;
  template <typename... Rows>
  struct RowQueues<std::tuple<Rows...>> {
    using type = std::tuple<std::vector<Rows>...>;
  };

  std::array<sqlite::Statement, std::tuple_size_v<schema::AllRows>> inserts_;        // one row
  std::array<sqlite::Statement, std::tuple_size_v<schema::AllRows>> batch_inserts_;  // kBatchRows rows
  RowQueues<schema::AllRows>::type pending_;  // rows appended but not inserted yet, per table
  std::unordered_map<std::string, int64_t, detail::StringHash, std::equal_to<>> strings_;
  std::unordered_map<schema::KernelConfigRow, int64_t, detail::RowHash<schema::KernelConfigRow>> kernel_configs_;
  bool in_transaction_ = false;
  bool finished_ = false;
  int64_t rows_in_transaction_ = 0;
  int64_t rows_written_ = 0;
  Status failure_;  // sticky: once writing failed, every later call returns this
};

}  // namespace gpuscope
