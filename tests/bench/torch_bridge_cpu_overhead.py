"""Host cost of the PyTorch bridge's module annotation per module call, on the CPU: a stack of 200 small
Linear layers, forward and backward, timed plain and with annotate.install(), in alternating fresh
processes (the hooks are global and cannot be taken out again). The difference, divided by the module
calls (200 layers and the Sequential), is what the hooks cost each module's forward plus backward, NVTX
calls included (without a tool attached they return at once; under `gpuscope record` the collector's own
cost comes on top).

Steps are timed in CPU time of the process, with one torch thread. On a shared machine other processes
still slow a step (caches, the other hyperthread), so per_module_call_us compares the fastest steps of
all rounds, the least disturbed; the difference of the medians is printed too. --compare DIR times a
second copy of the bridge (another checkout's advisor/runtime/python) in the same rounds, for a before
and after under the same load. Prints one JSON line.

Usage (in the venv of scripts/torch-cpu, its env sourced):
  torch_bridge_cpu_overhead.py [--rounds N] [--steps N] [--input-without-grad] [--compare DIR]
"""

import argparse
import json
import pathlib
import platform
import statistics
import subprocess
import sys
import time

LAYERS, WIDTH, WARMUP = 200, 64, 5
BRIDGE = pathlib.Path(__file__).resolve().parents[2] / "advisor" / "runtime" / "python"


def measure(bridge, steps, input_grad):
    """CPU seconds of each forward+backward, with the bridge in the folder BRIDGE installed (None: plain).
    Without input_grad the input needs no gradient, as in training: the backward ranges of the first layer
    and the Sequential then end at their parameters' accumulation."""
    import torch

    torch.set_num_threads(1)  # the host cost of Python, not the matmuls' threading
    torch.manual_seed(0)
    model = torch.nn.Sequential(*[torch.nn.Linear(WIDTH, WIDTH) for _ in range(LAYERS)])
    x = torch.randn(8, WIDTH, requires_grad=input_grad)
    if bridge:
        sys.path.insert(0, bridge)
        from gpuscope_torch import annotate

        annotate.install()
    times = []
    for step in range(steps + WARMUP):
        start = time.process_time()
        model(x).sum().backward()
        if step >= WARMUP:
            times.append(time.process_time() - start)
    return times


def cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            return next(line.split(":", 1)[1].strip() for line in f if line.startswith("model name"))
    except (OSError, StopIteration):
        return platform.processor()


def run_rounds(args, bridges):
    """{kind: [each round's step times]}, the kinds run one after another in each round."""
    times = {kind: [] for kind in bridges}
    for _ in range(args.rounds):
        for kind, bridge in bridges.items():
            command = [sys.executable, __file__, "--child", bridge or "", "--steps", str(args.steps)]
            if args.input_without_grad:
                command.append("--input-without-grad")
            out = subprocess.run(command, check=True, capture_output=True, text=True).stdout
            times[kind].append(json.loads(out.splitlines()[-1]))
    return times


def per_call_us(times, kind):
    fastest = min(map(min, times[kind])) - min(map(min, times["plain"]))
    median = statistics.median(map(statistics.median, times[kind])) - statistics.median(
        map(statistics.median, times["plain"]))
    return {"per_module_call_us": round(fastest / (LAYERS + 1) * 1e6, 2),
            "per_module_call_us_median": round(median / (LAYERS + 1) * 1e6, 2),
            "fastest_step_ms": round(min(map(min, times[kind])) * 1e3, 3)}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=5, help="processes of each kind, alternating")
    parser.add_argument("--steps", type=int, default=50, help="forward+backward steps timed per process")
    parser.add_argument("--input-without-grad", action="store_true", help="an input that needs no gradient")
    parser.add_argument("--compare", metavar="DIR", help="another copy of the bridge to time alike")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child is not None:
        print(json.dumps(measure(args.child, args.steps, not args.input_without_grad)))
        return

    bridges = {"plain": None, "annotated": str(BRIDGE)}
    if args.compare:
        bridges["compared"] = str(pathlib.Path(args.compare).resolve())
    times = run_rounds(args, bridges)
    import torch

    result = {"cpu": cpu_model(), "torch": torch.__version__, "module_calls": LAYERS + 1,
              "input_needs_grad": not args.input_without_grad,
              "plain_fastest_step_ms": round(min(map(min, times["plain"])) * 1e3, 3)}
    for kind in bridges:
        if kind != "plain":
            result[kind] = per_call_us(times, kind)
    print(json.dumps(result))


if __name__ == "__main__":
    main()
