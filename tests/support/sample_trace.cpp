#include "tests/support/sample_trace.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

extern char** environ;

namespace gpuscope::testing {

using namespace schema;

const std::string kHostileKernelName =
    "void scale<\"q\\\"uote\", 'back\\\\slash'>(float*)\n\t\x01 bad:\xff\xfe end:\xe2\x82 caf\xc3\xa9 \xf0\x9f\x9a\x80";

namespace {

constexpr int64_t kT0 = 1'763'800'000'000'000'000;  // a CUPTI (CLOCK_REALTIME) timestamp, ns
constexpr int64_t kSession = 1;
constexpr int64_t kPid = 4242;
constexpr int64_t kMainThread = 4242;

Status writeMetadata(TraceWriter& w) {
  GPUSCOPE_RETURN_IF_ERROR(w.append(TraceInfoRow{"created_by", "gpuscope tests"}));
  GPUSCOPE_RETURN_IF_ERROR(w.append(SessionRow{kSession, kPid, 4200, "gpu-node-1", "python train.py --lr 0.1", 0, 0, 1,
                                               kT0, kT0 + 9'000'000, 13000, 13000, 130001, "0.1.0"}));
  GPUSCOPE_RETURN_IF_ERROR(w.append(ClockSyncRow{kSession, kT0, kT0, 5'000'000'000}));
  GPUSCOPE_RETURN_IF_ERROR(w.append(DeviceRow{kSession,
                                              0,
                                              "NVIDIA H100 80GB HBM3",
                                              "GPU-0a1b2c3d",
                                              9,
                                              0,
                                              132,
                                              85'031'714'816,
                                              3'352'000'000'000,
                                              52'428'800,
                                              1024,
                                              2048,
                                              32,
                                              65536,
                                              65536,
                                              233'472,
                                              49'152,
                                              232'448,
                                              32,
                                              1'980'000}));
  GPUSCOPE_RETURN_IF_ERROR(w.append(ContextRow{kSession, 1, 0, 7}));
  GPUSCOPE_RETURN_IF_ERROR(w.append(ThreadRow{kSession, kMainThread, "python"}));
  return w.append(ThreadRow{kSession, 4250, "pt_autograd_0"});
}

Status writeApiCalls(TraceWriter& w) {
  struct Call {
    ApiKind api;
    const char* name;
    int64_t cbid, correlation, start, end, rc;
  };
  const Call calls[] = {
      {ApiKind::kRuntime, "cudaMalloc", 20, 9, 100'000, 180'000, 0},
      {ApiKind::kRuntime, "cudaLaunchKernel", 211, 10, 200'000, 205'000, 0},
      {ApiKind::kRuntime, "cudaLaunchKernel", 211, 11, 206'000, 209'000, 0},
      {ApiKind::kRuntime, "cudaLaunchKernel", 211, 12, 210'000, 213'000, 0},
      {ApiKind::kRuntime, "cudaMemcpyAsync", 41, 13, 214'000, 1'600'000, 0},
      {ApiKind::kRuntime, "cudaMemsetAsync", 51, 14, 1'601'000, 1'604'000, 0},
      {ApiKind::kDriver, "cuLaunchKernel", 307, 15, 1'605'000, 1'609'000, 0},
      {ApiKind::kRuntime, "cudaGraphLaunch", 311, 16, 1'610'000, 1'620'000, 0},
      {ApiKind::kRuntime, "cudaStreamSynchronize", 131, 17, 1'621'000, 3'000'000, 0},
      {ApiKind::kRuntime, "cudaFree", 22, 18, 3'100'000, 3'150'000, 1},
  };
  for (const Call& c : calls) {
    GPUSCOPE_RETURN_IF_ERROR(w.append(ApiCallRow{kSession, c.api, w.intern(c.name), c.cbid, kMainThread, kT0 + c.start,
                                                 kT0 + c.end, c.correlation, c.rc}));
  }
  return Status::ok();
}

Status writeKernels(TraceWriter& w) {
  KernelConfigRow c;
  c.name = w.intern("void at::native::vectorized_elementwise_kernel<4, at::native::AddFunctor<float>>(int, float*)");
  c.mangled_name = w.intern("_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_10AddFunctorIfEEEEviPf");
  c.grid_x = 1024, c.grid_y = 1, c.grid_z = 1, c.block_x = 128, c.block_y = 1, c.block_z = 1;
  c.registers_per_thread = 32;
  KernelRow k{kSession, 0, 1, 7, 10, kT0 + 300'000, kT0 + 420'000, kT0 + 204'000, kT0 + 250'000, w.intern(c)};
  GPUSCOPE_RETURN_IF_ERROR(w.append(k));

  c.name = w.intern("sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x1x1_execute_kernel");
  c.mangled_name = {};
  c.grid_x = 132, c.block_x = 384, c.registers_per_thread = 168, c.dynamic_shared_bytes = 213'000;
  c.cluster_x = 2, c.cluster_y = 1, c.cluster_z = 1;
  k.correlation_id = 11, k.start_ns = kT0 + 421'000, k.end_ns = kT0 + 900'000, k.config_id = w.intern(c);
  GPUSCOPE_RETURN_IF_ERROR(w.append(k));

  c.name = w.intern(kHostileKernelName);
  c.cluster_x = c.cluster_y = c.cluster_z = 0;
  c.grid_x = 1, c.block_x = 32, c.registers_per_thread = 16, c.dynamic_shared_bytes = 0, c.static_shared_bytes = 1024;
  k.correlation_id = 12, k.start_ns = kT0 + 901'000, k.end_ns = kT0 + 905'000, k.config_id = w.intern(c);
  k.queued_ns = k.submitted_ns = std::nullopt;
  GPUSCOPE_RETURN_IF_ERROR(w.append(k));

  c.name = w.intern("triton_poi_fused_add_mul_0");
  k.stream_id = 13, k.correlation_id = 15, k.start_ns = kT0 + 1'700'000, k.end_ns = kT0 + 1'750'000;
  k.config_id = w.intern(c);
  GPUSCOPE_RETURN_IF_ERROR(w.append(k));

  c.name = w.intern("graph_node_kernel");
  k.stream_id = 7, k.correlation_id = 16, k.start_ns = kT0 + 1'800'000, k.end_ns = kT0 + 1'810'000;
  k.config_id = w.intern(c);
  k.graph_id = 3, k.graph_node_id = 31;
  return w.append(k);
}

Status writeCopiesAndSyncs(TraceWriter& w) {
  GPUSCOPE_RETURN_IF_ERROR(w.append(MemcpyRow{kSession, 0, 1, 7, 13, kT0 + 910'000, kT0 + 1'590'000,
                                              CopyKind::kHostToDevice, MemoryKind::kPageable, MemoryKind::kDevice,
                                              4 << 20, std::nullopt, std::nullopt, 1, std::nullopt, std::nullopt}));
  GPUSCOPE_RETURN_IF_ERROR(w.append(MemsetRow{kSession, 0, 1, 7, 14, kT0 + 1'603'000, kT0 + 1'604'500, 1 << 20, 0,
                                              MemoryKind::kDevice, std::nullopt, std::nullopt}));
  GPUSCOPE_RETURN_IF_ERROR(w.append(GraphLaunchRow{kSession, 0, 1, 7, 16, 3, kT0 + 1'800'000, kT0 + 1'815'000}));
  return w.append(
      SyncRow{kSession, SyncKind::kStreamSynchronize, 1, 7, std::nullopt, kT0 + 1'621'500, kT0 + 2'990'000, 17});
}

Status writeMemory(TraceWriter& w) {
  GPUSCOPE_RETURN_IF_ERROR(w.append(MemoryEventRow{kSession,
                                                   0,
                                                   1,
                                                   std::nullopt,
                                                   9,
                                                   kT0 + 170'000,
                                                   MemoryOp::kAllocation,
                                                   MemoryKind::kDevice,
                                                   0x7f0000000000,
                                                   256 << 20,
                                                   0,
                                                   std::nullopt,
                                                   {}}));
  GPUSCOPE_RETURN_IF_ERROR(w.append(MemoryEventRow{kSession,
                                                   0,
                                                   1,
                                                   7,
                                                   std::nullopt,
                                                   kT0 + 175'000,
                                                   MemoryOp::kAllocation,
                                                   MemoryKind::kPinned,
                                                   0x200000000,
                                                   1 << 20,
                                                   1,
                                                   0x7f1000000000,
                                                   {}}));
  GPUSCOPE_RETURN_IF_ERROR(w.append(MemoryEventRow{kSession, 0, 1, std::nullopt, std::nullopt, kT0 + 150'000,
                                                   MemoryOp::kAllocation, MemoryKind::kDeviceStatic, 0x7e0000000000,
                                                   4096, 0, std::nullopt, w.intern("d_lookup_table")}));
  GPUSCOPE_RETURN_IF_ERROR(w.append(MemoryEventRow{kSession,
                                                   0,
                                                   1,
                                                   std::nullopt,
                                                   18,
                                                   kT0 + 3'140'000,
                                                   MemoryOp::kRelease,
                                                   MemoryKind::kDevice,
                                                   0x7f0000000000,
                                                   256 << 20,
                                                   0,
                                                   std::nullopt,
                                                   {}}));
  return w.append(
      MemoryPoolEventRow{kSession, 0, kT0 + 160'000, PoolOp::kCreated, 0x7f1000000000, 2 << 20, 0, std::nullopt});
}

Status writeAnnotations(TraceWriter& w) {
  GPUSCOPE_RETURN_IF_ERROR(w.append(NvtxRow{kSession,
                                            NvtxKind::kRange,
                                            {},
                                            w.intern("forward"),
                                            kMainThread,
                                            kT0 + 190'000,
                                            kT0 + 1'000'000,
                                            std::nullopt,
                                            std::nullopt}));
  GPUSCOPE_RETURN_IF_ERROR(
      w.append(NvtxRow{kSession, NvtxKind::kRange, w.intern("gpuscope"), w.intern("step \"1\" \\ \x02"), kMainThread,
                       kT0 + 150'000, kT0 + 3'200'000, 2, 0xff00ff00}));
  GPUSCOPE_RETURN_IF_ERROR(w.append(NvtxRow{kSession,
                                            NvtxKind::kMark,
                                            {},
                                            w.intern("checkpoint"),
                                            4250,
                                            kT0 + 2'000'000,
                                            kT0 + 2'000'000,
                                            std::nullopt,
                                            std::nullopt}));
  GPUSCOPE_RETURN_IF_ERROR(w.append(
      OverheadRow{kSession, OverheadKind::kBufferFlush, 4260, std::nullopt, kT0 + 3'300'000, kT0 + 3'310'000}));
  return w.append(DataQualityRow{kSession, Severity::kWarning, "dropped_records", 3,
                                 "CUPTI dropped 3 activity records: its buffers were full", kT0 + 3'400'000});
}

}  // namespace

Status writeSampleRows(TraceWriter& w) {
  GPUSCOPE_RETURN_IF_ERROR(writeMetadata(w));
  GPUSCOPE_RETURN_IF_ERROR(writeApiCalls(w));
  GPUSCOPE_RETURN_IF_ERROR(writeKernels(w));
  GPUSCOPE_RETURN_IF_ERROR(writeCopiesAndSyncs(w));
  GPUSCOPE_RETURN_IF_ERROR(writeMemory(w));
  return writeAnnotations(w);
}

Status writeSampleTrace(const std::string& path) {
  Result<TraceWriter> w = TraceWriter::create(path);
  if (!w) return w.status();
  GPUSCOPE_RETURN_IF_ERROR(writeSampleRows(*w));
  return w->finish();
}

Status writeEmptyTrace(const std::string& path) {
  Result<TraceWriter> w = TraceWriter::create(path);
  if (!w) return w.status();
  GPUSCOPE_RETURN_IF_ERROR(writeMetadata(*w));
  return w->finish();
}

TempDir::TempDir() {
  std::string pattern = (std::filesystem::temp_directory_path() / "gpuscope-test-XXXXXX").string();
  if (!mkdtemp(pattern.data())) throw std::runtime_error("mkdtemp failed");
  dir_ = pattern;
}

TempDir::~TempDir() {
  std::error_code ec;
  std::filesystem::remove_all(dir_, ec);
}

std::string binDir() { return std::filesystem::read_symlink("/proc/self/exe").parent_path().string(); }

std::string gpuscopeBinary() { return binDir() + "/gpuscope"; }

GpuscopeRun runGpuscope(const std::vector<std::string>& args, const TempDir& dir,
                        const std::function<void(pid_t)>& on_started) {
  std::vector<std::string> all = {gpuscopeBinary()};
  all.insert(all.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (std::string& a : all) argv.push_back(a.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t files;
  posix_spawn_file_actions_init(&files);
  posix_spawn_file_actions_addopen(&files, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&files, 1, dir.path("out").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_addopen(&files, 2, dir.path("err").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  pid_t pid = 0;
  const int spawned = posix_spawn(&pid, argv[0], &files, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&files);
  if (spawned != 0) throw std::runtime_error("cannot start " + all[0]);
  if (on_started) on_started(pid);
  int status = 0;
  waitpid(pid, &status, 0);
  return {status, readFile(dir.path("out")), readFile(dir.path("err"))};
}

std::string readFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void writeFile(const std::string& path, const std::string& contents) {
  std::ofstream(path, std::ios::binary) << contents;
}

std::string fixturePath(const std::string& name) {
  const std::string committed = std::string(GPUSCOPE_SOURCE_DIR) + "/tests/fixtures/" + name;
  if (std::filesystem::exists(committed)) return committed;
  return std::string(GPUSCOPE_PACKED_FIXTURES) + "/" + name;  // tests/fixtures/packed.tar.xz, unpacked by CMake
}

std::string jsonSchemaProblem(const std::string& schema, const std::string& json_path) {
  const std::string source = GPUSCOPE_SOURCE_DIR;
  const std::string command = "python3 '" + source + "/tests/support/check_json_schema.py' '" + source + "/" + schema +
                              "' '" + json_path + "' 2>&1";
  FILE* pipe = popen(command.c_str(), "r");
  if (!pipe) return "cannot run python3";
  std::string output;
  char buffer[512];
  while (size_t n = std::fread(buffer, 1, sizeof buffer, pipe)) output.append(buffer, n);
  const int status = pclose(pipe);
  if (status == 0) return "";
  return output.empty() ? "python3 check_json_schema.py failed" : output;
}

}  // namespace gpuscope::testing
