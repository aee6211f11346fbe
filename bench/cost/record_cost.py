"""What recording costs the program: each program of a list run plain, under bare CUPTI (the floor under any
collector), under `gpuscope record`, `record --torch` (module hooks for the first steps only, the default),
`record --torch --torch-steps all` (hooks on every step) and torch.profiler, alternated in one call, each
timed by the program's own clock (its last "N ms/step" line). The `record --torch` run's trace is kept, so
that the advisor's step, taken from the hook-free steps, can be set against the plain clock too.

Usage (on the GPU machine, repository root, after `source scripts/gpu-env`):
  python3 bench/cost/record_cost.py --carry DIR --out DIR [--rounds N] [--budget SECONDS] [--cpus LIST]
                                    [--variants A,B,...] CASE...
CASE: a folder of bench/corpus/ (its program.py runs; under torchrun where its truth.json names multi_rank). Writes
OUT/record_cost.json and OUT/traces/CASE.gpuscope. Some variants change one part of the recording, to tell where a
job's cost goes: bare_cupti_graph (bare CUPTI with CUDA graph launches recorded as a whole; _only: without kernels),
record_graph (`record --cuda-graph-trace graph`, its trace kept as OUT/traces/CASE-graph.gpuscope),
record_no_nccl_plugin (NCCL without gpuscope as its profiler plugin) and record_no_api (no CUDA call records:
--trace cuda,nvtx,memory). torch_profiler and allocator_history wrap a single process only.
--cpus pins every run to those cores (taskset -c LIST): unpinned, two plain runs of one program differed by up to
50 % on a shared host. Only the `record --torch` run measures the recording's cost per launch after the program
(the trace the advisor reads); the other recordings skip it (--no-calibrate).
"""

import argparse
import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "bench" / "eval"))
import run_corpus  # noqa: E402  (the corpus's own way to run a case)
STEP_LINE = re.compile(r"([0-9]+(?:\.[0-9]+)?) ms/step")
# Activity kinds as `record`'s default (cuda, api, nvtx, memory) enables them, for bare CUPTI.
BARE_KINDS = "kernel,memcpy,memset,memory,runtime"
PROFILER = (
    "import runpy, sys, torch\n"
    "from torch.profiler import profile, ProfilerActivity\n"
    "sys.argv = sys.argv[1:]\n"
    "with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]):\n"
    "    runpy.run_path(sys.argv[0], run_name='__main__')\n"
)
# PyTorch's allocator history alone, started by the bridge's own code (memory.py), without the rest of gpuscope.
HISTORY = (
    "import runpy, sys, torch\n"
    f"sys.path.insert(0, {str(ROOT / 'advisor' / 'runtime' / 'python')!r})\n"
    "from gpuscope_torch import memory\n"
    "sys.argv = sys.argv[1:]\n"
    "torch.cuda._lazy_call(memory._start)\n"
    "runpy.run_path(sys.argv[0], run_name='__main__')\n"
)


def variants(carry, script, trace_path):
    gpuscope = str(carry / "bin" / "gpuscope")
    record = [gpuscope, "record", "-q", "-f"]
    # The program as the corpus runs it (torchrun for a job of several ranks).
    truth = json.loads((script.parent / "truth.json").read_text())
    python = run_corpus.program_command(script.parent, truth, "program", carry)
    return {
        "plain": (python, {}),
        "bare_cupti": (python, {"CUDA_INJECTION64_PATH": str(carry / "lib" / "libbare_cupti_injection.so"),
                                "BARE_CUPTI_KINDS": BARE_KINDS}),
        "bare_cupti_graph": (python, {"CUDA_INJECTION64_PATH": str(carry / "lib" / "libbare_cupti_injection.so"),
                                      "BARE_CUPTI_KINDS": BARE_KINDS + ",graph"}),
        "bare_cupti_graph_only": (python, {"CUDA_INJECTION64_PATH": str(carry / "lib" / "libbare_cupti_injection.so"),
                                           "BARE_CUPTI_KINDS": BARE_KINDS.replace("kernel", "graph")}),
        "record": (record + ["--no-calibrate", "-o", "/tmp/cost-record.gpuscope", "--"] + python, {}),
        "record_graph": (record + ["--no-calibrate", "--cuda-graph-trace", "graph", "-o",
                                   str(trace_path.with_name(trace_path.stem + "-graph.gpuscope")), "--"] + python, {}),
        "record_no_nccl_plugin": (record + ["--no-calibrate", "-o", "/tmp/cost-nonccl.gpuscope", "--"] + python,
                                  {"NCCL_PROFILER_PLUGIN": "none"}),
        "record_no_api": (record + ["--no-calibrate", "--trace", "cuda,nvtx,memory", "-o", "/tmp/cost-noapi.gpuscope",
                                    "--"] + python, {}),
        "record_torch": (record + ["--torch", "-o", str(trace_path), "--"] + python, {}),
        "record_torch_all": (record + ["--no-calibrate", "--torch", "--torch-steps", "all", "-o",
                                       "/tmp/cost-all.gpuscope", "--"] + python, {}),
        "torch_profiler": ([sys.executable, "-c", PROFILER, str(script)], {}),
        "allocator_history": ([sys.executable, "-c", HISTORY, str(script)], {}),
    }


def run(command, extra_env, log, cpus=None):
    env = dict(os.environ, **extra_env)
    command = ["taskset", "-c", cpus] + command if cpus else command
    start = time.monotonic()
    try:
        done = subprocess.run(command, env=env, cwd=ROOT, capture_output=True, text=True, errors="replace",
                              timeout=150)
        rc, out, err = done.returncode, done.stdout, done.stderr
    except subprocess.TimeoutExpired:
        rc, out, err = "timeout", "", ""
    log.write(f"$ {' '.join(command)}\n== rc {rc}, {time.monotonic() - start:.1f} s\n{out[-2000:]}\n{err[-3000:]}\n")
    log.flush()  # kept if the call is cut short
    steps = STEP_LINE.findall(out)
    return {"rc": rc, "ms_step": float(steps[-1]) if steps else None, "wall_s": round(time.monotonic() - start, 1)}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--carry", required=True, type=Path)
    parser.add_argument("--out", required=True, type=Path)
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--budget", type=float, default=520, help="start no program after this many seconds")
    parser.add_argument("--cpus", help="pin every run to these cores (taskset -c)")
    parser.add_argument("--variants", default="plain,bare_cupti,record,record_torch,record_torch_all,torch_profiler",
                        help="which runs, comma-separated (also: allocator_history, PyTorch's history alone)")
    parser.add_argument("cases", nargs="+")
    args = parser.parse_args()
    (args.out / "traces").mkdir(parents=True, exist_ok=True)
    results, began = {}, time.monotonic()
    with open(args.out / "record_cost.log", "w") as log:
        for case in args.cases:
            if time.monotonic() - began > args.budget:
                results[case] = {"skipped": "out of time"}
                continue
            script = ROOT / "bench" / "corpus" / case / "program.py"
            chosen = args.variants.split(",")
            runs = results[case] = {name: [] for name in chosen}
            for _ in range(args.rounds):
                trace = args.out / "traces" / f"{case}.gpuscope"
                commands = variants(args.carry, script, trace)
                for name in chosen:
                    runs[name].append(run(*commands[name], log, args.cpus))
                    (args.out / "record_cost.json").write_text(json.dumps(results, indent=1))  # kept if cut short
            if "plain" in chosen:  # drift check
                runs["plain"].append(run(*variants(args.carry, script, trace)["plain"], log, args.cpus))
            print(case, {k: [r["ms_step"] for r in v] for k, v in runs.items()}, flush=True)
    (args.out / "record_cost.json").write_text(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
