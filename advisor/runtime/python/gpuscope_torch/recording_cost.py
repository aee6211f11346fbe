"""Steps timed with the recording paused: what recording costs this very process.

CUPTI's cost per CUDA call differs from one process to the next on one host (2 us a launch between two recordings
of one loop, docs/benchmarks.md), and a PyTorch process pays more than gpuscope-calibrate's empty launches after
it. So, once the module hooks are gone, the bridge times a few hook-free steps recorded, as many with the
collector's costly record kinds paused (formats/bridge_marks.h: the collector switches them at these marks), and as
many recorded again, and puts the three figures in the trace; the analyzer takes the paused steps against the mean
of the recorded ones around them as what recording added to a step of this process (analysis::pausedStepsCost;
around them, so that a program whose own pace drifts does not read as recording's cost), and leaves the paused steps out of everything else.

A step is the analyzer's: from one root module's forward to the next, or, once an optimizer has stepped, from the
first forward after each optimizer step (gradient accumulation). Each figure is the host's time across the same
number of steps: in a GPU-bound loop all are the GPU's pace and differ by nothing, in a host-bound one by what
recording costs the host. The step of each switch is left out, and a window that holds an evaluation (forwards in
eval mode or without grad, once an optimizer has stepped) starts again after it. GPUSCOPE_TORCH_COST_STEPS (default
5, 0: never) is the fewest steps timed each time; more are taken until the first recorded ones hold 0.1 s, at most
40.
"""

import atexit
import os
import time

import torch

from . import annotate, warn

RECORDED_STEPS_TIMED_MARK = "gpuscope: recorded steps timed"
RECORDING_PAUSED_MARK = "gpuscope: recording paused"
RECORDING_RESUMED_MARK = "gpuscope: recording resumed"
RECORDING_COST_TIMED_MARK = "gpuscope: recording's cost timed"
_DEFAULT_STEPS = 5
_MAX_STEPS = 40
_MIN_TIMED_NS = 100_000_000

# What happens at each step's start, in order: the first hook-free step is the hooks' switch ("settle"); then the
# recorded steps are timed; the step in which recording is paused is the pause's switch; then as many paused steps
# are timed; the step in which recording resumes is that switch; then as many recorded steps are timed again.
_SETTLE, _RECORDED, _PAUSE_SETTLE, _PAUSED, _RESUME_SETTLE, _RECORDED_AFTER, _DONE = range(7)
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
        if _state["optimizer"] and (not module.training or not torch.is_grad_enabled()):
            _state["evaluated"] = True  # a training program's evaluation: no step, and no window may time it
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
    if _state.pop("evaluated", False) and phase in (_RECORDED, _PAUSED, _RECORDED_AFTER):
        # The window held an evaluation (the tutorial's val phase, 39 forwards): it starts again from this step.
        starts[:] = [now]
        if phase == _RECORDED:
            torch.cuda.nvtx.mark(RECORDED_STEPS_TIMED_MARK)  # the analyzer counts the launches from the last one
        return
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
    elif phase in (_PAUSE_SETTLE, _RESUME_SETTLE):
        _state["phase"] = phase + 1
        starts.append(now)
    elif phase == _PAUSED:
        starts.append(now)
        if len(starts) - 1 >= _state["recorded"][0]:
            _state["paused"] = starts[-1] - starts[0]
            _resume()
            _state["phase"], _state["starts"] = _RESUME_SETTLE, []
    elif phase == _RECORDED_AFTER:
        starts.append(now)
        steps, before = _state["recorded"]
        if len(starts) - 1 >= steps:
            _mark_figures(steps, before, starts[-1] - starts[0])
            _state["phase"] = _DONE


def _mark_figures(steps, before, after):
    """The three figures, for the analyzer (analysis::pausedStepsCost)."""
    torch.cuda.nvtx.mark(f"{RECORDING_COST_TIMED_MARK} ({steps} steps: {before} ns recorded before, "
                         f"{_state['paused']} ns paused, {after} ns recorded after)")


def _enough(starts):
    steps = len(starts) - 1
    return steps >= _MAX_STEPS or (steps >= _state["min_steps"] and starts[-1] - starts[0] >= _MIN_TIMED_NS)


def _resume():
    if _state["phase"] in (_PAUSE_SETTLE, _PAUSED):
        torch.cuda.nvtx.mark(RECORDING_RESUMED_MARK)


def _resume_at_exit():
    """A program that ends while paused: recording resumes (the analyzer has no figures then). One that ends while
    its recorded steps after the pause are timed gives the figures of those it finished, from half as many as
    before the pause (at least 2), scaled to as many: a Llama trained for 23 optimizer steps, 4 of them annotated
    and 2 evaluations between, ended 4 steps short of its figures (bench/corpus/hf_llama_grad_accum_eval)."""
    try:
        _resume()
        starts = _state["starts"]
        if _state["phase"] == _RECORDED_AFTER:
            steps, before = _state["recorded"]
            done = len(starts) - 1
            if done >= max(2, (steps + 1) // 2):
                _mark_figures(steps, before, (starts[-1] - starts[0]) * steps // done)
        _state["phase"] = _DONE
    except Exception:
        pass
