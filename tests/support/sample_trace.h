// A small, deterministic trace that touches every table, with hostile strings (quotes, backslashes,
// control characters, invalid UTF-8) in kernel and NVTX names. Tests, the golden export and the fuzz
// corpus are built from it; the numbers are shaped like a real H100 recording.
#pragma once

#include <sys/types.h>

#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "formats/status.h"
#include "formats/trace_writer.h"

namespace gpuscope::testing {

// The kernel name that carries every kind of hostile byte.
extern const std::string kHostileKernelName;

Status writeSampleRows(TraceWriter& writer);
Status writeSampleTrace(const std::string& path);
// A valid trace with sessions and devices but no events.
Status writeEmptyTrace(const std::string& path);

// A directory under /tmp removed with its contents on destruction.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  std::string path(const std::string& name) const { return (dir_ / name).string(); }
  const std::filesystem::path& dir() const { return dir_; }

 private:
  std::filesystem::path dir_;
};

std::string readFile(const std::string& path);
// The folder of the running test executable: gpuscope and the samples are built beside it, so tests find
// them there wherever the build folder was copied (the GPU machine runs a build made elsewhere).
std::string binDir();
std::string gpuscopeBinary();
// A trace of tests/fixtures/ (recorded on an H100; see its README).
std::string fixturePath(const std::string& name);

// Runs gpuscope with args (no shell, stdin from /dev/null), its stdout and stderr captured through files
// in dir; on_started(pid) runs while it is running (to signal it, say).
struct GpuscopeRun {
  int wait_status;
  std::string out;
  std::string err;
};
GpuscopeRun runGpuscope(const std::vector<std::string>& args, const TempDir& dir,
                        const std::function<void(pid_t)>& on_started = {});
void writeFile(const std::string& path, const std::string& contents);
// Checks a JSON file against a schema of the source tree (path relative to it) with python3-jsonschema;
// returns "" when valid, else the error.
std::string jsonSchemaProblem(const std::string& schema, const std::string& json_path);

}  // namespace gpuscope::testing
