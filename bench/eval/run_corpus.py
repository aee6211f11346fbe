"""Runs the evaluation corpus (bench/corpus/) on a GPU machine, case by case, in two phases that can run in
separate calls, and keeps everything the scorecard needs. Nothing is judged here (scorecard.py does that).

  findings  each program and its clean twin recorded (with the program's own clock in that run) and advised:
            result.findings.json, program.gpuscope, clean.gpuscope and their advice and plans
  plain     each program plain (its own clock) only, a short one PLAIN_RUNS times: result.plain.json
  apply     each program plain (its own clock; a short one PLAIN_RUNS times), then, where the plan has fixes,
            under `gpuscope apply` (which runs it as written first and compares the results: the values
            both runs noted are kept in as-written/ and values-applied/) and `gpuscope apply --no-verify
            --record`: result.apply.json, after.gpuscope. The plans come from --plans (NAME.plan.json,
            made where the findings were scored, by the advisor as it is now), else from this run's
            findings phase.

Usage (on the GPU machine, from the repository root, after `source scripts/gpu-env`):
  python3 bench/eval/run_corpus.py --out DIR [--phase findings|plain|apply|both] [--plans DIR] [--only A,B]
                                   [--skip A,B] [--budget SECONDS]
"""

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CORPUS = ROOT / "bench" / "corpus"
STEP_LINE = re.compile(r"([0-9]+(?:\.[0-9]+)?) ms/step")
APPLY_LINE = re.compile(r"^gpuscope apply: (\S+) \((\w+)\): (.*)$")
RESULTS_LINE = re.compile(r"^gpuscope apply: (results .*|exit code .*)$")
AS_WRITTEN_LOG = re.compile(r"its output: (\S+)/as-written\.log")
RUN_TIMEOUT_S = 150
# A short program runs plain this many times: two processes of one small host-bound program can differ by 1.75x
# in their step (bench/corpus/trap_data_dependent: 1.04-1.82 ms/step over seven runs on one H100 host,
# 2026-11-27), so one plain run is no measure of what `apply` costs it. Short: its first plain run took under
# PLAIN_REPEAT_WALL_S.
PLAIN_RUNS = 3
PLAIN_REPEAT_WALL_S = 30


def cases(order=()):
    """The corpus's cases, those named in ORDER first and in that order (a call's budget goes to them first)."""
    names = sorted(truth.parent.name for truth in CORPUS.glob("*/truth.json"))
    names = [n for n in order if n in names] + [n for n in names if n not in order]
    for name in names:
        yield name, json.loads((CORPUS / name / "truth.json").read_text())


def program_command(case_dir, truth, which, carry):
    """The command that runs the program (which = 'program' or 'clean'), or None when it has no such file."""
    if truth["framework"] == "cuda":
        binary = carry / "corpus" / case_dir.name / which
        return [str(binary)] if binary.exists() else None
    script = case_dir / f"{which}.py"
    if not script.exists():
        return None
    ranks = truth.get("multi_rank")
    if ranks and truth.get("launcher") != "self":  # "self": the program starts its other ranks (Lightning, mp.spawn)
        return ["torchrun", "--standalone", f"--nproc_per_node={ranks}", str(script)]
    return [sys.executable, str(script)]


def run(command, log_path, env, runs=1):
    """Runs a command, keeps its output, and returns its exit code, wall time and last ms/step line. runs: how many
    times the command runs the program (`gpuscope apply` runs it as written first), each given RUN_TIMEOUT_S."""
    start = time.monotonic()
    try:
        done = subprocess.run(command, env=env, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              text=True, errors="replace", timeout=runs * RUN_TIMEOUT_S)
        rc, out, err = done.returncode, done.stdout, done.stderr
    except subprocess.TimeoutExpired as expired:
        rc, out, err = "timeout", expired.stdout or "", expired.stderr or ""
        out = out.decode(errors="replace") if isinstance(out, bytes) else out
        err = err.decode(errors="replace") if isinstance(err, bytes) else err
    wall = time.monotonic() - start
    log_path.write_text(f"$ {' '.join(command)}\n== rc {rc}, {wall:.1f} s\n== stdout\n{out}\n== stderr\n{err}")
    steps = STEP_LINE.findall(out)
    return {"rc": rc, "wall_s": round(wall, 2), "ms_step": float(steps[-1]) if steps else None}, err


def run_plain(program, work, env, result):
    """The program plain: result["runs"]["plain"], and for a short program more plain runs in
    result["plain_more"]."""
    first = result["runs"]["plain"] = run(program, work / "plain.log", env)[0]
    if first["rc"] == 0 and first["wall_s"] < PLAIN_REPEAT_WALL_S:
        result["plain_more"] = [run(program, work / f"plain-{i}.log", env)[0] for i in range(2, PLAIN_RUNS + 1)]


def advise(gpuscope, trace, stem, env):
    """advise --format json (and --plan) on a trace; returns the paths written, or an error text."""
    advice, plan = stem.with_suffix(".advice.json"), stem.with_suffix(".plan.json")
    command = [gpuscope, "advise", str(trace), "--format", "json", "-o", str(advice), "-f", "--plan", str(plan)]
    done = subprocess.run(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if done.returncode != 0:
        return {"error": done.stderr.strip()[-2000:]}
    return {"advice": advice.name, "plan": plan.name}


def plan_fixes(plan_path):
    try:
        return json.loads(plan_path.read_text()).get("fixes", [])
    except (OSError, ValueError):
        return []


def record_and_advise(gpuscope, truth, command, stem, env):
    """Records a command into STEM.gpuscope and advises on it; returns the run's figures and the advice's files."""
    trace = stem.with_suffix(".gpuscope")
    record = [gpuscope, "record", "-q", "-f", *truth.get("record", []), "-o", str(trace), "--"]
    figures, _ = run(record + command, stem.parent / f"{stem.name}_record.log", env)
    return figures, advise(gpuscope, trace, stem, env)


def apply_plan_command(gpuscope, trace, goal):
    """advise with --goal GOAL, writing only the plan: TRACE's stem .apply.plan.json (the findings stay the default
    advice's)."""
    plan = trace.with_suffix(".apply.plan.json")
    return [gpuscope, "advise", str(trace), "--goal", goal, "--format", "json", "-o", os.devnull, "-f", "--plan",
            str(plan)]


def findings_phase(name, truth, work, carry, env):
    gpuscope = str(carry / "bin" / "gpuscope")
    result = {"case": name, "truth": truth, "runs": {}}
    program = program_command(CORPUS / name, truth, "program", carry)
    clean = program_command(CORPUS / name, truth, "clean", carry)
    if program is None:
        result["error"] = "program not found (CUDA cases need scripts/gpu-stage)"
        return result
    result["runs"]["record"], result["program"] = record_and_advise(gpuscope, truth, program, work / "program", env)
    if truth.get("apply_goal"):  # the program's plan for `apply`: program.apply.plan.json
        subprocess.run(apply_plan_command(gpuscope, work / "program.gpuscope", truth["apply_goal"]), env=env,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    if clean is not None:
        result["runs"]["clean_record"], result["clean"] = record_and_advise(gpuscope, truth, clean, work / "clean",
                                                                            env)
    return result


def apply_phase(name, truth, work, carry, env, plans):
    gpuscope = str(carry / "bin" / "gpuscope")
    result = {"case": name, "truth": truth, "runs": {}}
    program = program_command(CORPUS / name, truth, "program", carry)
    if program is None:
        result["error"] = "program not found (CUDA cases need scripts/gpu-stage)"
        return result
    runs = result["runs"]
    run_plain(program, work, env, result)
    goal_plan = work / "program.apply.plan.json"  # the truth's apply_goal, where it names one
    plan = plans / f"{name}.plan.json" if plans else goal_plan if goal_plan.exists() else work / "program.plan.json"
    fixes = plan_fixes(plan)
    result["plan_fixes"] = [{"id": f.get("id"), "kind": f.get("kind")} for f in fixes]
    if not fixes:
        return result
    shutil.copy(plan, work / "applied.plan.json")
    # The values both runs computed are kept (the bridge writes the run with the plan's to GPUSCOPE_VALUES_OUT):
    # the tolerances apply states are set from them.
    (work / "values-applied").mkdir(exist_ok=True)
    apply_env = {**env, "GPUSCOPE_VALUES_OUT": str(work / "values-applied")}
    # Twice the time of one run: a DeepLabV3 trained with four loader workers ran 38 s as written and was stopped
    # at 150 s under apply, after its own last step (H200, 2026-11-29), and counted as harmed.
    runs["apply"], err = run([gpuscope, "apply", "--plan", str(plan), "--"] + program, work / "apply.log", apply_env,
                             runs=2)
    result["apply_notes"] = [dict(zip(("id", "kind", "note"), m.groups()))
                             for m in map(APPLY_LINE.match, err.splitlines()) if m]
    result["apply_results"] = [m.group(1) for m in map(RESULTS_LINE.match, err.splitlines()) if m]
    as_written = AS_WRITTEN_LOG.search(err)
    if as_written:
        shutil.copytree(as_written.group(1), work / "as-written", dirs_exist_ok=True)
    after = [gpuscope, "apply", "--plan", str(plan), "--no-verify", "--record", "-q", "-f", "-o",
             str(work / "after.gpuscope"), "--"]
    runs["apply_record"], _ = run(after + program, work / "apply_record.log", env)
    result["after"] = advise(gpuscope, work / "after.gpuscope", work / "after", env)
    return result


def gpu_count():
    try:
        out = subprocess.run(["nvidia-smi", "-L"], stdout=subprocess.PIPE, text=True).stdout
        return sum(1 for line in out.splitlines() if line.startswith("GPU "))
    except OSError:
        return 0


def machine():
    query = ["nvidia-smi", "--query-gpu=name,driver_version,memory.total", "--format=csv,noheader"]
    gpus = subprocess.run(query, stdout=subprocess.PIPE, text=True).stdout.strip().splitlines()
    versions = subprocess.run([sys.executable, "-c", "import torch; print(torch.__version__)"],
                              stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True).stdout.strip()
    return {"date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), "gpus": gpus, "torch": versions}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", required=True, type=Path)
    parser.add_argument("--only", default="", help="comma-separated case names, run in this order")
    parser.add_argument("--skip", default="", help="comma-separated case names")
    parser.add_argument("--budget", type=float, default=540, help="stop starting cases after this many seconds")
    parser.add_argument("--carry", type=Path, default=ROOT / ".gpu-carry")
    parser.add_argument("--phase", choices=("findings", "plain", "apply", "both"), default="both")
    parser.add_argument("--plans", type=Path, help="folder of NAME.plan.json for the apply phase")
    args = parser.parse_args()
    only = [c for c in args.only.split(",") if c]
    skip = {c for c in args.skip.split(",") if c}
    env = dict(os.environ, PYTHONUNBUFFERED="1")
    for variable in ("XLA_PYTHON_CLIENT_PREALLOCATE", "XLA_PYTHON_CLIENT_MEM_FRACTION", "PYTORCH_CUDA_ALLOC_CONF"):
        env.pop(variable, None)  # the programs' own settings, as their users run them
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "machine.json").write_text(json.dumps(machine(), indent=1))
    started, gpus = time.monotonic(), gpu_count()
    for name, truth in cases(only):
        if (only and name not in only) or name in skip:
            continue
        if truth.get("multi_rank", 1) > gpus:
            print(f"{name}: skipped, needs {truth['multi_rank']} GPUs and this machine has {gpus}", flush=True)
            continue
        if time.monotonic() - started > args.budget:
            print(f"{name}: not started, the time budget ({args.budget:.0f} s) is spent", flush=True)
            continue
        t0 = time.monotonic()
        work = args.out / name
        work.mkdir(parents=True, exist_ok=True)
        steps = {}
        if args.phase in ("findings", "both"):
            result = findings_phase(name, truth, work, args.carry, env)
            (work / "result.findings.json").write_text(json.dumps(result, indent=1))
            steps.update({k: v.get("ms_step") for k, v in result["runs"].items()})
        if args.phase == "plain":
            program = program_command(CORPUS / name, truth, "program", args.carry)
            result = {"case": name, "truth": truth, "runs": {}}
            if program:
                run_plain(program, work, env, result)
            (work / "result.plain.json").write_text(json.dumps(result, indent=1))
            steps.update({k: v.get("ms_step") for k, v in result["runs"].items()})
        if args.phase in ("apply", "both"):
            result = apply_phase(name, truth, work, args.carry, env, args.plans)
            (work / "result.apply.json").write_text(json.dumps(result, indent=1))
            steps.update({k: v.get("ms_step") for k, v in result["runs"].items()})
        print(f"{name}: {time.monotonic() - t0:.0f} s, ms/step {steps}", flush=True)


if __name__ == "__main__":
    main()
