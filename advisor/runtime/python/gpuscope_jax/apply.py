"""Applies a plan's XLA allocator settings to a JAX program that is not edited (`gpuscope apply`).

XLA reads XLA_PYTHON_CLIENT_PREALLOCATE, XLA_PYTHON_CLIENT_MEM_FRACTION and XLA_PYTHON_CLIENT_ALLOCATOR once,
when its GPU client starts at the program's first array. The bootstrap's sitecustomize calls set_variables() when
the process starts, before the program's own code, so a plain `import jax` later finds them; a variable the
environment already sets is the user's and stays. Whether a setting took hold is said at exit, from XLA's own
figures (memory_stats(), read while its backends still live): "applied" only where its pool stayed under half of
what it reserved when recorded (the plan's reserved_bytes), else "not applied" with what it held. Nothing here
may change what the program computes, prints or returns: every failure is said once and the program goes on.
"""

import atexit
import json
import os
import sys

from gpuscope_jax import backends_started, warn

VARIABLES = ("XLA_PYTHON_CLIENT_PREALLOCATE", "XLA_PYTHON_CLIENT_MEM_FRACTION", "XLA_PYTHON_CLIENT_ALLOCATOR")
# A pool this share of what was reserved up front, or more, is still a reservation made up front.
_STILL_RESERVED = 0.5

_set = []  # the fixes whose variable this process set, waiting for the verdict at exit
_notes = {}  # fix id -> what was said of it, for `gpuscope apply`'s search fix by fix (GPUSCOPE_APPLY_OUTCOME)


def is_xla_fix(fix):
    return fix.get("kind") == "allocator" and fix.get("variable") in VARIABLES


def set_variables(plan_path):
    """Sets the plan's XLA variables in this process's environment; whether there are any to check at exit."""
    try:
        with open(plan_path) as f:
            plan = json.load(f)
        fixes = [fix for fix in plan.get("fixes", []) if is_xla_fix(fix)]
    except (OSError, ValueError, AttributeError):
        return False  # the PyTorch bridge, or `gpuscope apply` itself, says what is wrong with the plan
    for fix in fixes:
        variable, setting = fix["variable"], str(fix.get("setting", ""))
        if os.environ.get(variable, setting) != setting:
            _report(fix, f"not applied: the environment sets {variable}={os.environ[variable]} already")
            continue
        os.environ[variable] = setting
        _set.append(fix)
    if _notes or _set:  # registered before jax's own exit handlers, these run after them, in reverse order
        if os.environ.get("GPUSCOPE_APPLY_OUTCOME"):
            atexit.register(_write_outcome)
        atexit.register(_never_imported)
    return bool(_set)


def check_at_exit():
    """Once jax is imported: the verdict at exit, registered after jax's own exit handlers so that it runs first,
    while its backends live."""
    if _set:
        atexit.register(_say_verdicts)


def verdict(fix, started, devices):
    """What came of one setting: `started`, whether XLA's GPU client started; `devices`, the local devices (asked
    only where it started: at exit JAX ends the process with status -1 if a device is still held)."""
    variable, setting = fix["variable"], str(fix.get("setting", ""))
    if os.environ.get(variable) != setting:
        return f"not applied: the program set {variable}={os.environ.get(variable, '(unset)')} itself"
    if not started:
        return f"not applied: {variable}={setting} set, but the program started no GPU client of XLA's"
    pools = []
    for device in devices():
        stats = device.memory_stats() if device.platform == "gpu" else None
        pool = (stats or {}).get("peak_pool_bytes", (stats or {}).get("pool_bytes"))
        if pool is not None:
            pools.append(int(pool))
    if not pools:
        return f"unconfirmed: {variable}={setting} was set before XLA's GPU client started; memory_stats() reports no pool"
    held, reserved = max(pools), int(fix.get("reserved_bytes", 0))
    said = f"XLA's pool held at most {_gib(held)} (memory_stats()'s peak_pool_bytes)"
    if reserved <= 0:
        return f"unconfirmed: {variable}={setting}; {said}, and the plan holds no reservation to compare it with"
    if held >= _STILL_RESERVED * reserved:
        return f"not applied: {variable}={setting}, yet {said}, against the {_gib(reserved)} reserved when recorded"
    return f"applied: {variable}={setting}: {said}, against the {_gib(reserved)} reserved up front when recorded"


def _say_verdicts():
    try:
        import jax

        started = backends_started()
        for fix in _set:
            _report(fix, verdict(fix, started, jax.local_devices))
    except Exception as error:  # never the program's problem
        for fix in _set:
            _report(fix, f"unconfirmed: XLA's figures could not be read: {error!r}")
    _set.clear()


def _never_imported():
    for fix in _set:  # jax imported says its verdict before this runs, and clears the list
        _report(fix, f"not applied: {fix['variable']} set, but the program never imported jax")
    _set.clear()


def _report(fix, note):
    _notes[fix.get("id", "?")] = note
    sys.stderr.write(f"gpuscope apply: {fix.get('id', '?')} ({fix.get('kind', '?')}): {note}\n")


def _write_outcome():
    path = os.path.join(os.environ["GPUSCOPE_APPLY_OUTCOME"], f"outcome-jax-{os.getpid()}.json")
    try:
        with open(path, "w") as f:
            json.dump({"fixes": _notes, "results": ""}, f)
    except OSError as error:
        warn(f"apply: cannot write {path}: {error}")


def _gib(n):
    return f"{n / 2**30:.2f} GiB"
