#include "formats/trace_writer.h"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>

#include "formats/schema_info.h"

namespace gpuscope {

namespace {

Status ioError(const std::string& path, std::string_view doing) {
  return Status(ErrorKind::kIo, path + ": cannot " + std::string(doing) + ": " + std::strerror(errno));
}

void removeWithSideFiles(const std::string& path) {
  for (const char* suffix : {"", "-wal", "-shm", "-journal"}) std::remove((path + suffix).c_str());
}

// Settings for fast bulk inserts that stay readable after a crash: in WAL mode every committed transaction
// is in the operating system's hands as soon as it is written, so it survives the process being killed.
// synchronous=OFF skips the fsyncs, which protect only against the machine itself going down (power loss,
// kernel panic) — not a case a profiler's trace must survive — and cost a quarter of the writer's time.
Status configure(sqlite::Database& db, int64_t page_size) {
  const std::string pragmas =
      "PRAGMA page_size=" + std::to_string(page_size) +
      "; PRAGMA journal_mode=WAL; PRAGMA synchronous=OFF; PRAGMA cache_size=-65536; PRAGMA application_id=" +
      std::to_string(schema::kApplicationId) + "; PRAGMA user_version=" + std::to_string(schema::kSchemaVersion) + ";";
  return db.exec(pragmas);
}

Status createSchema(sqlite::Database& db) {
  GPUSCOPE_RETURN_IF_ERROR(db.exec("BEGIN"));
  for (const std::string& sql : schema::createSchemaSql()) GPUSCOPE_RETURN_IF_ERROR(db.exec(sql));
  return db.exec("COMMIT");
}

}  // namespace

Result<TraceWriter> TraceWriter::create(const std::string& path, const Options& options) {
  std::error_code ec;
  if (std::filesystem::exists(path, ec) && !options.overwrite) {
    return Status(ErrorKind::kUsage, path + ": already exists (use --force to overwrite)");
  }
  const std::string write_path = options.atomic ? path + ".tmp-" + std::to_string(getpid()) : path;
  removeWithSideFiles(write_path);
  // Create the file ourselves first: SQLite's messages for an unwritable directory are vague.
  if (FILE* f = std::fopen(write_path.c_str(), "wb")) {
    std::fclose(f);
  } else {
    return ioError(path, "create the file");
  }
  Result<sqlite::Database> db = sqlite::Database::open(write_path, sqlite::Database::Mode::kCreate);
  if (!db) {
    removeWithSideFiles(write_path);
    return db.status();
  }
  TraceWriter writer(std::move(*db), path, write_path, options);
  Status status = configure(writer.db_, options.page_size);
  if (status) status = createSchema(writer.db_);
  if (status) status = writer.prepareStatements();
  if (!status) {
    writer.abandon();
    return status;
  }
  return writer;
}

TraceWriter::TraceWriter(sqlite::Database db, std::string path, std::string write_path, Options options)
    : db_(std::move(db)), path_(std::move(path)), write_path_(std::move(write_path)), options_(options) {}

TraceWriter::TraceWriter(TraceWriter&&) noexcept = default;
TraceWriter& TraceWriter::operator=(TraceWriter&&) noexcept = default;

TraceWriter::~TraceWriter() {
  if (finished_ || !db_.handle()) return;
  if (options_.atomic) {
    abandon();
  } else {
    (void)commit();
  }
}

Status TraceWriter::prepareStatements() {
  size_t i = 0;
  for (const schema::TableInfo& table : schema::allTables()) {
    Result<sqlite::Statement> stmt = db_.prepare(schema::insertSql(table));
    if (!stmt) return stmt.status();
    Result<sqlite::Statement> batch = db_.prepare(schema::insertSql(table, kBatchRows));
    if (!batch) return batch.status();
    inserts_[i] = std::move(*stmt);
    batch_inserts_[i++] = std::move(*batch);
  }
  return Status::ok();
}

schema::StringId TraceWriter::intern(std::string_view text) {
  if (auto it = strings_.find(text); it != strings_.end()) return {it->second};
  const int64_t id = static_cast<int64_t>(strings_.size()) + 1;
  strings_.emplace(std::string(text), id);
  if (Status status = append(schema::StringRow{id, std::string(text)}); !status) failure_ = status;
  return {id};
}

int64_t TraceWriter::intern(const schema::KernelConfigRow& config) {
  schema::KernelConfigRow key = config;
  key.id = 0;
  if (auto it = kernel_configs_.find(key); it != kernel_configs_.end()) return it->second;
  const int64_t id = static_cast<int64_t>(kernel_configs_.size()) + 1;
  kernel_configs_.emplace(key, id);
  key.id = id;
  if (Status status = append(key); !status) failure_ = status;
  return id;
}

Status TraceWriter::beginIfNeeded() {
  if (in_transaction_) return Status::ok();
  if (Status status = db_.exec("BEGIN"); !status) return fail(status);
  in_transaction_ = true;
  return Status::ok();
}

Status TraceWriter::flushAllPending() {
  Status status;
  std::apply(
      [&](auto&... queues) {
        ((status = status.isOk() ? flushPending<typename std::decay_t<decltype(queues)>::value_type>() : status), ...);
      },
      pending_);
  return status;
}

Status TraceWriter::fail(Status status) {
  if (failure_.isOk()) failure_ = std::move(status);
  return failure_;
}

Status TraceWriter::updateSessionEnd(int64_t session_id, int64_t end_ns, std::optional<int64_t> runtime_version) {
  if (!failure_.isOk()) return failure_;
  GPUSCOPE_RETURN_IF_ERROR(flushAllPending());
  GPUSCOPE_RETURN_IF_ERROR(beginIfNeeded());
  Result<sqlite::Statement> update = db_.prepare(
      "UPDATE session SET end_ns = ?, cuda_runtime_version = COALESCE(?, cuda_runtime_version) WHERE id = ?");
  if (!update) return fail(update.status());
  update->bindInt(1, end_ns);
  if (runtime_version) {
    update->bindInt(2, *runtime_version);
  } else {
    update->bindNull(2);
  }
  update->bindInt(3, session_id);
  if (Status status = update->run(); !status) return fail(status);
  return Status::ok();
}

Status TraceWriter::commit() {
  if (!failure_.isOk()) return failure_;
  GPUSCOPE_RETURN_IF_ERROR(flushAllPending());
  if (!in_transaction_) return Status::ok();
  in_transaction_ = false;
  rows_in_transaction_ = 0;
  if (Status status = db_.exec("COMMIT"); !status) return fail(status);
  return Status::ok();
}

Status TraceWriter::finish() {
  if (finished_) return Status::ok();
  Status status = commit();
  if (status) {
    for (const std::string& sql : schema::createIndexSql()) {
      if (status = db_.exec(sql); !status) break;
    }
  }
  // Back to a rollback journal: folds the WAL into the file so the trace is one self-contained file.
  if (status) status = db_.exec("PRAGMA journal_mode=DELETE");
  inserts_ = {};
  batch_inserts_ = {};
  if (status) status = db_.close();
  if (status && options_.atomic && std::rename(write_path_.c_str(), path_.c_str()) != 0) {
    status = ioError(path_, "move the finished trace into place");
  }
  if (!status) {
    abandon();
    return fail(status);
  }
  finished_ = true;
  return Status::ok();
}

void TraceWriter::abandon() {
  inserts_ = {};
  batch_inserts_ = {};
  (void)db_.close();
  if (options_.atomic) removeWithSideFiles(write_path_);
  finished_ = true;
}

}  // namespace gpuscope
