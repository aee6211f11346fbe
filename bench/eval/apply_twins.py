"""Whether a clean twin's launch-bound finding is real: the twin run plain, then under `gpuscope apply` with
its plan without the CUDA-graph fix (torch.compile's default mode: fusion only) and with the whole plan
(mode reduce-overhead: fusion and CUDA graphs), alternated in one call, timed by the program's own clock.
What the graphs win is the difference between the last two.

Usage (on the GPU machine, repository root, after `source scripts/gpu-env`):
  python3 bench/eval/apply_twins.py --carry DIR --plans DIR --out FILE [--budget SECONDS] CASE...
PLANS holds CASE.no_graphs.plan.json and CASE.full.plan.json (the advisor's plan for the twin's trace).
"""

import argparse
import json
import re
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
STEP_LINE = re.compile(r"([0-9]+(?:\.[0-9]+)?) ms/step")


def clock(command):
    start = time.monotonic()
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, errors="replace", timeout=240)
    steps = STEP_LINE.findall(done.stdout)
    applied = [line for line in done.stderr.splitlines() if line.startswith("gpuscope apply")]
    return {"rc": done.returncode, "ms_step": float(steps[-1]) if steps else None,
            "wall_s": round(time.monotonic() - start, 1), "apply": applied[-12:]}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--carry", required=True, type=Path)
    parser.add_argument("--plans", required=True, type=Path)
    parser.add_argument("--out", required=True, type=Path)
    parser.add_argument("--budget", type=float, default=480)
    parser.add_argument("cases", nargs="+")
    args = parser.parse_args()
    gpuscope, began, results = str(args.carry / "bin" / "gpuscope"), time.monotonic(), {}
    for case in args.cases:
        if time.monotonic() - began > args.budget:
            results[case] = {"skipped": "out of time"}
            continue
        program = [sys.executable, str(ROOT / "bench" / "corpus" / case / "clean.py")]
        runs = results[case] = {"plain": clock(program)}
        for variant in ("no_graphs", "full"):
            plan = args.plans / f"{case}.{variant}.plan.json"
            runs[variant] = clock([gpuscope, "apply", "--plan", str(plan), "--"] + program)
        runs["plain_again"] = clock(program)
        print(case, {k: v["ms_step"] for k, v in runs.items()}, flush=True)
        args.out.write_text(json.dumps(results, indent=1))
    args.out.write_text(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
