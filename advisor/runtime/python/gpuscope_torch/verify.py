"""`gpuscope apply`'s results check: what the program computes with the plan against what it computed as
written (values.py notes both), within a tolerance each kind of fix states.

Compared at apply's timing check (the model's 8th call, or its 11th where the check runs the model as written
itself), where the model's fixes can still be rolled back, with the losses of the steps so far and the model's
first four calls; then, while they stay in force, the mean loss of
each further window of ten steps, copied off the device without waiting for it (in a single process: the ranks
of a job roll back together, which a rank cannot ask the others for without waiting); and at exit for the whole
run, in one line on stderr.
"""

import atexit
import os
import sys

import torch

from . import values

# How far each kind of fix may move what the program computes, relative: (a single value: an output or a
# buffer's sum; the mean loss of a window of steps), and why. Set from runs of the corpus on an H100 (2026-11-26,
# docs/apply-results.md): bf16 autocast moved single outputs of ResNet-50, ViT-B/16, GPT-2-style and MLP models
# by up to 6 % and windows' mean losses by up to 1.3 % (steadily trained models); torch.compile moved GPT-2's
# fp16 logits by 0.12 %. TF32 keeps 3 mantissa bits more than bf16: an eighth of its rounding, not measured.
TOLERANCES = {
    "allocator": (1e-3, 1e-3, "runs as written differ this much (kernels whose sums are not deterministic)"),
    "optimizer": (1e-3, 1e-3, "a fused optimizer does the same arithmetic in one kernel"),
    "checkpoint": (1e-3, 1e-3, "recomputation runs the same kernels again"),
    # Flash or memory-efficient attention in place of cuDNN's: other kernels, summing in another order in the
    # half precision cuDNN's attention runs in (it takes bf16 and fp16 alone).
    "attention": (0.10, 0.05, "another attention kernel sums in another order, in bf16 or fp16 (8 or 11 mantissa "
                              "bits)"),
    "tf32": (0.02, 0.02, "TF32 rounds matmul inputs to 10 mantissa bits"),
    "compile": (0.02, 0.02, "the compiler fuses and reorders floating-point sums"),
    "autocast": (0.10, 0.05, "bf16 keeps 8 mantissa bits"),
    # A single step's loss on other random crops and flips: 10.3 and 18.9 % at step 1 of a ResNet-18 trained with
    # SGD (lr 0.1) on two ranks, the runs' windows of 10 steps within 10 % (Lightning, 2 x H100, 2026-11-27).
    "data_loader": (0.25, 0.10, "loader workers draw random transforms from generators of their own"),
    # The compiler's reordered sums, rounded to the program's own bf16: a transformer trained under the script's
    # autocast with a hand-written AdamW, compiled, moved its mean loss of steps 21-25 by 2.85 % (H200,
    # 2026-11-27, bench/corpus/pt_per_param_adam), where the sums of fp32 models moved 0.12 %.
    "compile_bf16": (0.10, 0.05, "the compiler reorders sums the program itself runs in bf16 or fp16 (its own "
                                 "autocast), which keep 8 or 11 mantissa bits"),
}

_reference = []  # the run as written's values, where `gpuscope apply` ran it first
_startup = []  # keys of TOLERANCES of the fixes in force from the program's start
_own_bf16 = []  # True once a model was seen called under the program's own bf16 or fp16 autocast
_watching = {}  # while the model's fixes stay after the check: "kinds", "undo" (rolls them back), "copy"
_host = []  # a pinned host buffer the watched losses are copied into


def started_with(fix):
    """Notes a fix applied when the program starts (in force from its first step)."""
    key = "tf32" if fix.get("setting") == "tf32" else fix.get("kind")
    if key in TOLERANCES:
        _startup.append(key)


def program_runs_autocast():
    """Notes that the script calls its model under an autocast of its own: a compiled model's sums then round to
    bf16 or fp16, and differ from the run as written by that much."""
    if not _own_bf16:
        _own_bf16.append(True)


def _model_keys(kinds):
    """The keys of TOLERANCES for the model's fixes of kinds, with the program's own precision."""
    keys = list(kinds)
    if "compile" in keys and _own_bf16:
        keys.append("compile_bf16")
    return keys


def read_reference(applied_kinds):
    """Reads the run as written's values (GPUSCOPE_VALUES_REF) and says at exit how the whole run compares;
    applied_kinds() names the kinds of model fix applied by then."""
    folder = os.environ.get("GPUSCOPE_VALUES_REF", "")
    if not folder:
        return
    reference = values.read(os.path.join(folder, values.file_name()))
    if reference is not None:
        _reference.append(reference)
    atexit.register(lambda: _say_at_exit(applied_kinds()))


def written_call_s(model):
    """The time per call the run as written took over its calls values.TIMED of its first model, where that model
    is of class `model`; else None."""
    timed = _reference[0].get("timed") if _reference else None
    if not timed or timed.get("model") != model or timed.get("calls") != list(values.TIMED):
        return None
    return timed.get("per_call_s") or None


def verdict(kinds, mine=None, losses=True):
    """Compares what the program computed so far (mine: values.snapshot() when not given) with the run as
    written, allowing for the fixes in force from the start and the model's fixes of kinds; without losses, the
    models' calls alone. Returns (how the results differ, in words, or None; what was compared and how closely, in
    words; empty without a reference)."""
    if not _reference:
        return None, ""
    if not losses:
        mine = dict(mine or values.snapshot(), losses=[])
    first, later = _tolerance(_startup), _tolerance(_startup + _model_keys(kinds))
    worst, beyond, compared = values.compare(_reference[0], mine or values.snapshot(), first[:2], later[:2])
    if worst is None:
        return None, "results not compared: no loss and no model call in common with the run as written"
    if beyond is not None and beyond["basis"] == "start" and not _startup:
        return None, (f"results not compared: {beyond['where']} differs by {_percent(beyond['difference'])} from "
                      f"the run as written before any fix took effect (the program computes other values from run "
                      f"to run: inputs not seeded, or kernels that are not deterministic)")
    if beyond is not None:
        return (f"{beyond['where']} differs by {_percent(beyond['difference'])} from the run as written "
                f"(tolerance {_percent(beyond['tolerance'])}: {_why(beyond, first, later)})"), ""
    return None, (f"results as the run as written: {compared} compared, the largest difference "
                  f"{_percent(worst['difference'])} ({worst['where']}, tolerance {_percent(worst['tolerance'])}: "
                  f"{_why(worst, first, later)})")


def _why(found, first, later):
    if found["basis"] == "moves":
        return "the loss as written moves this much from one step to the next (the median change)"
    if found["basis"] == "draws":
        return (f"the model was handed other random batches than as written: {values.STANDARD_ERRORS} standard "
                f"errors of two windows' mean loss, from how much the loss as written moves from one step to the next")
    return (first if found["basis"] == "start" else later)[2]


def _tolerance(keys):
    """The largest tolerances among the keys of TOLERANCES (single values, mean losses, why of the first)."""
    chosen = [TOLERANCES[k] for k in keys if k in TOLERANCES] or [TOLERANCES["allocator"]]
    single = max(chosen, key=lambda t: t[0])
    return single[0], max(t[1] for t in chosen), single[2]


def _percent(fraction):
    return "infinitely" if fraction == float("inf") else f"{fraction * 100:.3g} %"


def watch(kinds, undo):
    """After the check keeps the model's fixes of kinds: compares the mean loss of each further window of steps
    as the program goes, and calls undo(reason) at the first beyond its tolerance. The losses are copied to the
    host behind the program's own work and read once copied, so the program never waits for the device."""
    if not _reference or len(_reference[0]["losses"]) <= values.WINDOW or ranks() > 1:
        return  # in a job of several ranks they roll back together, at the check only (apply.py)
    _watching.update(kinds=list(kinds), undo=undo, copy=None)
    values.loss_listeners.append(_on_loss)


def ranks():
    """The processes of the job: its world size, 1 outside torch.distributed."""
    dist = torch.distributed
    return dist.get_world_size() if dist.is_available() and dist.is_initialized() else 1


def _on_loss(count):
    try:
        _compare_window(count)
    except Exception as error:  # watching must never break the program
        _stop_watching()
        sys.stderr.write(f"gpuscope apply: results no longer compared: {error!r}\n")


def _compare_window(count):
    """At each loss noted: starts copying the losses at the end of a window, and compares them once copied."""
    if count % values.WINDOW == 0 and _watching.get("copy") is None:
        _copy_losses(count)
    copy = _watching.get("copy")
    if copy is not None and (copy[1] is None or copy[1].query()):
        _watching["copy"] = None
        host, _, noted = copy
        losses = host[:noted].tolist()
        problem, _ = verdict(_watching["kinds"], {"losses": losses, "models": []})
        if problem:
            # Whether the model was handed other batches is read only now, once, synchronising: the first calls' and
            # the later calls' input sums (values.LATER). Without them a loader fix's other random crops read as
            # changed results: the transfer-learning tutorial's persistent workers were rolled back at a window 39 %
            # off, within what other batches alone set (H200, 2026-12-01).
            problem, _ = verdict(_watching["kinds"], dict(values.snapshot(), losses=losses))
        if problem:
            _stop_watching()
            _watching["undo"](f"changed results: {problem}")
            return
    if count >= min(values.LOSSES, len(_reference[0]["losses"])) and _watching.get("copy") is None:
        _stop_watching()


def _copy_losses(count):
    """Starts copying the first count losses to the host; the event says when they are there."""
    losses = torch.stack(values.losses()[:count])
    if not losses.is_cuda:
        _watching["copy"] = (losses, None, count)
        return
    if torch.cuda.is_current_stream_capturing():
        return
    if not _host:
        _host.append(torch.empty(values.LOSSES, dtype=torch.float32, pin_memory=True))
    host = _host[0][:count]
    host.copy_(losses, non_blocking=True)
    event = torch.cuda.Event()
    event.record()
    _watching["copy"] = (_host[0], event, count)


def _stop_watching():
    if _on_loss in values.loss_listeners:
        values.loss_listeners.remove(_on_loss)


said = []  # the run's verdict on its results, as said at exit (apply's outcome file reads it)


def _say_at_exit(kinds):
    """The whole run's values against the run as written's, in one line; nothing from a process that ran no
    model (torchrun's launcher, a data loader's worker)."""
    mine = values.snapshot()
    if not mine["losses"] and not mine["models"]:
        return
    if not _reference:
        sys.stderr.write("gpuscope apply: results not compared: the run as written noted no values for this "
                         "process (it failed, or ran no model)\n")
        return
    problem, words = verdict(kinds, mine)
    said.append(f"results differ: {problem}" if problem else words)
    sys.stderr.write(f"gpuscope apply: {said[-1]}\n")
