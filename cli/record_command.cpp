// gpuscope record: profile a program, then say what was recorded. Exits with the program's own status.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string_view>

#include "cli/command.h"
#include "cli/record_summary.h"
#include "collector/launcher.h"

namespace gpuscope::cli {

namespace {

constexpr OptionSpec kOptions[] = {
    {"output", 'o', "FILE", "trace file to write (default: gpuscope-PROGRAM.gpuscope)"},
    {"trace", 0, "LIST",
     "what to record, comma-separated: cuda (GPU work), api (CUDA calls), nvtx, memory, um (unified memory's "
     "migrations and page faults, from the program's first managed allocation) (default: those five); sync adds "
     "CUPTI's synchronisation records (which stream or event was waited on), at a cost of about 2 us "
     "per CUDA runtime call"},
    {"cuda-graph-trace", 0, "node|graph",
     "how the work of CUDA graphs is recorded: node (default) records every kernel of every launch; graph "
     "records each launch as one unit, far cheaper for graphs of many small kernels (as XLA's), but the "
     "kernels inside are not seen"},
    {"delay", 0, "SECONDS", "record only from SECONDS after the program starts"},
    {"duration", 0, "SECONDS", "record only for SECONDS (after --delay)"},
    {"capture-range", 0, "NAME",
     "record only inside NVTX ranges named NAME, on any thread; cudaProfilerApi: between cudaProfilerStart and "
     "cudaProfilerStop"},
    {"torch", 0, "",
     "PyTorch programs: NVTX ranges for every module's forward and backward and the optimizer step, and the "
     "caching allocator's events, with no change to the script"},
    {"cupy", 0, "",
     "CuPy programs: what CuPy's memory pool hands out and takes back (its memory hooks), beside what it reserves "
     "from CUDA, with no change to the script"},
    {"jax", 0, "",
     "JAX programs: what XLA's allocator has in use and its peak (each GPU's memory_stats(), read every 10 ms), "
     "beside what it reserves from CUDA, with no change to the script"},
    {"torch-steps", 0, "N",
     "with --torch: annotate the first N steps with module ranges (default 5), then remove the hooks so the "
     "later steps run at the program's own speed and give the timings; 'all' keeps them for every step"},
    {"no-calibrate", 0, "",
     "skip measuring, after the program, what recording adds to a kernel launch on this machine (about 2.4 s; "
     "the advisor then takes off an H100 host's figure)"},
    {"force", 'f', "", "overwrite the output file if it exists"},
    {"quiet", 'q', "", "no summary after the program ends"},
};

// The --trace list, or a usage error naming the item gpuscope does not know.
Result<std::string> traceList(const ParsedArgs& args) {
  const std::string list = args.get("trace").value_or(collector::RecordOptions{}.trace);
  constexpr std::string_view kKnown[] = {"cuda", "api", "nvtx", "memory", "um", "sync"};
  size_t start = 0;
  while (start <= list.size()) {
    const size_t end = std::min(list.find(',', start), list.size());
    const std::string_view item(list.data() + start, end - start);
    if (std::find(std::begin(kKnown), std::end(kKnown), item) == std::end(kKnown)) {
      return Status(ErrorKind::kUsage,
                    "--trace: unknown item '" + std::string(item) + "' (known: cuda, api, nvtx, memory, um, sync)");
    }
    start = end + 1;
  }
  return list;
}

}  // namespace

Result<double> seconds(const ParsedArgs& args, const char* option, double absent) {
  const auto text = args.get(option);
  if (!text) return absent;
  char* end = nullptr;
  const double value = std::strtod(text->c_str(), &end);
  if (text->empty() || *end != '\0' || !(value >= 0) || value > 1e7) {
    return Status(ErrorKind::kUsage, "--" + std::string(option) + " needs a number of seconds, not '" + *text + "'");
  }
  return value;
}

std::string defaultOutput(const std::string& program) {
  return "gpuscope-" + std::filesystem::path(program).filename().string() + ".gpuscope";
}

namespace {

int runRecord(const ParsedArgs& args) {
  collector::RecordOptions options;
  options.command = args.has_separator ? args.after_separator : args.positional;
  if (options.command.empty() || (args.has_separator && !args.positional.empty())) {
    return reportError("record",
                       Status(ErrorKind::kUsage, "give the program to record after -- (see gpuscope record --help)"));
  }
  options.output = args.get("output").value_or(defaultOutput(options.command.front()));
  options.overwrite = args.has("force");
  Result<std::string> trace = traceList(args);
  if (!trace) return reportError("record", trace.status());
  options.trace = *trace;
  Result<double> delay = seconds(args, "delay");
  Result<double> duration = seconds(args, "duration");
  if (!delay) return reportError("record", delay.status());
  if (!duration) return reportError("record", duration.status());
  options.delay_s = *delay;
  options.duration_s = *duration;
  options.capture_range = args.get("capture-range").value_or("");
  options.cuda_graph_trace = args.get("cuda-graph-trace").value_or("node");
  if (options.cuda_graph_trace != "node" && options.cuda_graph_trace != "graph") {
    return reportError("record", Status(ErrorKind::kUsage, "--cuda-graph-trace takes node or graph, not '" +
                                                               options.cuda_graph_trace + "'"));
  }
  options.torch = args.has("torch");
  options.cupy = args.has("cupy");
  options.jax = args.has("jax");
  options.calibrate = !args.has("no-calibrate");
  if (const auto steps = args.get("torch-steps")) {
    if (!options.torch) return reportError("record", Status(ErrorKind::kUsage, "--torch-steps goes with --torch"));
    if (*steps != "all" && (steps->empty() || steps->size() > 9 ||
                            steps->find_first_not_of("0123456789") != std::string::npos || std::stol(*steps) < 1)) {
      return reportError("record",
                         Status(ErrorKind::kUsage,
                                "--torch-steps needs a whole number of steps above 0 or 'all', not '" + *steps + "'"));
    }
    options.torch_steps = *steps;
  }
  return recordAndReport(options, args.has("quiet"));
}

}  // namespace

int recordAndReport(const collector::RecordOptions& options, bool quiet,
                    const std::function<void(int wait_status)>& at_end) {
  Result<collector::RecordOutcome> outcome = collector::recordProgram(options);
  if (!outcome) return reportError("record", outcome.status());
  if (!outcome->trace_written) {
    std::fprintf(stderr, "gpuscope record: no trace written: %s\n", outcome->problem.c_str());
  } else if (!quiet) {
    Result<TraceReader> reader = TraceReader::open(options.output);
    Result<RecordSummary> summary = reader ? summarize(*reader) : Result<RecordSummary>(reader.status());
    if (summary) {
      std::fputs(formatSummary(options.output, *summary).c_str(), stderr);
    } else {
      std::fprintf(stderr, "gpuscope record: wrote %s, but cannot summarise it: %s\n", options.output.c_str(),
                   summary.status().message().c_str());
    }
  }
  if (at_end) at_end(outcome->wait_status);
  collector::exitLike(outcome->wait_status);
}

const Command& recordCommand() {
  static const Command command{
      "record",
      "profile a CUDA program (C++, PyTorch, JAX, CuPy) without changing it",
      "gpuscope record [options] -- PROGRAM [ARGS...]",
      "Runs PROGRAM with the gpuscope collector injected through CUDA_INJECTION64_PATH (and NVTX through\n"
      "NVTX_INJECTION64_PATH) and writes one trace for the run: kernels, copies, memsets, API calls,\n"
      "synchronisation, allocations and NVTX ranges of every process that uses CUDA. Signals sent to gpuscope\n"
      "are passed to the program; gpuscope exits with the program's status. --delay, --duration and\n"
      "--capture-range switch recording on and off (outside, CUPTI records only NVTX, so the program runs at\n"
      "its own speed there). --torch adds, for PyTorch programs, each module's forward and backward and each\n"
      "optimizer step as NVTX ranges (\"GPT2LMHeadModel.transformer.h.0.attn (forward)\") and the caching\n"
      "allocator's tensor-level events with the roles of parameters, gradients and optimizer state. Only the\n"
      "first --torch-steps steps (default 5) get module ranges; the hooks are then removed, and the advisor\n"
      "takes its timings from the steps after, which run at the program's own speed; it times a few of those\n"
      "recorded, as many with the recording paused and as many recorded again (GPUSCOPE_TORCH_COST_STEPS,\n"
      "default 5; 0: none), so that the trace says what recording cost the process itself. --cupy adds, for CuPy\n"
      "programs, the blocks CuPy's memory pool hands out and takes back (on the thread that imports cupy),\n"
      "so that memory in use is told from what the pool reserves. --jax adds, for JAX programs, the bytes\n"
      "XLA's allocator has in use and its peak in use over time, read from each GPU's memory_stats() once the\n"
      "program has started JAX (CUDA sees only the memory XLA reserves up front).\n"
      "After the program, gpuscope-calibrate launches an empty kernel plain and recorded, and the trace keeps\n"
      "what recording added to each launch: the advisor takes it off the program's launch-bound idle time\n"
      "(or what the paused steps measured, where that is more).\n"
      "GPUSCOPE_DISABLE=1 in the environment turns the collector off.",
      kOptions,
      runRecord};
  return command;
}

}  // namespace gpuscope::cli
