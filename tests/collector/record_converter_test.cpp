// CUPTI records are plain structs: these tests build them as CUPTI would fill them and run them through
// the real converter and writer, then read the trace back.
#include <gtest/gtest.h>

#include "collector/record_converter.h"
#include "formats/trace_reader.h"
#include "tests/support/sample_trace.h"

namespace gpuscope::collector {
namespace {

using namespace schema;
using gpuscope::testing::TempDir;

std::string fakeApiName(ApiKind api, uint32_t cbid) {
  return (api == ApiKind::kRuntime ? "cudaFunction" : "cuFunction") + std::to_string(cbid);
}

class ConverterTest : public ::testing::Test {
 protected:
  void SetUp() override {
    Result<TraceWriter> w = TraceWriter::create(dir_.path("t.gpuscope"));
    ASSERT_TRUE(w);
    writer_ = std::make_unique<TraceWriter>(std::move(*w));
    converter_ = std::make_unique<RecordConverter>(*writer_, 1, fakeApiName);
  }

  template <typename Record>
  void convert(const Record& record) {
    ASSERT_TRUE(converter_->convert(reinterpret_cast<const CUpti_Activity&>(record)));
  }

  TraceReader finishAndRead() {
    EXPECT_TRUE(writer_->finish());
    Result<TraceReader> r = TraceReader::open(dir_.path("t.gpuscope"));
    EXPECT_TRUE(r) << r.status().message();
    return std::move(*r);
  }

  static CUpti_ActivityKernel10 kernel(const char* name, uint32_t correlation, uint64_t start, uint64_t end) {
    CUpti_ActivityKernel10 k{};
    k.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
    k.name = name;
    k.correlationId = correlation;
    k.start = start;
    k.end = end;
    k.deviceId = 0, k.contextId = 1, k.streamId = 7;
    k.gridX = 80, k.gridY = 1, k.gridZ = 1, k.blockX = 256, k.blockY = 1, k.blockZ = 1;
    k.registersPerThread = 40;
    k.staticSharedMemory = 1024;
    k.dynamicSharedMemory = 2048;
    return k;
  }

  TempDir dir_;
  std::unique_ptr<TraceWriter> writer_;
  std::unique_ptr<RecordConverter> converter_;
};

TEST_F(ConverterTest, KernelsAreDemangledAndShareConfigurations) {
  convert(kernel("_Z5scalePfif", 10, 1000, 2000));
  auto second = kernel("_Z5scalePfif", 11, 3000, 3500);
  second.queued = 2900, second.submitted = 2950, second.graphId = 4, second.graphNodeId = 41;
  convert(second);
  convert(kernel("triton_poi_fused_0", 12, 4000, 4100));
  TraceReader r = finishAndRead();
  Result<std::vector<KernelRow>> kernels = r.readAll<KernelRow>();
  Result<std::vector<KernelConfigRow>> configs = r.readAll<KernelConfigRow>();
  Result<std::vector<std::string>> strings = r.loadStrings();
  ASSERT_TRUE(kernels && configs && strings);
  ASSERT_EQ(kernels->size(), 3u);
  ASSERT_EQ(configs->size(), 2u);  // the two launches of scale share one configuration
  EXPECT_EQ((*kernels)[0].config_id, (*kernels)[1].config_id);
  const KernelConfigRow& scale = (*configs)[0];
  EXPECT_EQ(stringOf(*strings, scale.name), "scale(float*, int, float)");
  EXPECT_EQ(stringOf(*strings, scale.mangled_name), "_Z5scalePfif");
  EXPECT_EQ(scale.grid_x, 80);
  EXPECT_EQ(scale.block_x, 256);
  EXPECT_EQ(scale.registers_per_thread, 40);
  EXPECT_EQ(scale.dynamic_shared_bytes, 2048);
  EXPECT_TRUE((*configs)[1].mangled_name.empty());  // not a mangled name
  const KernelRow& k = (*kernels)[1];
  EXPECT_EQ(k.correlation_id, 11);
  EXPECT_EQ(k.start_ns, 3000);
  EXPECT_EQ(k.end_ns, 3500);
  EXPECT_EQ(k.queued_ns, 2900);
  EXPECT_EQ(k.submitted_ns, 2950);
  EXPECT_EQ(k.graph_id, 4);
  EXPECT_EQ(k.graph_node_id, 41);
  EXPECT_FALSE((*kernels)[0].queued_ns.has_value());
  EXPECT_FALSE((*kernels)[0].graph_id.has_value());
}

TEST_F(ConverterTest, UnfinishedRecordsGetZeroLengthAndAreCounted) {
  convert(kernel("k", 1, 5000, 0));  // end 0: CUPTI_TIMESTAMP_UNKNOWN after a forced flush
  EXPECT_EQ(converter_->unfinishedRecords(), 1);
  TraceReader r = finishAndRead();
  Result<std::vector<KernelRow>> kernels = r.readAll<KernelRow>();
  ASSERT_TRUE(kernels);
  EXPECT_EQ((*kernels)[0].end_ns, 5000);
}

TEST_F(ConverterTest, CopiesSetsAndTheirMemoryKinds) {
  CUpti_ActivityMemcpy6 copy{};
  copy.kind = CUPTI_ACTIVITY_KIND_MEMCPY;
  copy.copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_HTOD;
  copy.srcKind = CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE;
  copy.dstKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
  copy.bytes = 1 << 20, copy.start = 100, copy.end = 600, copy.correlationId = 3, copy.streamId = 7;
  convert(copy);
  CUpti_ActivityMemcpyPtoP4 peer{};
  peer.kind = CUPTI_ACTIVITY_KIND_MEMCPY2;
  peer.bytes = 4096, peer.start = 700, peer.end = 800, peer.srcDeviceId = 0, peer.dstDeviceId = 1;
  peer.flags = CUPTI_ACTIVITY_FLAG_MEMCPY_ASYNC;
  convert(peer);
  CUpti_ActivityMemset4 set{};
  set.kind = CUPTI_ACTIVITY_KIND_MEMSET;
  set.bytes = 512, set.value = 0xAB, set.start = 900, set.end = 950, set.memoryKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
  convert(set);
  TraceReader r = finishAndRead();
  Result<std::vector<MemcpyRow>> copies = r.readAll<MemcpyRow>();
  Result<std::vector<MemsetRow>> sets = r.readAll<MemsetRow>();
  ASSERT_TRUE(copies && sets);
  ASSERT_EQ(copies->size(), 2u);
  EXPECT_EQ((*copies)[0].copy_kind, CopyKind::kHostToDevice);
  EXPECT_EQ((*copies)[0].src_kind, MemoryKind::kPageable);
  EXPECT_EQ((*copies)[0].is_async, 0);
  EXPECT_EQ((*copies)[0].bytes, 1 << 20);
  EXPECT_EQ((*copies)[1].copy_kind, CopyKind::kPeerToPeer);
  EXPECT_EQ((*copies)[1].dst_device_id, 1);
  EXPECT_EQ((*copies)[1].is_async, 1);
  ASSERT_EQ(sets->size(), 1u);
  EXPECT_EQ((*sets)[0].value, 0xAB);
  EXPECT_EQ((*sets)[0].memory_kind, MemoryKind::kDevice);
}

TEST_F(ConverterTest, ApiCallsAreNamedOnceAndTheirThreadsRemembered) {
  for (uint32_t i = 0; i < 3; ++i) {
    CUpti_ActivityAPI api{};
    api.kind = i == 2 ? CUPTI_ACTIVITY_KIND_DRIVER : CUPTI_ACTIVITY_KIND_RUNTIME;
    api.cbid = 211;
    api.threadId = 4242 + i;
    api.correlationId = 10 + i;
    api.start = 100 * i, api.end = 100 * i + 50;
    api.returnValue = i == 1 ? 2 : 0;
    convert(api);
  }
  EXPECT_EQ(converter_->threadsSeen().size(), 3u);
  TraceReader r = finishAndRead();
  Result<std::vector<ApiCallRow>> calls = r.readAll<ApiCallRow>();
  Result<std::vector<std::string>> strings = r.loadStrings();
  ASSERT_TRUE(calls && strings);
  ASSERT_EQ(calls->size(), 3u);
  EXPECT_EQ(stringOf(*strings, (*calls)[0].name), "cudaFunction211");
  EXPECT_EQ((*calls)[0].name, (*calls)[1].name);
  EXPECT_EQ(stringOf(*strings, (*calls)[2].name), "cuFunction211");
  EXPECT_EQ((*calls)[2].api, ApiKind::kDriver);
  EXPECT_EQ((*calls)[1].return_code, 2);
  EXPECT_EQ((*calls)[1].thread_id, 4243);
}

CUpti_ActivityMarker2 marker(uint32_t flags, uint32_t id, uint64_t t, const char* name, const char* domain = nullptr) {
  CUpti_ActivityMarker2 m{};
  m.kind = CUPTI_ACTIVITY_KIND_MARKER;
  m.flags = static_cast<CUpti_ActivityFlag>(flags);
  m.id = id;
  m.timestamp = t;
  m.name = name;
  m.domain = domain;
  m.objectKind = CUPTI_ACTIVITY_OBJECT_THREAD;
  m.objectId.pt.threadId = 99;
  return m;
}

TEST_F(ConverterTest, NvtxStartAndEndBecomeOneRange) {
  convert(marker(CUPTI_ACTIVITY_FLAG_MARKER_START, 1, 100, "forward", "my_domain"));
  convert(marker(CUPTI_ACTIVITY_FLAG_MARKER_START, 2, 150, "layer1"));
  convert(marker(CUPTI_ACTIVITY_FLAG_MARKER_END, 2, 180, nullptr));  // END records carry no name
  convert(marker(CUPTI_ACTIVITY_FLAG_MARKER_INSTANTANEOUS, 3, 190, "checkpoint"));
  convert(marker(CUPTI_ACTIVITY_FLAG_MARKER_END, 1, 200, nullptr));
  convert(marker(CUPTI_ACTIVITY_FLAG_MARKER_END, 77, 210, nullptr));  // started before recording: dropped
  convert(marker(CUPTI_ACTIVITY_FLAG_MARKER_START, 4, 220, "still open at exit"));
  ASSERT_TRUE(converter_->closeOpenRanges(500));
  TraceReader r = finishAndRead();
  Result<std::vector<NvtxRow>> nvtx = r.readAll<NvtxRow>();
  Result<std::vector<std::string>> strings = r.loadStrings();
  ASSERT_TRUE(nvtx && strings);
  ASSERT_EQ(nvtx->size(), 4u);
  EXPECT_EQ(stringOf(*strings, (*nvtx)[0].name), "layer1");
  EXPECT_EQ((*nvtx)[0].start_ns, 150);
  EXPECT_EQ((*nvtx)[0].end_ns, 180);
  EXPECT_EQ((*nvtx)[1].kind, NvtxKind::kMark);
  EXPECT_EQ(stringOf(*strings, (*nvtx)[2].name), "forward");
  EXPECT_EQ(stringOf(*strings, (*nvtx)[2].domain), "my_domain");
  EXPECT_EQ((*nvtx)[2].thread_id, 99);
  EXPECT_EQ((*nvtx)[3].end_ns, 500);
}

TEST_F(ConverterTest, SynchronisationWithoutStreamOrEvent) {
  CUpti_ActivitySynchronization2 s{};
  s.kind = CUPTI_ACTIVITY_KIND_SYNCHRONIZATION;
  s.type = CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_CONTEXT_SYNCHRONIZE;
  s.streamId = CUPTI_SYNCHRONIZATION_INVALID_VALUE;
  s.cudaEventId = CUPTI_SYNCHRONIZATION_INVALID_VALUE;
  s.start = 10, s.end = 90, s.correlationId = 5, s.contextId = 1;
  convert(s);
  TraceReader r = finishAndRead();
  Result<std::vector<SyncRow>> syncs = r.readAll<SyncRow>();
  ASSERT_TRUE(syncs);
  ASSERT_EQ(syncs->size(), 1u);
  EXPECT_EQ((*syncs)[0].kind, SyncKind::kContextSynchronize);
  EXPECT_FALSE((*syncs)[0].stream_id.has_value());
  EXPECT_FALSE((*syncs)[0].event_id.has_value());
}

TEST_F(ConverterTest, AllocationsFreesAndHighAddresses) {
  CUpti_ActivityMemory4 m{};
  m.kind = CUPTI_ACTIVITY_KIND_MEMORY2;
  m.memoryOperationType = CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_ALLOCATION;
  m.memoryKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
  m.address = 0xffff800000000000ULL;  // above 2^63: must come back bit for bit
  m.bytes = 20'971'520, m.timestamp = 100, m.correlationId = 9, m.contextId = 1;
  convert(m);
  m.memoryOperationType = CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_RELEASE;
  m.timestamp = 200;
  m.name = "d_table";
  convert(m);
  TraceReader r = finishAndRead();
  Result<std::vector<MemoryEventRow>> events = r.readAll<MemoryEventRow>();
  ASSERT_TRUE(events);
  ASSERT_EQ(events->size(), 2u);
  EXPECT_EQ(static_cast<uint64_t>((*events)[0].address), 0xffff800000000000ULL);
  EXPECT_EQ((*events)[0].op, MemoryOp::kAllocation);
  EXPECT_EQ((*events)[1].op, MemoryOp::kRelease);
  EXPECT_EQ((*events)[0].bytes, 20'971'520);
  EXPECT_FALSE((*events)[0].pool_address.has_value());
}

// Unified memory's counters: a migration keeps its span, bytes and both processors; a CPU fault has no end and
// no processor in CUPTI's record, and none is stored.
TEST_F(ConverterTest, UnifiedMemoryMigrationsAndFaults) {
  CUpti_ActivityUnifiedMemoryCounter3 u{};
  u.kind = CUPTI_ACTIVITY_KIND_UNIFIED_MEMORY_COUNTER;
  u.counterKind = CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_BYTES_TRANSFER_HTOD;
  u.value = 2 << 20, u.start = 1'000, u.end = 81'000, u.address = 0x7f0000200000ULL, u.srcId = 0, u.dstId = 1;
  convert(u);
  u.counterKind = CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_CPU_PAGE_FAULT_COUNT;
  u.value = 0x401234, u.start = 90'000, u.end = 12;  // CUPTI leaves the end undefined
  convert(u);
  TraceReader r = finishAndRead();
  Result<std::vector<UnifiedMemoryRow>> rows = r.readAll<UnifiedMemoryRow>();
  ASSERT_TRUE(rows);
  ASSERT_EQ(rows->size(), 2u);
  EXPECT_EQ((*rows)[0].kind, MigrationKind::kToDevice);
  EXPECT_EQ((*rows)[0].end_ns - (*rows)[0].start_ns, 80'000);
  EXPECT_EQ((*rows)[0].value, 2 << 20);
  EXPECT_EQ((*rows)[0].source_id, 0);
  EXPECT_EQ((*rows)[0].destination_id, 1);
  EXPECT_EQ((*rows)[1].kind, MigrationKind::kHostFault);
  EXPECT_EQ((*rows)[1].end_ns, (*rows)[1].start_ns);
  EXPECT_FALSE((*rows)[1].source_id.has_value());
  EXPECT_FALSE((*rows)[1].destination_id.has_value());
}

TEST_F(ConverterTest, DevicePropertiesAndUnknownKinds) {
  CUpti_ActivityDevice5 d{};
  d.kind = CUPTI_ACTIVITY_KIND_DEVICE;
  d.id = 0;
  d.name = "NVIDIA H100 80GB HBM3";
  d.computeCapabilityMajor = 9;
  d.numMultiprocessors = 132;
  d.globalMemorySize = 85'031'714'816ULL;
  d.globalMemoryBandwidth = 3'352'320'000;  // KB/s
  d.maxWarpsPerMultiprocessor = 64;
  d.numThreadsPerWarp = 32;
  for (int i = 0; i < 16; ++i) d.uuid.bytes[i] = static_cast<char>(i * 17);
  convert(d);
  CUpti_Activity other{};
  other.kind = CUPTI_ACTIVITY_KIND_PCIE;
  ASSERT_TRUE(converter_->convert(other));
  EXPECT_EQ(converter_->recordsSkipped(), 1);
  TraceReader r = finishAndRead();
  Result<std::vector<DeviceRow>> devices = r.readAll<DeviceRow>();
  ASSERT_TRUE(devices);
  ASSERT_EQ(devices->size(), 1u);
  EXPECT_EQ((*devices)[0].max_threads_per_sm, 2048);
  EXPECT_EQ((*devices)[0].memory_bandwidth_bytes_per_s, 3'352'320'000'000);
  EXPECT_EQ((*devices)[0].uuid, "GPU-00112233-4455-6677-8899-aabbccddeeff");
}

// CUPTI describes each NVLink connection once, from one GPU's side; as seen between two H100s on 2026-11-27.
TEST_F(ConverterTest, NvlinkConnectionsKeepBothEnds) {
  CUpti_ActivityNvLink4 l{};
  l.kind = CUPTI_ACTIVITY_KIND_NVLINK;
  l.nvlinkVersion = 4;
  l.typeDev0 = CUPTI_DEV_TYPE_GPU;
  l.typeDev1 = CUPTI_DEV_TYPE_GPU;
  for (int i = 0; i < 16; ++i) {
    l.idDev0.uuidDev.bytes[i] = static_cast<char>(i * 17);
    l.idDev1.uuidDev.bytes[i] = static_cast<char>(255 - i * 17);
  }
  l.physicalNvLinkCount = 18;
  l.bandwidth = 849'960'000;  // KB/s
  l.nvswitchConnected = 1;
  convert(l);
  CUpti_ActivityNvLink4 to_cpu = l;
  to_cpu.typeDev0 = CUPTI_DEV_TYPE_NPU;  // described from the other side: left out
  convert(to_cpu);
  TraceReader r = finishAndRead();
  Result<std::vector<NvlinkRow>> links = r.readAll<NvlinkRow>();
  ASSERT_TRUE(links);
  ASSERT_EQ(links->size(), 1u);
  EXPECT_EQ((*links)[0], (NvlinkRow{1, "GPU-00112233-4455-6677-8899-aabbccddeeff",
                                    "GPU-ffeeddcc-bbaa-9988-7766-554433221100", "gpu", 4, 18, 849'960'000'000, 1}));
}

}  // namespace
}  // namespace gpuscope::collector
