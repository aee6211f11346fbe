// Idle-time causes, launch latency, short kernels and copy/compute overlap, on traces built so that each
// gap has one known cause, and on the fixtures whose programs are known to be launch- or copy-bound.
#include "analyzer/timeline_analysis.h"

#include "analyzer/gpu_activity.h"

#include <gtest/gtest.h>

#include "tests/analyzer/load_for_test.h"
#include "tests/support/sample_trace.h"
#include "tests/support/trace_builder.h"

namespace gpuscope::analysis {
namespace {

using schema::CopyKind;
using schema::MemoryKind;
using testing::TempDir;
using testing::TraceBuilder;

DeviceTimeline timelineOf(const std::string& path) {
  std::vector<DeviceTimeline> timelines = analyzeTimeline(loadForTest(path));
  EXPECT_EQ(timelines.size(), 1u);
  return timelines.empty() ? DeviceTimeline{} : timelines[0];
}

TEST(TimelineAnalysis, EachGapGetsItsCause) {
  TempDir dir;
  TraceBuilder b(dir.path("t.gpuscope"));
  b.kernel("a", 10'000, 20'000, 7, 9'000);
  // Launched at 25,000, after the GPU ran dry at 20,000, no sync in between: 5,000 + 1,000 ns launch-bound.
  b.kernel("b", 26'000, 30'000, 7, 25'000);
  // The host synchronised (returned at 31,000), then launched at 40,000: 11,000 ns after a sync.
  b.api("cudaDeviceSynchronize", 28'000, 31'000);
  b.kernel("c", 41'000, 50'000, 7, 40'000);
  // Launched at 45,000 while c still ran, but started only at 52,000: 2,000 ns queued.
  b.kernel("d", 52'000, 60'000, 8, 45'000);
  // A pageable copy ends the last gap: 5,000 ns waiting on the host's staging.
  b.copy(CopyKind::kHostToDevice, MemoryKind::kPageable, 1 << 20, 65'000, 70'000);
  ASSERT_TRUE(b.finish());
  const DeviceTimeline tl = timelineOf(dir.path("t.gpuscope"));
  EXPECT_EQ(tl.window_start_ns, 10'000);
  EXPECT_EQ(tl.window_end_ns, 70'000);
  EXPECT_EQ(tl.idle.gaps, 4);
  EXPECT_EQ(tl.idle.launch_bound_ns, 6'000);
  EXPECT_EQ(tl.idle.after_sync_ns, 11'000);
  EXPECT_EQ(tl.idle.queued_ns, 2'000);
  EXPECT_EQ(tl.idle.copy_wait_ns, 5'000);
  EXPECT_EQ(tl.idle.total_ns, tl.window_end_ns - tl.window_start_ns - tl.busy_ns);
}

// XLA's platform allocator frees a buffer with cuCtxSynchronize, cuMemUnmap and cuMemRelease, and maps the next
// with cuMemCreate and cuMemMap: the GPU's idle from that sync to the next launch is the allocator's, while a
// synchronize the program makes before launching again stays the program's.
TEST(TimelineAnalysis, AnAllocatorsSynchronisationAndMappingAreAllocating) {
  TempDir dir;
  TraceBuilder b(dir.path("t.gpuscope"));
  b.kernel("a", 10'000, 20'000, 7, 9'000);
  b.api("cuCtxSynchronize", 15'000, 21'000);
  b.api("cuMemUnmap", 22'000, 30'000);
  b.api("cuMemRelease", 31'000, 35'000);
  b.api("cuMemCreate", 40'000, 45'000);  // 5 µs of the allocator's own work between its calls
  b.api("cuMemMap", 46'000, 50'000);
  b.kernel("b", 56'000, 60'000, 7, 55'000);  // the gap from 20,000: 36,000 ns of allocating
  b.api("cudaDeviceSynchronize", 61'000, 62'000);
  b.kernel("c", 70'000, 80'000, 7, 69'000);  // the gap from 60,000: 10,000 ns after the program's sync
  b.api("cuMemRelease", 200'000, 210'000);
  b.api("cuMemCreate", 400'000, 405'000);  // 190 µs after the last: the program's work between, not the allocator's
  ASSERT_TRUE(b.finish());
  const DeviceTimeline tl = timelineOf(dir.path("t.gpuscope"));
  EXPECT_EQ(tl.idle.allocating_ns, 36'000);
  EXPECT_EQ(tl.idle.after_sync_ns, 10'000);
  EXPECT_EQ(tl.idle.launch_bound_ns, 0);
  const TraceData t = loadForTest(dir.path("t.gpuscope"));
  EXPECT_EQ(hostSyncEnds(t)[0], std::vector<int64_t>{62'000});
  const std::vector<Interval> calls = deviceAllocationCalls(t, 0);
  ASSERT_EQ(calls.size(), 3u);
  EXPECT_EQ(calls[0].start, 15'000);
  EXPECT_EQ(calls[0].end, 50'000);
  EXPECT_EQ(calls[1].start, 200'000);
  EXPECT_EQ(calls[2].start, 400'000);
}

// cudaFree waits for the device inside the call: what the host does after it until it launches again leaves the
// GPU idle because of the free.
TEST(TimelineAnalysis, TheIdleAfterACudaFreeIsAllocating) {
  TempDir dir;
  TraceBuilder b(dir.path("t.gpuscope"));
  b.kernel("a", 10'000, 20'000, 7, 9'000);
  b.api("cudaFree", 12'000, 24'000);
  b.kernel("b", 32'000, 40'000, 7, 31'000);
  ASSERT_TRUE(b.finish());
  const DeviceTimeline tl = timelineOf(dir.path("t.gpuscope"));
  EXPECT_EQ(tl.idle.allocating_ns, 12'000);
  EXPECT_EQ(tl.idle.launch_bound_ns, 0);
}

TEST(TimelineAnalysis, AGapOfAMillisecondOrMoreBeforeALateLaunchIsTheHostAtOtherWork) {
  TempDir dir;
  TraceBuilder b(dir.path("t.gpuscope"));
  b.kernel("a", 10'000, 20'000, 7, 9'000);
  b.kernel("b", 26'000, 30'000, 7, 25'000);  // 6,000 ns: the host launching
  // Launched 2 ms after the GPU ran dry: the host was compiling, loading or computing, not launching.
  b.kernel("c", 2'031'000, 2'040'000, 7, 2'030'000);
  ASSERT_TRUE(b.finish());
  const DeviceTimeline tl = timelineOf(dir.path("t.gpuscope"));
  EXPECT_EQ(tl.idle.launch_bound_ns, 6'000);
  EXPECT_EQ(tl.idle.host_busy_ns, 2'001'000);
  EXPECT_EQ(tl.idle.total_ns, 2'007'000);
}

// JAX reading a loss back (a copy call of microseconds), then the host making the next batch for 3 ms: the copy
// call's time is a wait on a copy, the rest the host at other work.
TEST(TimelineAnalysis, OnlyTheCopyCallsPartOfAGapIsAWaitOnACopy) {
  TempDir dir;
  TraceBuilder b(dir.path("t.gpuscope"));
  b.kernel("a", 10'000, 20'000, 7, 9'000);
  b.api("cuMemcpyDtoHAsync", 21'000, 61'000);
  b.kernel("b", 3'021'000, 3'030'000, 7, 3'020'000);
  ASSERT_TRUE(b.finish());
  const DeviceTimeline tl = timelineOf(dir.path("t.gpuscope"));
  EXPECT_EQ(tl.idle.copy_wait_ns, 40'000);
  EXPECT_EQ(tl.idle.host_busy_ns, 2'961'000);
  EXPECT_EQ(tl.idle.launch_bound_ns, 0);
}

schema::SyncRow syncRecord(schema::SyncKind kind, int64_t start_ns, int64_t end_ns) {
  schema::SyncRow s;
  s.session_id = 1;
  s.kind = kind;
  s.start_ns = start_ns;
  s.end_ns = end_ns;
  return s;
}

// The API calls say when the host waited; CUPTI's synchronisation records (recorded only with --trace sync)
// stand in for them where no API calls were recorded, and a stream waiting on an event is no host wait.
TEST(TimelineAnalysis, HostWaitsFromApiCallsElseFromSyncRecords) {
  TempDir dir;
  TraceBuilder with_api(dir.path("api.gpuscope"));
  with_api.kernel("a", 10'000, 20'000);
  with_api.api("cudaStreamSynchronize", 18'000, 31'000);
  with_api.row(syncRecord(schema::SyncKind::kStreamSynchronize, 18'500, 30'900));  // the same wait
  with_api.api("cudaMemcpy", 40'000, 45'000);
  with_api.api("cudaMemcpyAsync", 50'000, 51'000);
  ASSERT_TRUE(with_api.finish());
  EXPECT_EQ(hostSyncEnds(loadForTest(dir.path("api.gpuscope"))), (std::vector<std::vector<int64_t>>{{31'000, 45'000}}));

  TraceBuilder records_only(dir.path("sync.gpuscope"));
  records_only.row(syncRecord(schema::SyncKind::kContextSynchronize, 25'000, 31'000));
  records_only.row(syncRecord(schema::SyncKind::kStreamWaitEvent, 20'000, 20'500));
  records_only.row(syncRecord(schema::SyncKind::kEventSynchronize, 12'000, 14'000));
  ASSERT_TRUE(records_only.finish());
  EXPECT_EQ(hostSyncEnds(loadForTest(dir.path("sync.gpuscope"))),
            (std::vector<std::vector<int64_t>>{{14'000, 31'000}}));
}

// Time the host is not working for the step: synchronize calls, synchronous copies, and launch calls that
// waited 100 µs or more for room in the GPU's launch queue (a launch itself takes a few microseconds).
TEST(TimelineAnalysis, HostWaitCallsCountBlockedLaunches) {
  TempDir dir;
  TraceBuilder b(dir.path("t.gpuscope"));
  b.api("cudaLaunchKernel", 10'000, 16'000);   // an ordinary launch
  b.api("cudaLaunchKernel", 20'000, 420'000);  // blocked: the queue was full
  b.api("cudaMemcpyAsync", 500'000, 900'000);  // asynchronous: the host's own time
  b.api("cudaDeviceSynchronize", 950'000, 990'000);
  b.api("cuLaunchKernel", 1'000'000, 1'099'999);  // just under the bound
  ASSERT_TRUE(b.finish());
  const TraceData& t = loadForTest(dir.path("t.gpuscope"));
  const std::vector<Interval> waits = hostWaitCalls(t, 0);
  ASSERT_EQ(waits.size(), 2u);
  EXPECT_EQ(waits[0].start, 20'000);
  EXPECT_EQ(waits[0].end, 420'000);
  EXPECT_EQ(waits[1].start, 950'000);
  EXPECT_EQ(waits[1].end, 990'000);
}

// A launch call made while the host runs 1 ms or more ahead of the GPU, and longer than twice the process's median
// launch call, waited for room in the launch queue beyond that median; a long call whose kernel starts at once,
// or a queued one of ordinary length, is the host's own time.
TEST(TimelineAnalysis, LaunchesQueuedBehindTheGpuWaitBeyondAnOrdinaryLaunch) {
  TempDir dir;
  TraceBuilder b(dir.path("t.gpuscope"));
  for (int64_t i = 0; i < 9; ++i) b.kernel("k", 10'000 * i + 2'000, 10'000 * i + 3'000, 7, 10'000 * i, 500);
  b.kernel("queued", 1'760'000, 1'761'000, 7, 200'000, 60'000);  // started 1.5 ms after its call returned
  b.kernel("at_once", 361'000, 362'000, 7, 300'000, 60'000);     // the host's own 60 µs
  b.kernel("ordinary", 2'000'000, 2'001'000, 7, 400'000, 800);   // queued, but no longer than a launch
  ASSERT_TRUE(b.finish());
  const std::vector<Interval> waits = hostWaitCalls(loadForTest(dir.path("t.gpuscope")), 0);
  ASSERT_EQ(waits.size(), 1u);
  EXPECT_EQ(waits[0].start, 200'500);  // the median launch call (500 ns) is the host's
  EXPECT_EQ(waits[0].end, 260'000);
}

// A copy from the device into pageable memory returns once its data is there, whatever its call is named (CuPy
// reads a scalar back with cudaMemcpyAsync): the host waited for the GPU, and the GPU's idle until the host's next
// launch follows that wait, as after a synchronize call.
TEST(TimelineAnalysis, ACopyIntoPageableMemoryIsAWaitForTheGpu) {
  TempDir dir;
  TraceBuilder b(dir.path("t.gpuscope"));
  b.kernel("a", 10'000, 20'000, 7, 9'000);
  b.api("cudaMemcpyAsync", 20'500, 23'000, 900);
  schema::MemcpyRow read_back;
  read_back.session_id = 1;  // the builder's process
  read_back.stream_id = 7;
  read_back.correlation_id = 900;
  read_back.start_ns = 21'000;
  read_back.end_ns = 22'000;
  read_back.copy_kind = CopyKind::kDeviceToHost;
  read_back.src_kind = MemoryKind::kDevice;
  read_back.dst_kind = MemoryKind::kPageable;
  read_back.bytes = 4;
  b.row(read_back);
  b.kernel("b", 36'000, 40'000, 7, 35'000);  // the host's 12,000 ns after the read before it launched again
  ASSERT_TRUE(b.finish());
  const DeviceTimeline tl = timelineOf(dir.path("t.gpuscope"));
  EXPECT_EQ(tl.idle.after_sync_ns, 14'000);
  EXPECT_EQ(tl.idle.launch_bound_ns, 0);
  const TraceData t = loadForTest(dir.path("t.gpuscope"));
  EXPECT_EQ(hostSyncEnds(t)[0], std::vector<int64_t>{23'000});
  const std::vector<Interval> waits = hostWaitCalls(t, 0);
  ASSERT_EQ(waits.size(), 1u);
  EXPECT_EQ(waits[0].start, 20'500);
  EXPECT_EQ(waits[0].end, 23'000);
}

// JAX's float(loss): the program's thread (1) launches a step and blocks on no CUDA call of its own; once the step
// is done, XLA's transfer thread (2) copies the loss into pinned memory, and thread 1 launches the next step when
// the value is there. Both gaps around the copy are the host waiting for a result. A copy queued by the launching
// thread behind the step's kernels (an asynchronous read that nobody waits for) leaves its gaps as they were.
TEST(TimelineAnalysis, AResultFetchedOnceTheGpuIsDoneIsAWaitForIt) {
  TempDir dir;
  TraceBuilder b(dir.path("t.gpuscope"));
  int64_t t = 100'000;
  for (int step = 0; step < 10; ++step) {  // 5 steps fetched by thread 2, then 5 with the copy queued by thread 1
    const bool fetched = step < 5;
    b.kernel("forward", t + 2'000, t + 60'000, 7, t);
    if (fetched) {
      b.copy(CopyKind::kDeviceToHost, MemoryKind::kDevice, 4, t + 260'000, t + 262'000, 9, MemoryKind::kPinned, 2);
    } else {
      b.copy(CopyKind::kDeviceToHost, MemoryKind::kDevice, 4, t + 61'000, t + 62'000, 7, MemoryKind::kPinned, 1);
    }
    t += fetched ? 662'000 : 462'000;  // 400 us after the copy, on thread 1, the next step
  }
  ASSERT_TRUE(b.finish());
  const IdleBreakdown idle = timelineOf(dir.path("t.gpuscope")).idle;
  EXPECT_EQ(idle.results_fetched, 5);
  // Five steps' 200 + 402 us (to the next kernel's start); the queued copies' gaps stay the host's own (launching)
  // time, the four before a next step (and 0.5 us before each copy, issued as its kernel ended).
  EXPECT_EQ(idle.after_sync_ns, 5 * 602'000);
  EXPECT_EQ(idle.launch_bound_ns + idle.recording_ns + idle.host_busy_ns, 4 * 402'000 + 5 * 500);
  // Thread 1 made no call while it waited: the waits come from the device's activity.
  const TraceData trace = loadForTest(dir.path("t.gpuscope"));
  const std::vector<Interval> waits = resultFetchWaits(trace, 0, deviceActivity(trace).at(0).busy);
  ASSERT_EQ(waits.size(), 5u);
  EXPECT_EQ(waits[0].start, 160'000);
  EXPECT_EQ(waits[0].end, 362'000);
}

TEST(TimelineAnalysis, LaunchLatencyAndShortKernels) {
  TempDir dir;
  TraceBuilder b(dir.path("t.gpuscope"));
  // The builder's launch calls last 500 ns; kernels of 300 ns are shorter than that.
  b.kernel("tiny", 10'000, 10'300, 7, 8'000);   // launched onto an idle GPU: 2,000 ns to start
  b.kernel("tiny", 10'300, 10'600, 7, 9'000);   // queued behind it: 1,300 ns
  b.kernel("big", 10'600, 20'000, 7, 9'500);    // queued: 1,100 ns
  b.kernel("tiny", 30'000, 30'300, 7, 26'000);  // idle GPU again: 4,000 ns
  ASSERT_TRUE(b.finish());
  const DeviceTimeline tl = timelineOf(dir.path("t.gpuscope"));
  EXPECT_EQ(tl.launch_call_ns, 500);
  EXPECT_EQ(tl.kernels, 4);
  EXPECT_EQ(tl.short_kernels, 3);
  EXPECT_EQ(tl.short_kernel_ns, 900);
  EXPECT_EQ(tl.launch_latency_on_idle_gpu.count, 2);
  EXPECT_EQ(tl.launch_latency_on_idle_gpu.median, 2'000);
  EXPECT_EQ(tl.launch_latency_on_idle_gpu.max, 4'000);
  EXPECT_EQ(tl.launch_latency_all.count, 4);
  EXPECT_EQ(tl.launch_latency_all.median, 1'300);
}

TEST(TimelineAnalysis, CopyComputeOverlap) {
  TempDir dir;
  TraceBuilder b(dir.path("t.gpuscope"));
  b.kernel("k", 10'000, 20'000, 7);
  b.copy(CopyKind::kHostToDevice, MemoryKind::kPinned, 1 << 20, 15'000, 25'000, 8);  // half under the kernel
  ASSERT_TRUE(b.finish());
  const DeviceTimeline tl = timelineOf(dir.path("t.gpuscope"));
  EXPECT_EQ(tl.copy_ns, 10'000);
  EXPECT_EQ(tl.copy_overlap_ns, 5'000);
  EXPECT_EQ(tl.idle.gaps, 0);
}

TEST(TimelineAnalysis, FixturesShowTheirKnownBottlenecks) {
  // PyTorch's launch loop: the GPU waits for Python to launch, and every kernel is shorter than a launch.
  const DeviceTimeline launch = timelineOf(testing::fixturePath("pytorch_launch_loop.gpuscope"));
  EXPECT_GT(launch.idle.launch_bound_ns, launch.idle.total_ns / 2);
  EXPECT_EQ(launch.short_kernels, launch.kernels);
  // Pageable copies and a sync after each: idle time is the host copying and synchronising.
  const DeviceTimeline pageable = timelineOf(testing::fixturePath("pageable_sync.gpuscope"));
  EXPECT_GT(pageable.idle.copy_wait_ns + pageable.idle.after_sync_ns, pageable.idle.total_ns * 8 / 10);
  // Four streams: copies overlap kernels.
  const DeviceTimeline streams = timelineOf(testing::fixturePath("multi_stream.gpuscope"));
  EXPECT_GT(streams.copy_overlap_ns, 0);
}

// The recording's cost per launch that `record` measured after the program (a trace-wide data-quality row) is
// what the launch-bound gaps lose to recording; a trace without one takes the H100 host's figure.
TEST(TimelineAnalysis, TheMeasuredRecordingCostIsTakenOffLaunchGaps) {
  TraceData trace = loadForTest(testing::fixturePath("pytorch_launch_loop.gpuscope"));
  ASSERT_FALSE(measuredRecordingCost(trace));
  EXPECT_EQ(recordingCostPerLaunch(trace, 0), kRecordingCostPerLaunchNs);
  const IdleBreakdown fallback = analyzeTimeline(trace).at(0).idle;
  trace.data_quality.push_back({std::nullopt, schema::Severity::kInfo, "recording_cost_per_launch", 5'000, "", {}});
  EXPECT_EQ(recordingCostPerLaunch(trace, 0), 5'000);
  const IdleBreakdown measured = analyzeTimeline(trace).at(0).idle;
  EXPECT_GT(measured.recording_ns, fallback.recording_ns * 3 / 2);
  EXPECT_EQ(measured.launch_bound_ns + measured.recording_ns, fallback.launch_bound_ns + fallback.recording_ns);
  // An imported trace carries no collector's cost, measured or not.
  trace.sessions[0].command_line = "imported from kineto.json";
  EXPECT_EQ(recordingCostPerLaunch(trace, 0), 0);
}

TEST(TimelineAnalysis, OnlyInsideTheWindows) {
  TempDir dir;
  TraceBuilder b(dir.path("t.gpuscope"));
  b.kernel("warmup", 0, 5'000, 7, 0);
  b.kernel("a", 10'000, 20'000, 7, 9'000);
  b.kernel("b", 26'000, 30'000, 7, 25'000);  // a launch-bound gap of 6,000 ns inside the window
  b.kernel("c", 60'000, 70'000, 7, 59'000);  // the gap before it crosses the window's end: not counted
  b.copy(CopyKind::kHostToDevice, MemoryKind::kPinned, 1 << 20, 28'000, 34'000, 8);
  ASSERT_TRUE(b.finish());
  const std::vector<DeviceTimeline> all = analyzeTimeline(loadForTest(dir.path("t.gpuscope")), {{10'000, 40'000}});
  ASSERT_EQ(all.size(), 1u);
  const DeviceTimeline& tl = all[0];
  EXPECT_EQ(tl.window_start_ns, 10'000);
  EXPECT_EQ(tl.window_end_ns, 40'000);
  EXPECT_EQ(tl.busy_ns, 10'000 + 4'000 + 4'000);  // a, b, and the copy's part after b
  EXPECT_EQ(tl.kernels, 2);
  EXPECT_EQ(tl.idle.gaps, 1);
  EXPECT_EQ(tl.idle.launch_bound_ns, 6'000);
  EXPECT_EQ(tl.copy_ns, 6'000);
  EXPECT_EQ(tl.copy_overlap_ns, 2'000);
}

TEST(TimelineAnalysis, TraceWithoutGpuWork) {
  TempDir dir;
  ASSERT_TRUE(testing::writeEmptyTrace(dir.path("e.gpuscope")));
  const DeviceTimeline tl = timelineOf(dir.path("e.gpuscope"));
  EXPECT_EQ(tl.busy_ns, 0);
  EXPECT_EQ(tl.idle.gaps, 0);
  EXPECT_EQ(tl.launch_latency_all.count, 0);
}

}  // namespace
}  // namespace gpuscope::analysis
