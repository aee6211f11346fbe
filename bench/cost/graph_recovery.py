"""Does the launch-bound idle the advisor reports match what CUDA graphs recover? (issue 22, point 3)

Two launch-bound training loops of the corpus, written as there (pt_launch_bound_module: a residual MLP of small
layers with bf16 autocast and fused AdamW; pt_launch_bound_function: a plain function over raw tensors with SGD by
hand), each run eager, as written, and with its whole training step captured once in a CUDA graph and replayed
(PyTorch's "whole network capture": static inputs, a capturable optimizer, autocast without its cast cache). The
difference of the two clocks is what graphs recover; the eager loop recorded with `gpuscope record --torch` and
advised gives the launch-bound idle per step the advisor reports and the gain it predicts for graphs.

Usage (on the GPU machine, repository root, after `source scripts/gpu-env`):
  python3 bench/cost/graph_recovery.py measure --carry DIR --out DIR [--rounds N] [--cpus LIST]
  python3 bench/cost/graph_recovery.py run {module,function} [--graphed]     one program: prints "N ms/step"
Writes OUT/graph_recovery.json: each model's eager and graphed clocks (alternated, --rounds each) and the advisor's
figures from its recording (OUT/MODEL.advice.json, the report as `advise --json` writes it).
"""

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
WARMUP, TIMED = 10, 200


def module_loop():
    import torch
    import torch.nn as nn
    import torch.nn.functional as F

    class ResidualBlock(nn.Module):
        def __init__(self, dim):
            super().__init__()
            self.fc = nn.Linear(dim, dim)
            self.norm = nn.LayerNorm(dim)
            self.act = nn.GELU()

        def forward(self, x):
            return x + self.act(self.norm(self.fc(x)))

    class ResMLP(nn.Module):
        def __init__(self, in_features=64, dim=256, depth=12, num_classes=10):
            super().__init__()
            self.stem = nn.Linear(in_features, dim)
            self.blocks = nn.Sequential(*[ResidualBlock(dim) for _ in range(depth)])
            self.norm = nn.LayerNorm(dim)
            self.head = nn.Linear(dim, num_classes)

        def forward(self, x):
            return self.head(self.norm(self.blocks(self.stem(x))))

    def make(graphed):
        model = ResMLP().cuda()
        # A graph replays the optimizer too: its step count must live on the GPU (capturable).
        optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=0.05, fused=True, capturable=graphed)

        def step(x, y):
            # The cast cache would keep casts made in the capture's pool; graphs need it off.
            with torch.autocast(device_type="cuda", dtype=torch.bfloat16, cache_enabled=not graphed):
                loss = F.cross_entropy(model(x), y)
            loss.backward()
            optimizer.step()
            optimizer.zero_grad(set_to_none=True)
            return loss.detach()

        batches = [(torch.randn(64, 64, device="cuda"), torch.randint(0, 10, (64,), device="cuda")) for _ in range(8)]
        return step, batches

    return make


def function_loop():
    import torch

    def make(graphed):
        d_in, d_hidden, d_out, batch = 128, 256, 10, 64
        w1 = (torch.randn(d_in, d_hidden, device="cuda") / d_in**0.5).requires_grad_()
        b1 = torch.zeros(d_hidden, device="cuda", requires_grad=True)
        w2 = (torch.randn(d_hidden, d_out, device="cuda") / d_hidden**0.5).requires_grad_()
        b2 = torch.zeros(d_out, device="cuda", requires_grad=True)
        params = [w1, b1, w2, b2]
        velocity = [torch.zeros_like(p) for p in params]

        def step(x, y, lr=0.05, momentum=0.9):
            h = torch.tanh(x @ w1 + b1)
            logits = h @ w2 + b2
            loss = torch.nn.functional.cross_entropy(logits, y) + 1e-4 * sum((p * p).sum() for p in params)
            loss.backward()
            with torch.no_grad():
                for p, v in zip(params, velocity):
                    v.mul_(momentum).add_(p.grad)
                    p.sub_(lr * v)
                    p.grad = None
            return loss.detach()

        batches = [(torch.randn(batch, d_in, device="cuda"), torch.randint(0, d_out, (batch,), device="cuda"))]
        return step, batches

    return make


MODELS = {"module": module_loop, "function": function_loop}


def run(model, graphed):
    import torch

    torch.manual_seed(0)
    step, batches = MODELS[model]()(graphed)
    if graphed:
        static_x, static_y = (t.clone() for t in batches[0])
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):  # warm-up on a side stream, as capture requires
            for _ in range(3):
                step(static_x, static_y)
        torch.cuda.current_stream().wait_stream(side)
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            static_loss = step(static_x, static_y)

        def replay(x, y):
            static_x.copy_(x)
            static_y.copy_(y)
            graph.replay()
            return static_loss

        one_step = replay
    else:
        one_step = step
    for i in range(WARMUP):
        one_step(*batches[i % len(batches)])
    torch.cuda.synchronize()
    start = time.perf_counter()
    for i in range(TIMED):
        loss = one_step(*batches[i % len(batches)])
    torch.cuda.synchronize()
    elapsed = time.perf_counter() - start
    print(f"final loss {loss.item():.4f}")
    print(f"{elapsed * 1000 / TIMED:.3f} ms/step")


def timed(command, cpus, env=None):
    command = ["taskset", "-c", cpus] + command if cpus else command
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, env=dict(os.environ, **(env or {})),
                          timeout=300)
    lines = [line for line in done.stdout.splitlines() if line.endswith(" ms/step")]
    if done.returncode != 0 or not lines:
        sys.stderr.write(f"{' '.join(command)}: rc {done.returncode}\n{done.stderr[-3000:]}\n")
        return None
    return float(lines[-1].split()[0])


def paused_figures(trace):
    """The bridge's figures of its steps timed recorded and paused (its resume mark), or None."""
    import sqlite3

    try:
        with sqlite3.connect(f"file:{trace}?mode=ro", uri=True) as db:
            rows = db.execute("SELECT name_text FROM nvtx_view WHERE name_text LIKE 'gpuscope: recording resumed%'")
            return [row[0] for row in rows.fetchall()] or None
    except sqlite3.Error:
        return None


def advised(carry, model, out, cpus):
    gpuscope = str(carry / "bin" / "gpuscope")
    trace = out / f"{model}.gpuscope"
    program = [sys.executable, str(Path(__file__).resolve()), "run", model]
    clock = timed([gpuscope, "record", "-q", "-f", "--torch", "-o", str(trace), "--"] + program, cpus)
    report = out / f"{model}.advice.json"
    with open(report, "w") as f:
        subprocess.run([gpuscope, "advise", "--format", "json", str(trace)], stdout=f, check=False)
    subprocess.run([gpuscope, "advise", "-f", "-o", str(out / f"{model}.advice.txt"), str(trace)], check=False)
    with open(out / f"{model}.timeline.txt", "w") as f:
        subprocess.run([gpuscope, "stats", "--report", "timeline", str(trace)], stdout=f, check=False)
    advice = json.loads(report.read_text() or "{}")
    launch = [f for f in advice.get("findings", []) if f.get("id") == "launch_bound"]
    return {
        "paused_steps": paused_figures(trace),
        "recorded_ms_step": clock,
        "advisor_step_ns": advice.get("measured", {}).get("step_time_ns"),
        "plan_predicted_step_ns": advice.get("plan_predicted", {}).get("step_time_ns"),
        "launch_bound_gain_ns": launch[0]["estimated_gain"]["time_ns"] if launch else None,
        "launch_bound_summary": launch[0]["summary"] if launch else None,
    }


def measure(args):
    args.out.mkdir(parents=True, exist_ok=True)
    results = {}
    for model in MODELS:
        program = [sys.executable, str(Path(__file__).resolve()), "run", model]
        runs = {"eager": [], "graphed": []}
        for _ in range(args.rounds):
            runs["eager"].append(timed(program, args.cpus))
            runs["graphed"].append(timed(program + ["--graphed"], args.cpus))
        runs["advisor"] = advised(args.carry, model, args.out, args.cpus)
        results[model] = runs
        print(model, json.dumps(runs), flush=True)
    (args.out / "graph_recovery.json").write_text(json.dumps(results, indent=1))


def main():
    parser = argparse.ArgumentParser()
    sub = parser.add_subparsers(dest="command", required=True)
    one = sub.add_parser("run")
    one.add_argument("model", choices=list(MODELS))
    one.add_argument("--graphed", action="store_true")
    many = sub.add_parser("measure")
    many.add_argument("--carry", required=True, type=Path)
    many.add_argument("--out", required=True, type=Path)
    many.add_argument("--rounds", type=int, default=3)
    many.add_argument("--cpus")
    args = parser.parse_args()
    if args.command == "run":
        run(args.model, args.graphed)
    else:
        measure(args)


if __name__ == "__main__":
    main()
