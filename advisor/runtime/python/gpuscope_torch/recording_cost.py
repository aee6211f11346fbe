"""Steps timed with the recording paused: what recording costs this very process.

CUPTI's cost per CUDA call differs from one process to the next on one host (2 us a launch between two recordings
of one loop, docs/benchmarks.md), and a PyTorch process pays more than gpuscope-calibrate's empty launches after
it. So, once the module hooks are gone, the bridge times a few hook-free steps recorded, then as many with the
collector's costly record kinds paused (formats/bridge_marks.h: the collector switches them at these marks), and
puts both figures in the trace; the analyzer takes the difference as what recording added to a step of this
process (analysis::pausedStepsCost), and leaves the paused steps out of everything else.

A step is the analyzer's: from one root module's forward to the next, or, once an optimizer has stepped, from the
first forward after each optimizer step (gradient accumulation). Each figure is the host's time across the same
number of steps: in a GPU-bound loop both are the GPU's pace and differ by nothing, in a host-bound one by what
recording costs the host. The switch's own step is left out of each. GPUSCOPE_TORCH_COST_STEPS (default 6, 0:
never) is the fewest steps timed each way; more are taken until each side holds 0.2 s, at most 40.
"""

import atexit
import os
import time

import torch

from . import annotate, warn

RECORDED_STEPS_TIMED_MARK = "gpuscope: recorded steps timed"
RECORDING_PAUSED_MARK = "gpuscope: recording paused"
RECORDING_RESUMED_MARK = "gpuscope: recording resumed"
_DEFAULT_STEPS = 6
_MAX_STEPS = 40
_MIN_TIMED_NS = 200_000_000

# What happens at each step's start, in order: the first hook-free step is the hooks' switch ("settle"); then the
# recorded steps are timed; the step in which recording is paused is the pause's switch; then as many paused steps
# are timed; then recording resumes, for good.
_SETTLE, _RECORDED, _PAUSE_SETTLE, _PAUSED, _DONE = range(5)
_state = {"phase": _SETTLE, "min_steps": _DEFAULT_STEPS, "stepped": False, "optimizer": False, "starts": []}


def install():
    """Called with the recording's annotations (annotate.install), never under `apply`: its timing check is its own."""
    steps = _parse(os.environ.get("GPUSCOPE_TORCH_COST_STEPS", ""))
    if steps == 0:
        return
    _state["min_steps"] = steps
    from torch.optim.optimizer import register_optimizer_step_post_hook

    register_optimizer_step_post_hook(_on_optimizer_step)
    annotate.root_forward_observers.append(_on_root_forward)
    atexit.register(_resume_at_exit)


def _parse(text):
    text = text.strip()
    if not text:
        return _DEFAULT_STEPS
    if text.isdigit():
        return int(text)
    warn(f"GPUSCOPE_TORCH_COST_STEPS={text!r} is not a whole number of steps: using {_DEFAULT_STEPS}")
    return _DEFAULT_STEPS


def _on_optimizer_step(optimizer, args, kwargs):
    _state["optimizer"] = _state["stepped"] = True


def _on_root_forward(module):
    """A root module's forward begins: a step's start where it is the first since the last optimizer step."""
    try:
        if _state["phase"] == _DONE or not annotate.hook_free() or annotate._compiling():
            return
        if _state["optimizer"] and not _state["stepped"]:
            return  # another micro-batch of the same step
        _state["stepped"] = False
        _step_start(time.perf_counter_ns())
    except Exception as error:  # never the program's failure
        _resume()
        _state["phase"] = _DONE
        warn(f"recording's cost not measured: {error!r}")


def _step_start(now):
    phase, starts = _state["phase"], _state["starts"]
    if phase == _SETTLE:
        if not _state.pop("switched", False):
            _state["switched"] = True  # the hooks' switch: its step is timed neither way
            return
        _state["phase"] = _RECORDED
        torch.cuda.nvtx.mark(RECORDED_STEPS_TIMED_MARK)
        starts.append(now)
    elif phase == _RECORDED:
        starts.append(now)
        if _enough(starts):
            _state["recorded"] = (len(starts) - 1, starts[-1] - starts[0])
            torch.cuda.nvtx.mark(RECORDING_PAUSED_MARK)
            _state["phase"], _state["starts"] = _PAUSE_SETTLE, []
    elif phase == _PAUSE_SETTLE:
        _state["phase"] = _PAUSED
        starts.append(now)
    elif phase == _PAUSED:
        starts.append(now)
        steps = _state["recorded"][0]
        if len(starts) - 1 >= steps:
            _resume(f" ({steps} steps: {_state['recorded'][1]} ns recorded, {starts[-1] - starts[0]} ns paused)")
            _state["phase"] = _DONE


def _enough(starts):
    steps = len(starts) - 1
    return steps >= _MAX_STEPS or (steps >= _state["min_steps"] and starts[-1] - starts[0] >= _MIN_TIMED_NS)


def _resume(figures=""):
    if _state["phase"] in (_PAUSE_SETTLE, _PAUSED):
        torch.cuda.nvtx.mark(RECORDING_RESUMED_MARK + figures)


def _resume_at_exit():
    """A program that ends while paused: recording resumes without figures (the analyzer then has none)."""
    try:
        if _state["phase"] != _DONE:
            _resume()
            _state["phase"] = _DONE
    except Exception:
        pass
