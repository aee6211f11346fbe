#include "gui/timeline_details.h"

#include <algorithm>

#include "gui/text.h"

#include "analyzer/memory_timeline.h"
#include "analyzer/units.h"
#include "formats/trace_enums.h"

namespace gpuscope::gui {

namespace {

const analysis::GpuWorkColumns* workOf(const analysis::TraceData& t, ItemKind kind) {
  switch (kind) {
    case ItemKind::kKernel: return &t.kernels;
    case ItemKind::kCopy: return &t.copies;
    case ItemKind::kMemset: return &t.memsets;
    default: return nullptr;
  }
}

// The launching call, how long the work waited after it, and the NVTX range open around it.
QString launchText(const analysis::TraceData& t, const analysis::GpuWorkColumns& w, uint32_t row) {
  const int32_t call = w.launch_call[row];
  if (call == analysis::kNone) return "; no launch call recorded";
  const auto c = static_cast<size_t>(call);
  QString text =
      QString("; launched by %1 (%2, thread %3), %4 before it started")
          .arg(qs(t.text(t.api_calls.name[c])), durationText(t.api_calls.end_ns[c] - t.api_calls.start_ns[c]))
          .arg(t.api_calls.thread_id[c])
          .arg(durationText(w.start_ns[row] - t.api_calls.start_ns[c]));
  const int32_t range =
      analysis::innermostRange(t, t.api_calls.session[c], t.api_calls.thread_id[c], t.api_calls.start_ns[c]);
  if (range != analysis::kNone) text += "; inside NVTX range '" + qs(t.text(t.nvtx.name[range])) + "'";
  return text;
}

QString kernelText(const analysis::TraceData& t, uint32_t row) {
  const schema::KernelConfigRow& k = t.configs[t.kernels.config[row]];
  return QString("; grid %1×%2×%3, block %4×%5×%6, %7 registers per thread, %8 shared memory")
      .arg(k.grid_x)
      .arg(k.grid_y)
      .arg(k.grid_z)
      .arg(k.block_x)
      .arg(k.block_y)
      .arg(k.block_z)
      .arg(k.registers_per_thread)
      .arg(bytesText(k.static_shared_bytes + k.dynamic_shared_bytes));
}

// What NCCL said the kernel carried, and the bus bandwidth it reached; "" for other kernels.
QString collectiveText(const std::vector<analysis::CollectiveOp>& ops, uint32_t kernel) {
  const auto it = std::lower_bound(ops.begin(), ops.end(), kernel,
                                   [](const analysis::CollectiveOp& op, uint32_t k) { return op.kernel < k; });
  if (it == ops.end() || it->kernel != kernel) return {};
  QString text = QString("; NCCL %1 of %2 on %3 ranks").arg(qs(it->operation), bytesText(it->bytes)).arg(it->ranks);
  if (!it->algorithm.empty()) {
    text += QString(", %1/%2").arg(qs(it->algorithm), qs(it->protocol));
  }
  text += QString(" on %1 channels").arg(it->channels);
  if (const double bus = it->busBytesPerSecond(); bus > 0) {
    text += QString(", bus bandwidth %1 GB/s over %2 (its shortest kernel on the %3 ranks in the trace)")
                .arg(bus / 1e9, 0, 'f', 1)
                .arg(durationText(it->transfer_ns))
                .arg(it->ranks_seen);
  }
  return text;
}

}  // namespace

int32_t launchCallOf(const analysis::TraceData& t, ItemKind kind, uint32_t row) {
  const analysis::GpuWorkColumns* w = workOf(t, kind);
  return w ? w->launch_call[row] : analysis::kNone;
}

QString describeItem(const analysis::TraceData& t, ItemKind kind, uint32_t row,
                     const std::vector<analysis::CollectiveOp>& collectives) {
  static const char* const kKinds[] = {"CUDA API call", "NVTX range", "kernel", "copy", "memset"};
  int64_t start = 0, end = 0;
  QString name, extra;
  if (const analysis::GpuWorkColumns* w = workOf(t, kind)) {
    start = w->start_ns[row], end = w->end_ns[row];
    const analysis::Stream& s = t.streams[static_cast<size_t>(w->stream[row])];
    extra = QString("; stream %1, correlation id %2").arg(s.stream_id).arg(w->correlation_id[row]);
    if (kind == ItemKind::kKernel) {
      name = qs(t.kernelName(row));
      extra = kernelText(t, row) + collectiveText(collectives, row) + extra;
    }
    if (kind == ItemKind::kCopy) {
      const double seconds = static_cast<double>(std::max<int64_t>(end - start, 1)) * 1e-9;
      const std::string_view direction = schema::enumName(t.copies.kind[row]);
      name = "copy " + QString::fromUtf8(direction.data(), static_cast<qsizetype>(direction.size()));
      extra = QString("; %1 at %2 GB/s")
                  .arg(bytesText(t.copies.bytes[row]))
                  .arg(static_cast<double>(t.copies.bytes[row]) / seconds / 1e9, 0, 'f', 1) +
              extra;
    }
    if (kind == ItemKind::kMemset) name = "memset " + bytesText(t.memsets.bytes[row]);
    extra += launchText(t, *w, row);
  } else if (kind == ItemKind::kApiCall) {
    start = t.api_calls.start_ns[row], end = t.api_calls.end_ns[row];
    name = qs(t.text(t.api_calls.name[row]));
    extra = QString("; thread %1, returned %2").arg(t.api_calls.thread_id[row]).arg(t.api_calls.return_code[row]);
  } else {
    start = t.nvtx.start_ns[row], end = t.nvtx.end_ns[row];
    name = qs(t.text(t.nvtx.name[row]));
    if (t.nvtx.domain[row] != 0) extra = "; domain " + qs(t.text(t.nvtx.domain[row]));
  }
  return QString("%1: %2 — starts at %3, lasts %4%5")
      .arg(kKinds[static_cast<int>(kind)], name, durationText(start - t.startNs()), durationText(end - start), extra);
}

}  // namespace gpuscope::gui
