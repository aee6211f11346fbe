// Turns CUPTI activity records into trace rows. Pure conversion: it needs CUPTI's headers but not
// libcupti or a GPU, so tests feed it records built as plain structs (the same structs CUPTI fills).
#pragma once

#include <cupti.h>

#include <cstdint>
#include <functional>
#include <string>
#include <unordered_map>
#include <unordered_set>

#include "formats/trace_writer.h"

namespace gpuscope::collector {

// Names a CUDA API function from its CUPTI callback id (cuptiGetCallbackName in the collector).
using ApiNameLookup = std::function<std::string(schema::ApiKind api, uint32_t cbid)>;

class RecordConverter {
 public:
  RecordConverter(TraceWriter& writer, int64_t session_id, ApiNameLookup api_names);

  // Converts one record; kinds gpuscope does not store are counted and skipped.
  Status convert(const CUpti_Activity& record);

  // Ranges still open (START seen, END not): written as ranges ending at end_ns, e.g. at exit.
  Status closeOpenRanges(int64_t end_ns);

  int64_t recordsConverted() const { return converted_; }
  int64_t recordsSkipped() const { return skipped_; }
  // Kernels whose end CUPTI did not know (a forced flush delivered them unfinished).
  int64_t unfinishedRecords() const { return unfinished_; }
  // Thread ids seen in API and NVTX records, for naming them.
  const std::unordered_set<int64_t>& threadsSeen() const { return threads_; }

 private:
  Status convertKernel(const CUpti_ActivityKernel10& k);
  Status convertMemcpy(const CUpti_ActivityMemcpy6& m);
  Status convertPeerCopy(const CUpti_ActivityMemcpyPtoP4& m);
  template <typename Record>
  schema::MemcpyRow copyRow(const Record& m, schema::CopyKind kind);
  Status convertMemset(const CUpti_ActivityMemset4& m);
  Status convertApi(const CUpti_ActivityAPI& a, schema::ApiKind api);
  Status convertSync(const CUpti_ActivitySynchronization2& s);
  Status convertMemory(const CUpti_ActivityMemory4& m);
  Status convertMemoryPool(const CUpti_ActivityMemoryPool3& p);
  Status convertMarker(const CUpti_ActivityMarker2& m);
  Status convertOverhead(const CUpti_ActivityOverhead3& o);
  Status convertDevice(const CUpti_ActivityDevice5& d);
  Status convertNvlink(const CUpti_ActivityNvLink4& l);
  Status convertUnifiedMemory(const CUpti_ActivityUnifiedMemoryCounter3& u);
  Status convertContext(const CUpti_ActivityContext3& c);
  Status convertGraphTrace(const CUpti_ActivityGraphTrace2& g);

  schema::StringId kernelName(const char* name, schema::StringId* mangled);
  schema::StringId apiName(schema::ApiKind api, uint32_t cbid);
  int64_t endOf(uint64_t start, uint64_t end);

  struct OpenRange {
    int64_t start_ns;
    int64_t thread_id;
    schema::StringId name;
    schema::StringId domain;
  };

  TraceWriter& writer_;
  int64_t session_id_;
  ApiNameLookup api_names_;
  std::unordered_map<std::string, std::pair<schema::StringId, schema::StringId>> kernel_names_;  // raw → names
  std::unordered_map<uint64_t, schema::StringId> api_name_ids_;  // (api << 32 | cbid) → name
  std::unordered_map<uint32_t, OpenRange> open_ranges_;          // NVTX range id → its start
  std::unordered_set<int64_t> threads_;
  int64_t converted_ = 0;
  int64_t skipped_ = 0;
  int64_t unfinished_ = 0;
};

// The demangled form of a C++ symbol, or the name itself when it is not a mangled one.
std::string demangle(const char* name);

}  // namespace gpuscope::collector
