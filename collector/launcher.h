// `gpuscope record`: runs a program with the collector injected into it (and into every process it starts),
// forwards signals to it, waits for it, and merges the per-process traces into one. Needs no GPU itself.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "formats/status.h"
#include "formats/trace_schema.h"

namespace gpuscope::collector {

struct RecordOptions {
  std::vector<std::string> command;  // the program and its arguments
  std::string output;                // the trace to write
  bool overwrite = false;
  std::string trace = "cuda,api,nvtx,memory,um";
  std::string collector_path;  // libgpuscope_collector.so; empty: found next to the running gpuscope
  // Record only from delay_s after the start, for duration_s, and/or inside NVTX ranges named capture_range
  // (or between cudaProfilerStart and cudaProfilerStop: capture_range "cudaProfilerApi"). The collector
  // switches CUPTI's record kinds on and off at those edges (collector/capture_gate.h); what spills past
  // them is left out when the traces merge.
  double delay_s = 0;
  double duration_s = 0;  // 0: to the end
  std::string capture_range;
  // node or graph: how CUDA graphs' work is recorded (GPUSCOPE_CUDA_GRAPH_TRACE, collector/collector.h).
  std::string cuda_graph_trace = "node";
  // PyTorch programs: put gpuscope's Python bridge on the program's path, which annotates modules and the
  // optimizer step with NVTX and records the caching allocator's events (advisor/runtime/python/).
  bool torch = false;
  // How many steps the bridge annotates with module ranges before it removes its hooks, so that the steps
  // after run at the program's own speed ("all": every step); empty: the bridge's default.
  std::string torch_steps;
  // CuPy programs: the same bridge's CuPy part, which records what CuPy's memory pool hands out.
  bool cupy = false;
  // JAX programs: its JAX part, which reads what XLA's allocator has in use (memory_stats) while it runs.
  bool jax = false;
  std::string python_dir;  // the bridge's folder; empty: found next to the running gpuscope
  // `gpuscope apply --record`: the plan.json the program runs with (GPUSCOPE_PLAN, read by the bundled
  // runtime and by the PyTorch bridge, which this puts on the path as with torch).
  std::string plan;
  // Measure, after the program, what recording adds to a kernel launch on this machine (gpuscope-calibrate run
  // plain and recorded), for the advisor to take off; written into the trace.
  bool calibrate = true;
};

struct RecordOutcome {
  int wait_status = 0;  // the program's status as waitpid() reported it
  int processes = 0;    // processes that wrote a trace
  bool trace_written = false;
  std::string problem;  // why no trace was written, when none was
};

// Runs the program to its end. Fails (without running it) if the output exists and may not be
// replaced or the collector cannot be found; a failed merge keeps the per-process files and says where.
Result<RecordOutcome> recordProgram(const RecordOptions& options);

// `gpuscope apply` without recording: runs the program in gpuscope's place (same process, so its exit status
// and signals are the program's own) with GPUSCOPE_PLAN set and the PyTorch bridge on the path to apply it.
// Returns only when the program cannot be started.
Status execWithPlan(const std::vector<std::string>& command, const std::string& plan, const std::string& python_dir);

// `gpuscope apply` with its results checked: the same, in a child process; returns its wait status. With a log,
// the program's output goes there and its input is /dev/null (the search fix by fix runs it again unseen).
Result<int> runWithPlan(const std::vector<std::string>& command, const std::string& plan, const std::string& python_dir,
                        const std::string& log = "");
// `gpuscope apply`'s run as written, before the run with the plan: the program with the PyTorch bridge noting
// the values it computes (losses, the models' first outputs) into values_dir, its output into log and its
// input from /dev/null (what it reads is the run with the plan's); returns its wait status.
Result<int> runAsWritten(const std::vector<std::string>& command, const std::string& values_dir, const std::string& log,
                         const std::string& python_dir);
// The exit code a shell would report for a wait status: the code itself, or 128 + the signal.
int exitCodeOf(int wait_status);

// Ends this process the way the program ended: the same exit code, or the same signal.
[[noreturn]] void exitLike(int wait_status);

// What recording adds to one kernel launch on this machine: gpuscope-calibrate (beside the running gpuscope, or
// $GPUSCOPE_CALIBRATOR) run three times plain and three times with the collector as `run` records, alternating, in
// work_dir.
// A trace-wide data-quality row: "recording_cost_per_launch" (count: the nanoseconds added) or, where it could
// not be measured, "recording_cost_not_measured" with the reason.
schema::DataQualityRow calibrateLaunches(const RecordOptions& run, const std::string& work_dir);

// libgpuscope_collector.so beside the running executable (<bin>/../lib/), or $GPUSCOPE_COLLECTOR.
std::string defaultCollectorPath();

// The PyTorch bridge's folder (<bin>/../share/gpuscope/python), or $GPUSCOPE_PYTHON_DIR.
std::string defaultPythonDir();

}  // namespace gpuscope::collector
