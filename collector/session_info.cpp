#include "collector/session_info.h"

#include <unistd.h>

#include <cstdlib>
#include <ctime>
#include <fstream>
#include <sstream>

namespace gpuscope::collector {

namespace {

std::string readCommandLine() {
  std::ifstream in("/proc/self/cmdline", std::ios::binary);
  std::string raw((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  while (!raw.empty() && raw.back() == '\0') raw.pop_back();
  for (char& c : raw) {
    if (c == '\0') c = ' ';
  }
  return raw;
}

int64_t nowNs(clockid_t clock) {
  timespec ts{};
  clock_gettime(clock, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

bool interesting(std::string_view name) {
  for (std::string_view prefix : {"CUDA_", "NCCL_", "PYTORCH_", "TORCH_", "XLA_", "JAX_"}) {
    if (name.starts_with(prefix)) return true;
  }
  return name == "OMP_NUM_THREADS";
}

}  // namespace

std::optional<int64_t> integerFromEnvironment(std::initializer_list<const char*> names) {
  for (const char* name : names) {
    const char* value = std::getenv(name);
    if (!value || !*value) continue;
    char* end = nullptr;
    const long long parsed = std::strtoll(value, &end, 10);
    if (end && *end == '\0') return parsed;
  }
  return std::nullopt;
}

schema::SessionRow describeThisProcess(int64_t session_id) {
  schema::SessionRow s;
  s.id = session_id;
  s.pid = getpid();
  s.parent_pid = getppid();
  char host[256] = {};
  gethostname(host, sizeof host - 1);
  s.hostname = host;
  s.command_line = readCommandLine();
  s.rank = integerFromEnvironment({"RANK", "OMPI_COMM_WORLD_RANK", "PMI_RANK", "SLURM_PROCID"});
  s.local_rank = integerFromEnvironment({"LOCAL_RANK", "OMPI_COMM_WORLD_LOCAL_RANK", "SLURM_LOCALID"});
  s.world_size = integerFromEnvironment({"WORLD_SIZE", "OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "SLURM_NTASKS"});
  s.gpuscope_version = GPUSCOPE_VERSION;
  return s;
}

schema::ClockSyncRow sampleClocks(int64_t session_id, int64_t trace_ns) {
  return {session_id, trace_ns, nowNs(CLOCK_REALTIME), nowNs(CLOCK_MONOTONIC)};
}

Environment interestingEnvironment(std::string_view prefix) {
  Environment found;
  for (char** entry = environ; entry && *entry; ++entry) {
    const std::string_view text(*entry);
    const size_t eq = text.find('=');
    if (eq == std::string_view::npos) continue;
    const std::string_view name = text.substr(0, eq), value = text.substr(eq + 1);
    if (!interesting(name) || !name.starts_with(prefix)) continue;
    if (value.find("gpuscope") != std::string_view::npos) continue;  // CUDA_INJECTION64_PATH and the like
    found.emplace_back(name, value);
  }
  return found;
}

std::string threadName(int64_t thread_id) {
  std::ifstream in("/proc/self/task/" + std::to_string(thread_id) + "/comm");
  std::string name;
  std::getline(in, name);
  return name;
}

}  // namespace gpuscope::collector
