#include "collector/program_exit.h"

#include <signal.h>
#include <sys/wait.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <vector>

namespace fs = std::filesystem;

namespace gpuscope::collector {

namespace {

// The uncaught Python exception of the program's processes, first by file name, as the bridge wrote it.
std::string pythonException(const std::string& parts_dir) {
  std::vector<fs::path> files;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(parts_dir, ec)) {
    const std::string name = entry.path().filename().string();
    if (name.rfind("exception-", 0) == 0 && entry.path().extension() == ".txt") files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  for (const fs::path& file : files) {
    std::ifstream in(file);
    std::string line;
    if (std::getline(in, line) && !line.empty()) return line.substr(0, 500);
  }
  return "";
}

}  // namespace

schema::DataQualityRow programExitNote(int wait_status, const std::string& parts_dir) {
  schema::DataQualityRow row{std::nullopt, schema::Severity::kInfo, "program_exit", 0, "", std::nullopt};
  if (WIFEXITED(wait_status) && WEXITSTATUS(wait_status) == 0) {
    row.message = "the program exited with code 0";
    return row;
  }
  if (WIFSIGNALED(wait_status)) {
    const int sig = WTERMSIG(wait_status);
    const char* name = sigabbrev_np(sig);
    row.count = 128 + sig;
    row.message = "the program was ended by signal " + std::to_string(sig) + " (SIG" + (name ? name : "?") + ")";
    if (sig == SIGINT || sig == SIGTERM || sig == SIGHUP) {
      row.severity = schema::Severity::kWarning;
      row.code = "program_stopped";
      return row;
    }
  } else {
    row.count = WEXITSTATUS(wait_status);
    row.message = "the program exited with code " + std::to_string(row.count);
  }
  row.severity = schema::Severity::kError;
  row.code = "program_failed";
  if (const std::string exception = pythonException(parts_dir); !exception.empty()) {
    row.message += ", of Python's " + exception;
  }
  return row;
}

}  // namespace gpuscope::collector
