#include "collector/session_info.h"

#include <dlfcn.h>
#include <link.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
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

std::optional<int64_t> loadedRuntimeVersion() {
  std::string path;
  dl_iterate_phdr(
      [](dl_phdr_info* info, size_t, void* found) {
        const char* name = info->dlpi_name ? std::strrchr(info->dlpi_name, '/') : nullptr;
        if (!name || std::strncmp(name + 1, "libcudart.so", 12) != 0) return 0;
        *static_cast<std::string*>(found) = info->dlpi_name;
        return 1;
      },
      &path);
  if (path.empty()) return std::nullopt;
  void* library = dlopen(path.c_str(), RTLD_NOW | RTLD_NOLOAD);  // never loads one the program did not
  if (!library) return std::nullopt;
  // A constant of the library: it starts nothing (no driver, no context).
  using GetVersion = int (*)(int*);
  const auto get = reinterpret_cast<GetVersion>(dlsym(library, "cudaRuntimeGetVersion"));
  int version = 0;
  const bool known = get && get(&version) == 0 && version > 0;
  dlclose(library);  // the reference RTLD_NOLOAD took
  return known ? std::optional<int64_t>(version) : std::nullopt;
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
