#include "gui/trace_snapshot.h"

#include <QDir>
#include <QTemporaryDir>
#include <filesystem>

#include "advisor/context.h"
#include "formats/trace_import.h"

namespace gpuscope::gui {

namespace {

// SQLite files start with this; everything else is offered to `gpuscope import`.
bool isSqlite(const std::string& path) {
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) return false;
  char head[16] = {};
  const size_t n = std::fread(head, 1, sizeof head, f);
  std::fclose(f);
  return n == sizeof head && std::string(head, 15) == "SQLite format 3";
}

Result<analysis::TraceData> loadOrImport(const std::string& path) {
  if (!std::filesystem::exists(path)) return Status(ErrorKind::kNotFound, path + ": no such file");
  if (isSqlite(path)) return analysis::loadTrace(path);
  QTemporaryDir dir;
  if (!dir.isValid()) return Status(ErrorKind::kIo, "cannot make a temporary folder to import " + path);
  const std::string imported = QDir(dir.path()).filePath("imported.gpuscope").toStdString();
  if (Status s = importTrace(path, imported, false); !s) return s;
  return analysis::loadTrace(imported);  // loaded into memory: the temporary file may go
}

}  // namespace

Result<std::shared_ptr<const TraceSnapshot>> loadSnapshot(const std::string& path) {
  Result<analysis::TraceData> trace = loadOrImport(path);
  if (!trace) return trace.status();
  auto snapshot = std::make_shared<TraceSnapshot>();
  snapshot->path = path;
  snapshot->data = std::make_shared<const analysis::TraceData>(std::move(*trace));
  snapshot->tracks = std::make_shared<const std::vector<Track>>(buildTracks(*snapshot->data));
  snapshot->warnings = analysis::traceWarnings(*snapshot->data);
  return std::shared_ptr<const TraceSnapshot>(std::move(snapshot));
}

std::shared_ptr<const TraceSnapshot> analyseSnapshot(const TraceSnapshot& loaded) {
  auto snapshot = std::make_shared<TraceSnapshot>();
  snapshot->path = loaded.path;
  snapshot->data = loaded.data;
  snapshot->tracks = loaded.tracks;
  snapshot->analysed = true;
  // The advisor's context already holds every analysis the views show: each is computed once.
  advisor::Context context = advisor::buildContext(*snapshot->data);
  snapshot->advice = advisor::advise(context);
  snapshot->stats = std::move(context.stats);
  snapshot->iterations = std::move(context.iterations);
  snapshot->memory = std::move(context.memory);
  snapshot->categories = std::move(context.categories);
  snapshot->pools = std::move(context.pools);
  snapshot->warnings = snapshot->stats.warnings;
  snapshot->collectives = std::move(context.collectives);
  return snapshot;
}

Result<std::shared_ptr<const TraceSnapshot>> analyseTrace(const std::string& path) {
  Result<std::shared_ptr<const TraceSnapshot>> loaded = loadSnapshot(path);
  if (!loaded) return loaded.status();
  return analyseSnapshot(**loaded);
}

}  // namespace gpuscope::gui
