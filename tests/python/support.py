"""What the bridge's tests share: running a program of programs/ in a fresh Python, as it would run under
gpuscope or without it, and writing plans.

Every program runs in its own process: the bridge's hooks are global (module hooks, optimizer hooks,
classes' __init__ replaced), so a test that installed them in the test runner would leak into the others.
"""

import json
import os
import pathlib
import subprocess
import sys
import tempfile

HERE = pathlib.Path(__file__).resolve().parent
PROGRAMS = HERE / "programs"
BRIDGE = HERE.parent.parent / "advisor" / "runtime" / "python"
CLI = os.environ.get("GPUSCOPE_TEST_CLI", "")


def environment(plan=None):
    """The environment a program gets: the bridge importable (for programs that install part of it
    themselves), and with a plan what `gpuscope apply` sets: the bootstrap's sitecustomize first on
    PYTHONPATH, GPUSCOPE_TORCH=apply and GPUSCOPE_PLAN."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("GPUSCOPE_TORCH") and k != "GPUSCOPE_PLAN"}
    env["PYTHONPATH"] = f"{PROGRAMS}:{BRIDGE}"
    env["GPUSCOPE_APPLY_CHECK"] = "0"  # fixes at the first call, as these short programs need; Checked turns it on
    if plan is not None:
        env["PYTHONPATH"] = f"{BRIDGE / 'bootstrap'}:{BRIDGE}:{PROGRAMS}"
        env["GPUSCOPE_TORCH"] = "apply"
        env["GPUSCOPE_PLAN"] = str(plan)
    return env


def run_program(name, *args, plan=None, prefix=(), extra_env=None):
    """Runs programs/NAME with this Python (the torch venv's); returns the CompletedProcess (text)."""
    command = [*prefix, sys.executable, str(PROGRAMS / name), *map(str, args)]
    return subprocess.run(command, env={**environment(plan), **(extra_env or {})}, capture_output=True, text=True,
                          timeout=300, cwd=PROGRAMS)


def run_as_written(name, *args, values_out):
    """Runs programs/NAME as `gpuscope apply` runs it before the run with the plan: the bridge noting the values
    it computes (GPUSCOPE_TORCH=values) into VALUES_OUT; returns the CompletedProcess."""
    env = {**environment(), "PYTHONPATH": f"{BRIDGE / 'bootstrap'}:{BRIDGE}:{PROGRAMS}", "GPUSCOPE_TORCH": "values",
           "GPUSCOPE_VALUES_OUT": str(values_out)}
    return subprocess.run([sys.executable, str(PROGRAMS / name), *map(str, args)], env=env, capture_output=True,
                          text=True, timeout=300, cwd=PROGRAMS)


def run_for_json(name, *args):
    """Runs programs/NAME with a file path first among its arguments, for the JSON it writes there; returns
    (that JSON, the CompletedProcess), raising with the program's stderr when it fails."""
    with tempfile.TemporaryDirectory() as tmp:
        result = run_program(name, f"{tmp}/out.json", *args)
        if result.returncode != 0:
            raise AssertionError(result.stderr)
        with open(f"{tmp}/out.json") as f:
            return json.load(f), result


def run_ok(test, name, *args, plan=None, extra_env=None):
    """run_program, failing the test with the program's stderr when it does not exit 0."""
    result = run_program(name, *args, plan=plan, extra_env=extra_env)
    test.assertEqual(result.returncode, 0, result.stderr)
    return result


def write_plan(directory, fixes, raw=None, step_time_ns=1, predicted_ns=1):
    """Writes plan.json with FIXES (id and rule filled in) in DIRECTORY; RAW replaces the whole text."""
    fixes = [{"id": f"{fix['kind']}-{i}", "rule": "test", **fix} for i, fix in enumerate(fixes, 1)]
    plan = {"format": "gpuscope-plan", "version": 1, "trace": "test.gpuscope", "step_basis": "test",
            "measured": {"step_time_ns": step_time_ns, "peak_memory_bytes": 1},
            "predicted": {"step_time_ns": predicted_ns, "peak_memory_bytes": 1}, "prediction_basis": "test",
            "fixes": fixes}
    path = pathlib.Path(directory) / "plan.json"
    path.write_text(json.dumps(plan) if raw is None else raw)
    return path


def bridge_lines(stderr):
    """The lines the bridge wrote on stderr."""
    return [line for line in stderr.splitlines() if line.startswith("gpuscope")]
