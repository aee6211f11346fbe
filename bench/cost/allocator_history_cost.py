"""What PyTorch's allocator history costs per event, measured in one process (issue 22: what `record --torch` adds
to a step after its module hooks are gone).

`record --torch` keeps the caching allocator's history on for the whole run
(torch.cuda.memory._record_memory_history(enabled="all", context=None), as the bridge's memory.py starts it):
every tensor allocation and free becomes an entry. Timed end to end, a program's steps differ by more than that
cost from one process to the next; here one process alternates the history off and on around the same loops, so
the difference is the history's alone. Each iteration of the two loops allocates a tensor and frees it: three
entries with every action recorded (alloc, free_requested, free_completed), two with free_requested skipped as
the bridge skips it (memory.py):
  - alloc_free: torch.empty of 4 KiB and its free (no kernel);
  - add: a + b into a new tensor and its free (a kernel launch), what an eager op does.

Usage (on the GPU machine): python3 bench/cost/allocator_history_cost.py [--rounds N] [--iterations N]
Prints one JSON object: per loop, ns per iteration with the history off, on with every action, and on as the bridge
starts it (medians of the rounds), and what each costs an iteration: the median over the rounds of on − off, each
round's timings taken back to back (the host's speed drifts between rounds by more than the cost itself).
"""

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "advisor" / "runtime" / "python"))
from gpuscope_torch import memory  # noqa: E402  (the bridge's own start of the history)


def timed(loop, iterations):
    torch.cuda.synchronize()
    start = time.perf_counter_ns()
    loop(iterations)
    torch.cuda.synchronize()
    return (time.perf_counter_ns() - start) / iterations


def alloc_free(iterations):
    for _ in range(iterations):
        x = torch.empty(1024, device="cuda")
        del x


A = B = None


def add(iterations):
    for _ in range(iterations):
        y = A + B
        del y


def history(mode):
    if mode == "off":
        torch.cuda.memory._record_memory_history(enabled=None)
    elif mode == "bridge":
        memory._start()
    else:  # every action, as the bridge started it before it skipped any
        torch.cuda.memory._record_memory_history(enabled="all", context=None, stacks="python",
                                                 max_entries=memory._MAX_EVENTS)


def main():
    global A, B
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--iterations", type=int, default=20_000)
    args = parser.parse_args()
    A = torch.randn(1024, device="cuda")
    B = torch.randn(1024, device="cuda")
    results = {}
    for name, loop in (("alloc_free", alloc_free), ("add", add)):
        loop(1000)  # warm: the allocator's first segment, the kernel's module
        times = {"off": [], "all": [], "bridge": []}
        for _ in range(args.rounds):
            for mode, runs in times.items():
                history(mode)
                runs.append(timed(loop, args.iterations))
        history("off")
        results[name] = {f"{mode}_ns": round(statistics.median(runs), 1) for mode, runs in times.items()}
        for mode in ("all", "bridge"):
            results[name][f"{mode}_cost_ns"] = round(statistics.median(
                on - off for off, on in zip(times["off"], times[mode])), 1)
        results[name]["rounds"] = {mode: [round(v) for v in runs] for mode, runs in times.items()}
    history("bridge")  # what the bridge's history holds for one iteration of each loop
    alloc_free(1)
    add(1)
    actions = [entry["action"] for trace in torch.cuda.memory._snapshot()["device_traces"] for entry in trace]
    results["bridge_actions"] = {action: actions.count(action) for action in sorted(set(actions))}
    history("off")
    results["torch"] = torch.__version__
    results["gpu"] = torch.cuda.get_device_name()
    print(json.dumps(results))


if __name__ == "__main__":
    main()
