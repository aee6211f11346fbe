"""Applies the advisor's plan.json to a PyTorch program that is not edited (`gpuscope apply`).

Each fix kind maps to a change PyTorch offers without touching the script:
  precision      bf16_autocast: every forward of a root module runs under torch.autocast (bf16);
                 tf32: TF32 matmuls and convolutions.
  optimizer      fused: Adam, AdamW and SGD are built with fused=True (multi-tensor where fused fails).
  allocator      PYTORCH_CUDA_ALLOC_CONF, set before CUDA starts.
  data_loader    DataLoader workers, pinned memory and persistent workers, where the script asked for fewer.
  checkpoint     each block of the model's longest run of like blocks (a ModuleList or Sequential of
                 modules of one type, each made of modules) runs under torch.utils.checkpoint
                 (non-reentrant, which torch.compile traces whole, so a compiled model keeps one graph).
  cuda_graphs, fusion, gemm_padding
                 the root module is compiled (torch.compile; mode "reduce-overhead" for CUDA graphs)
                 from its second call on; the compiler pads GEMM shapes to tensor-core multiples (its
                 shape padding, turned on for gemm_padding). Not applied to a model the script compiles
                 itself, nor CUDA graphs to one trained with gradient accumulation.
  attention      no_cudnn_sdp: cuDNN's attention switched off (torch.backends.cuda.enable_cudnn_sdp), so
                 scaled_dot_product_attention runs flash or memory-efficient attention, which compile no
                 kernel for each new shape; sdpa (written-out attention) needs the model's code changed:
                 reported, not applied.
What was applied, and what was not and why, is printed on stderr: when the program starts for the fixes
that take effect then, when they are applied to the model, and at exit for those that never took effect.

The fixes made to the model are checked against the model as the script wrote it: they take effect from the
model's second call, its first running as written (so compilation falls in the program's warm-up, and so do the
kernels the calls as written load), and its calls 5-7 are timed with them. Where `gpuscope apply` ran the
program as written first, that run timed the same calls (values.py) and the fixes stay when they were not slower,
where the two runs' calls are far enough apart that two processes' own difference in speed
cannot explain it (under 0.75x or over 1.5x); else (closer than that, --no-verify, or this run recorded: CUPTI's
cost is in its windows alone) calls 8-10 run as written in this process (9-10 timed; recorded, an NVTX mark
says where they begin, and the analysis leaves them out of the run's steps and peak) and the fixes are switched
on again only when they won. Fixes that lose are rolled back and the program goes on as the script wrote it. The
calls as written of the run before cost the program with the plan nothing: in a short benchmark they were three
of its 20 timed steps (BERT: 10.2 ms a step by its clock against 7.5 ms steady, H200).
In a job of several ranks they are rolled back on every rank when any rank found them slower.
Earlier calls are no measure: a DDP model compiled with CUDA graphs took 95 ms per call at calls 3-4 and
10.8 ms at calls 5-7, against 24.7 ms as written (2 x H200). A fix rolled back costs the program its three
slower calls. A change its guard rolls back before the fixes' window is timed starts the check over from that
call: the other changes run another way from then on, and its first run pays one-off costs (cuDNN's autotuning).
Each window is timed between two device synchronisations, less what gpuscope's own module hooks cost in it
(measured in the process), which the script as written does not pay. Two steps in a row that each take ten
times the first one as written, and half a second or more, after the model's third call (a stall, or graphs
recorded again) roll the fixes back at once; after the check, a kept compile is rolled back once twenty of its
calls come three times slower, at the median, than the step the plan measured on the recording. A compiled
forward compiles once for each way the program calls it (training or evaluation, with or without gradients):
later calls whose shapes it has not seen run as written, not compiled again in the program's steps. Fixes
applied when the program starts (TF32, a fused optimizer, allocator and loader settings) are not part of the
check.
GPUSCOPE_APPLY_CHECK=0 turns the check off.
Where `gpuscope apply` ran the program as written first (GPUSCOPE_VALUES_REF), the check also compares the
results (verify.py): fixes whose losses or model outputs differ from the run as written beyond their stated
tolerance are rolled back, at the check or, while they stay in force, at the first window of ten steps whose
mean loss leaves the run as written's.
"""

import atexit
import contextlib
import datetime
import functools
import inspect
import itertools
import json
import os
import sys
import threading
import time
import types

import torch

from . import compiled, values, verify, warn

_seen = set()  # ids of every module of the models already handled (so a recomputed block is no new root)
_roots = set()  # ids of the modules first called at top level
_models = set()  # ids of the roots with parameters: the models the plan's fixes are for
_depth = threading.local()  # .value: how many module forwards are running on this thread
_autocast = []  # a stack of entered autocast contexts, one per running root forward
_root_fixes = []  # (kind, fix) applied to each root module at its first forward
_waiting = {}  # id(fix) -> (kind, fix): fixes for the model not yet applied to any
_applied = {}  # kind -> the plan's fixes applied to the model as that kind of change
_active = set()  # kinds of model fix in force now (applied, not rolled back)
_checks = {}  # id(root module) -> its _Check
_rolled_back = set()  # kinds of model fix switched off for good
_hooks = []  # the global module hooks, removed once nothing needs them (each costs time at every module call)
_needs_hooks = set()  # kinds of model fix that need the global hooks while in force (see _Check._finish)
_optimizer_steps = [0]  # optimizer steps taken so far by any torch.optim optimizer, counted where graphs may be used
_step_hooks = []  # the global optimizer step hook that counts them
_notes = {}  # fix id -> the last thing said of it, for the outcome file (GPUSCOPE_APPLY_OUTCOME)
_recorded_step_s = [0.0]  # the step the plan measured on the recording, in seconds (0: none)
_plan_slower = [1.0]  # the plan's predicted step over the one it measured, where above 1 (see _slower_than_said)
_module_calls = [0]  # module calls the global hooks have seen, outside compiled code
_hook_cost_s = []  # what the global hooks add to one module call, in seconds, once measured
# A fix is rolled back when its calls take this much longer than the calls as written: any longer. Kept up to 5 %
# slower, a compile cost trap_inplace_buffer 15 % of its step (0.593 against 0.570 ms a call in the check) and
# one of transformers' generate 25x (47.2 against 45.9 ms a call in the check, H100, 2026-11-27): a fix that was
# not faster in the check has shown no gain to keep it for.
_SLOWER = 1.0
# Two processes of one program are not equally fast: seven plain runs of a small host-bound one took 1.04 to 1.82
# ms a step on one H100 host (bench/corpus/trap_data_dependent, 2026-11-27), where GPU-bound ones agree within about
# 1 %. Calls with the fixes are judged against the run as written's only when they were this much faster or
# slower than its calls; closer, they are judged against calls as written timed in this process.
_APART = (0.75, 1.5)
_CHECKING = os.environ.get("GPUSCOPE_APPLY_CHECK", "1") != "0"  # 0: no timing check
# After the check, a kept compile whose calls come this many times slower than the recording's step, at the median
# of this many calls (and a second or more in all), is rolled back (_Check._slow_after_check).
_AFTER_SLOWER, _AFTER_WINDOW = 3.0, 20


def install(plan_path):
    if os.environ.get("GPUSCOPE_APPLY_OUTCOME"):
        atexit.register(_write_outcome)  # first registered, last run: after the results are said
    try:
        with open(plan_path) as f:
            plan = json.load(f)
    except (OSError, ValueError) as error:
        warn(f"apply: cannot read the plan {plan_path}: {error}")
        return
    if plan.get("format") != "gpuscope-plan" or plan.get("version") != 1:
        warn(f"apply: {plan_path} is not a gpuscope plan of version 1")
        return
    _recorded_step_s[0] = (plan.get("measured") or {}).get("step_time_ns", 0) / 1e9
    predicted_s = (plan.get("predicted") or {}).get("step_time_ns", 0) / 1e9
    if _recorded_step_s[0] > 0 and predicted_s > _recorded_step_s[0]:
        _plan_slower[0] = predicted_s / _recorded_step_s[0]
    for fix in plan.get("fixes", []):
        if fix.get("variable", "PYTORCH_CUDA_ALLOC_CONF") != "PYTORCH_CUDA_ALLOC_CONF":
            continue  # XLA's allocator settings: the bootstrap set them, the JAX bridge says what came of them
        handler = _HANDLERS.get(fix.get("kind"))
        try:
            note = handler(fix) if handler else "not applied: gpuscope does not know this kind of fix"
        except Exception as error:  # a fix that cannot be applied must not stop the program
            note = f"not applied: {error!r}"
        if note.startswith("applied"):
            verify.started_with(fix)
        _report(fix, note)
    verify.read_reference(lambda: list(_applied))
    if not _root_fixes:
        values.let_hooks_go()  # no compiled forward will be traced with them
        return
    from torch.nn.modules import module as nn_module

    _hooks.append(nn_module.register_module_forward_pre_hook(_root_pre))
    _hooks.append(nn_module.register_module_forward_hook(_root_post, always_call=True))
    atexit.register(_report_never_applied)


def _wait_for_model(kind, fix):
    """A fix applied to the model at its first forward: said to be applied only once it is."""
    if not any(k == kind for k, _ in _root_fixes):
        _root_fixes.append((kind, fix))
    _waiting[id(fix)] = (kind, fix)
    return "waiting for the model's first forward"


def _write_outcome():
    """What this process said of each fix and of its results, for `gpuscope apply`'s search fix by fix:
    GPUSCOPE_APPLY_OUTCOME/outcome-PID.json. Nothing from a process that ran no model and compared no results:
    torchrun's launcher, inductor's compile workers (which load the bridge too, and would say "not applied")."""
    if not _roots and not verify.said:
        return
    path = os.path.join(os.environ["GPUSCOPE_APPLY_OUTCOME"], f"outcome-{os.getpid()}.json")
    try:
        with open(path, "w") as f:
            json.dump({"fixes": _notes, "results": verify.said[-1] if verify.said else ""}, f)
    except OSError as error:
        warn(f"apply: cannot write {path}: {error}")


def _report_never_applied():
    if "torch.distributed.run" in sys.modules and not torch.cuda.is_initialized():
        return  # torchrun's launcher: its workers run the model and say what they applied
    for _, fix in _waiting.values():
        _report(fix, "not applied: no nn.Module's forward ran (a step written as a plain function has no model to "
                     "apply it to; apply it by hand, e.g. torch.compile of the step function)")
    _waiting.clear()


def _report(fix, note):
    _notes[fix.get("id", "?")] = note
    sys.stderr.write(f"gpuscope apply: {fix.get('id', '?')} ({fix.get('kind', '?')}): {note}\n")


def _precision(fix):
    setting = fix.get("setting")
    if setting == "tf32":
        torch.backends.cuda.matmul.allow_tf32 = True
        torch.backends.cudnn.allow_tf32 = True
        return "applied: TF32 matmuls and convolutions"
    if setting == "bf16_autocast":
        return _wait_for_model("autocast", fix)
    return f"not applied: unknown precision setting {setting!r}"


def _optimizer(fix):
    if fix.get("setting") != "fused":
        return f"not applied: optimizer setting {fix.get('setting')!r} needs a code change"
    for cls in (torch.optim.Adam, torch.optim.AdamW, torch.optim.SGD):
        _fuse(cls)
    return "applied: Adam, AdamW and SGD are built with fused=True"


def _fuse(cls):
    original = cls.__init__

    def init(self, params, *args, **kwargs):
        params = list(params)
        try:
            original(self, params, *args, **{**kwargs, "fused": True, "foreach": None})
        except (RuntimeError, ValueError, TypeError):  # parameters fused cannot take: as the script asked
            original(self, params, *args, **kwargs)

    cls.__init__ = init


def _allocator(fix):
    setting = fix.get("setting", "")
    if torch.cuda.is_initialized():
        torch.cuda.memory._set_allocator_settings(setting)
    else:
        os.environ["PYTORCH_CUDA_ALLOC_CONF"] = setting
    return f"applied: PYTORCH_CUDA_ALLOC_CONF={setting}"


def _data_loader(fix):
    loader = torch.utils.data.DataLoader
    original = loader.__init__
    workers = int(fix.get("num_workers", 0))

    def init(self, dataset, *args, **kwargs):
        if not args and kwargs.get("num_workers", 0) < workers:
            kwargs["num_workers"] = workers
        if not args and "pin_memory" in fix:
            kwargs["pin_memory"] = bool(fix["pin_memory"])
        if not args and kwargs.get("num_workers", 0) > 0 and fix.get("persistent_workers"):
            kwargs["persistent_workers"] = True
        original(self, dataset, *args, **kwargs)

    loader.__init__ = init
    return f"applied: DataLoader with at least {workers} workers, pin_memory and persistent workers"


def _checkpoint(fix):
    return _wait_for_model("checkpoint", fix)


def _compile(fix):
    """CUDA-graph, fusion and padding fixes share one torch.compile of the model: reduce-overhead (CUDA
    graphs) when any asks for graphs, the default mode otherwise."""
    forwards = int(fix.get("forwards_per_step", 1))
    if fix.get("kind") == "cuda_graphs" and forwards > 1:
        return f"not applied: {_accumulation_words(forwards)}"
    if fix.get("kind") == "cuda_graphs" and not _step_hooks:
        from torch.optim.optimizer import register_optimizer_step_post_hook

        _step_hooks.append(register_optimizer_step_post_hook(_count_optimizer_step))
    if fix.get("kind") == "gemm_padding":
        import torch._inductor.config as inductor_config

        inductor_config.shape_padding = True
    _wait_for_model("compile", fix)
    if fix.get("kind") == "cuda_graphs":  # the one compile uses reduce-overhead
        _root_fixes[:] = [(k, fix if k == "compile" else f) for k, f in _root_fixes]
    return "waiting for the model's first forward: one torch.compile with the other compiler fixes"


def _accumulation_words(forwards=None):
    many = f"{forwards} forwards" if forwards else "more than one forward"
    return (f"the model runs {many} (micro-batches) per optimizer step, and torch.compile's CUDA graphs fail "
            f"under gradient accumulation: a replay overwrites what an earlier micro-batch's backward still "
            f"reads (pytorch/pytorch#169545)")


def _count_optimizer_step(optimizer, args, kwargs):
    _optimizer_steps[0] += 1


def _code_change(fix):
    return "not applied: needs the model's code changed (the advice shows how)"


def _attention(fix):
    if fix.get("setting") != "no_cudnn_sdp":
        return _code_change(fix)
    torch.backends.cuda.enable_cudnn_sdp(False)
    return ("applied: cuDNN's attention off; scaled_dot_product_attention runs flash or memory-efficient attention, "
            "which compile no kernel for each new shape")


_HANDLERS = {
    "precision": _precision,
    "optimizer": _optimizer,
    "allocator": _allocator,
    "data_loader": _data_loader,
    "checkpoint": _checkpoint,
    "cuda_graphs": _compile,
    "fusion": _compile,
    "gemm_padding": _compile,
    "attention": _attention,
}


def _root_pre(module, args):
    # Under torch.compile these hooks are traced: a side effect here (even the depth count) would break the
    # graph, and a checkpointed block would then run outside it. The root's own call is never compiled.
    if torch.compiler.is_compiling():
        return
    _module_calls[0] += 1
    _depth.value = getattr(_depth, "value", 0) + 1
    if _depth.value != 1:
        return
    if id(module) not in _seen:
        _seen.update(id(m) for m in module.modules())
        _roots.add(id(module))
        # A module with no parameters (a loss, an activation, a featurizer called at top level) is no model to fix.
        if any(True for _ in module.parameters()):
            _models.add(id(module))
            if _root_fixes:
                _checks[id(module)] = _Check(module)
    elif id(module) not in _roots:
        # A block of a model, called at top level: the script's own checkpointing recomputing it in the backward
        # pass (PyTorch restores the forward's autocast state itself), or the script calling a block directly.
        # No model's call: autocast entered here made a checkpointed MLP's recomputation bf16 where its forward
        # had been fp32, and torch.utils.checkpoint raised in the program's backward.
        return
    check = _checks.get(id(module))
    if check is not None:
        check.on_call()
        if check.calls <= 4 and _script_autocast():  # ours is entered below, after this
            verify.program_runs_autocast()
    # The model's first call runs as the script wrote it, autocast too (a compiled forward takes over from the
    # second): the kernels and library set-up the calls as written need are then loaded in the program's
    # warm-up, not inside the check's calls as written, where they would slow the timed steps of a short run.
    # Around the models alone: a featurizer called before the model (torchaudio's MelSpectrogram) made bf16 features
    # under it, which the model's first layer then met as written in the check's calls, and the program failed.
    if "autocast" in _active and id(module) in _models and (check is None or check.calls > 1):
        context = torch.autocast("cuda", dtype=torch.bfloat16)
        context.__enter__()
        _autocast.append(context)


def _script_autocast():
    """Whether the script calls its model under a bf16 or fp16 autocast of its own."""
    try:
        return any(torch.is_autocast_enabled(device) and
                   torch.get_autocast_dtype(device) in (torch.bfloat16, torch.float16) for device in ("cuda", "cpu"))
    except (AttributeError, RuntimeError, TypeError):  # an older PyTorch: asked no further
        return False


def _root_post(module, args, output):
    if torch.compiler.is_compiling():
        return
    _depth.value = max(0, getattr(_depth, "value", 0) - 1)
    if _depth.value == 0 and not _autocast and id(module) in _models and "autocast" in _planned_kinds():
        _note_written_dtypes(module, output)
    if _depth.value == 0 and _autocast:
        _autocast.pop().__exit__(None, None, None)


_written_half = {}  # id(model): whether its calls as written (no autocast of the plan's) returned a bf16 or fp16 tensor


def _planned_kinds():
    return {kind for kind, _ in _root_fixes}


def _note_written_dtypes(module, output):
    """Notes what a model's call as written returned (_autocast_guarded keeps those dtypes under the plan's autocast);
    nothing where the script runs its own autocast, under which half-precision outputs are the script's."""
    if not _script_autocast():
        _written_half[id(module)] = _written_half.get(id(module), False) or _returns_half(output)


class _Change:
    """One change made to the model, in force while its kind is in _active: the timing check switches it off
    and on again by that alone."""

    def __init__(self, kind, note, switchable=True, undo=None):
        self.kind, self.note, self.switchable, self.undo = kind, note, switchable, undo

    def off(self):
        if self.switchable:
            _active.discard(self.kind)

    def on(self):
        if self.kind not in _rolled_back:
            _active.add(self.kind)


def _apply_to_model(module):
    """Applies the model's fixes to a root module and says so for every fix each change stands for; returns the
    changes made."""
    changes = []
    for kind, fix in _root_fixes:
        try:
            change = _at_first_forward(kind, fix, module)
            changes.append(change)
            _active.add(kind)
            note = change.note
        except Exception as error:
            note = f"not applied to {type(module).__name__}: {error}"
        for key, (waiting_kind, waiting_fix) in list(_waiting.items()):
            if waiting_kind == kind:  # every fix this one change stands for (fusion and graphs: one compile)
                _report(waiting_fix, note)
                if note.startswith("applied"):
                    _applied.setdefault(kind, []).append(waiting_fix)
                del _waiting[key]
    if any(change.kind == "autocast" for change in changes):
        # Outermost: a compiled forward's guard runs inside it.
        module.forward = _PatchedForward(module, _autocast_guarded(module, module.forward))
    return changes


class _PatchedForward:
    """A root module's forward replaced by one of apply's (a guard, a compiled forward), as the module's own
    attribute. The module's copies are not the model apply changed: copy.deepcopy and pickling (torch.save of the
    whole model) give them the forward their class defines. A plain function there failed to pickle (the program
    ended with PicklingError) and went into deep copies as it was, so that a copy kept as the best model so far
    computed with the model's current weights."""

    def __init__(self, module, run):
        functools.update_wrapper(self, run)  # the forward's signature, which callers read (see _guarded)
        self._module, self._run = module, run

    def __call__(self, *args, **kwargs):
        return self._run(*args, **kwargs)

    def __deepcopy__(self, memo):
        copied = memo.get(id(self._module))  # the module's copy, made before its attributes are copied
        return self if copied is None else types.MethodType(type(copied).forward, copied)

    def __reduce__(self):
        # Unpickled before the module's attributes are set again: the attribute lookup finds the class's forward.
        # builtins.getattr, so that the file loads where gpuscope is not installed.
        return getattr, (self._module, "forward")


def _autocast_guarded(model, forward):
    """A root forward whose calls run under the plan's autocast, guarded: the first error raised inside one (a
    dtype error, such as a bf16 result written by index into the model's fp32 buffer) rolls autocast back for
    good, and the call runs again as the script wrote it. Autocast is entered by the root's forward pre-hook
    (_root_pre), outside the forward: the hook cannot take the error back, this can.

    What the forward returns keeps the dtypes the script wrote it to return: where its calls as written returned no
    bf16 or fp16 tensor, the bf16 and fp16 ones autocast makes are cast back to fp32. The code after the model is the
    script's, outside any guard: a DCGAN's discriminator returned bf16 under autocast, and the example's
    nn.BCELoss, which takes no mixed dtypes, raised in the script (H200, bench/corpus/pt_dcgan_train)."""
    @functools.wraps(forward)
    def run(*args, **kwargs):
        ours = _autocast and "autocast" in _active  # entered around this call by _root_pre
        if not ours:
            return forward(*args, **kwargs)
        try:
            output = forward(*args, **kwargs)
        except Exception as error:
            _roll_back("autocast", _error_words(error))
            _autocast.pop().__exit__(None, None, None)  # the script's own autocast, if any, is in force again
            return forward(*args, **kwargs)
        return _as_fp32(output) if _written_half.get(id(model)) is False else output

    return run


def _tensors_of(output):
    """The tensors an output holds (a tensor, a tuple, a dict, a transformers ModelOutput), as PyTorch's pytree
    flattens it."""
    return [leaf for leaf in torch.utils._pytree.tree_leaves(output) if isinstance(leaf, torch.Tensor)]


def _returns_half(output):
    return any(t.dtype in (torch.bfloat16, torch.float16) for t in _tensors_of(output))


def _as_fp32(output):
    """The output with its bf16 and fp16 tensors cast to fp32 (one cast kernel each; autograd goes through it). fp16
    too under a bf16 autocast: cuDNN's LSTM runs in fp16 under any CUDA autocast, and its hidden state, which the
    word-level language model hands to its next call, came back fp16 (bench/corpus/pt_word_language_model)."""
    if not _returns_half(output):
        return output
    return torch.utils._pytree.tree_map_only(
        torch.Tensor, lambda t: t.float() if t.dtype in (torch.bfloat16, torch.float16) else t, output)


def _error_words(error):
    """A roll-back's reason: the error's type and the first line of its message."""
    first_line = (str(error).strip().splitlines() or [""])[0]
    return f"{type(error).__name__}: {first_line[:300]}"


def _roll_back(kind, reason):
    """Says a kind of change is rolled back for good; whoever made it has switched it off."""
    if kind in _rolled_back:
        return
    _rolled_back.add(kind)
    _active.discard(kind)
    for fix in _applied.get(kind, []):
        _report(fix, f"rolled back: {reason}")


def _undo(changes, reason):
    """Rolls changes back for good, saying why; a change the timing check cannot switch off is undone."""
    for change in changes:
        change.off()
        if change.undo is not None and change.kind not in _rolled_back:
            change.undo()
        _roll_back(change.kind, reason)


def _in_force():
    return [fix for kind, fixes in _applied.items() if kind in _active for fix in fixes]


class _Check:
    """Times a root module's calls with the fixes, against the same calls as the script wrote them, and keeps the
    fixes only when they are not slower: what apply leaves in force never slows the program down. The fixes go
    in at the first call, so compilation and graph recording fall in the program's own warm-up; they are timed
    once steady (calls 5-7, once compiling and recording CUDA graphs are done) and compared with calls 5-7 of the
    run as written where the two are clearly apart (_APART), or, where they are not or apply did not run it,
    switched off for calls 8-10 (the first of them to settle, two timed) and switched on again when they won.
    Each window
    runs from one call's start to a later call's start, so it holds the backward and the optimizer step too.
    The device is synchronised at each call's start inside a window, and a call far longer than the window's
    fastest paused outside the model (values.steady_per_call); a CPU model's calls end when they return."""

    FIXED, EAGER, DECIDE = 5, 9, 11  # calls that open the fixed window, the window as written, and decide
    TIMED = {FIXED: 3, EAGER: 2}

    def __init__(self, module):
        self.name, self.calls, self.opened_at, self.opened_s = type(module).__name__, 0, None, 0.0
        self.fixed_s, self.last_s, self.first_s, self.slow_calls = None, None, None, 0
        self.close_note = ""  # why calls as written ran here although the run as written timed its own
        self.after_last, self.after_intervals = None, []  # the last call's start and the times between, after it
        self.offset, self.lost = 0, 0  # calls before the check started over (_start_over), changes rolled back
        self.fixed_window = None  # the calls the fixed window timed
        self.changes = _apply_to_model(module)
        self.done = not _CHECKING or not self.changes
        # The same calls timed in the run as written, where `gpuscope apply` ran it first: then the check decides
        # when the fixed window closes and never runs the model as written here, unless the two are too close to
        # tell across processes (_apart). Not while this run is recorded (apply --record): CUPTI adds microseconds
        # to each launch of the fixed window that the run as written, not recorded, did not pay, and both windows
        # are timed here instead.
        self.written_s = None if _recording() else verify.written_call_s(self.name)
        self.decide_at = self.FIXED + self.TIMED[self.FIXED] if self.written_s else self.DECIDE
        atexit.register(self._at_exit)

    def on_call(self):
        self.calls += 1
        if self.done:
            self._watch_after_check()
            return
        self._watch_intervals()
        if self.done:
            return
        self._start_over()
        if self._changed_early():
            return
        call = self.calls - self.offset
        if call in (self.FIXED + self.TIMED[self.FIXED], self.DECIDE):
            per_call = self._close()
            if per_call is None:
                return
            if self.fixed_s is None:
                self.fixed_s, self.fixed_window = per_call, self.window
                a, b = values.TIMED
                written_calls = f"calls {a}-{b - 1} of the run as written"
                if self.written_s and _apart_on_every_rank(self.name, _apart(self.fixed_s, self.written_s)):
                    return self._decide(self.written_s, written_calls)
                self.decide_at = self.DECIDE
                if self.written_s:
                    self.close_note = (f"; {written_calls} took {self.written_s * 1e3:.3f} ms, too close to tell "
                                       f"apart across two processes")
                annotate = _recording()
                if annotate is not None:  # the calls as written up to the check's end are gpuscope's own
                    annotate.apply_check_as_written()
                for change in self.changes:
                    change.off()
            else:
                self._decide(per_call, "calls {}-{}".format(*self.window) + self.close_note)
        elif call in self.TIMED:
            self._open()
        elif self.opened_at is not None:
            self._mark()

    def _changed_early(self):
        """At the model's third to fifth calls: its calls with the fixes so far (from the second) against the
        same calls of the run as written, their outputs and buffers alone (a single step's loss scatters), and
        the fixes rolled back at once where they changed them beyond their tolerance. The program has then
        trained at most a step or two with them, where a verdict at the timing check (the 8th or 11th call) let
        it train six: a full-batch GCN whose outputs moved 20.5 % under bf16 autocast, rolled back there, ended
        with other results than as written (pyg_gcn_arxiv_fullbatch, H200, 2026-11-30). In a job of several
        ranks the ranks decide together, at the check."""
        if not 3 <= self.calls <= values.CALLS + 1 or verify.ranks() > 1 or not self._synchronized():
            return False
        changed, _ = verify.verdict([change.kind for change in self.changes], losses=False)
        if changed is None:
            return False
        _undo(self.changes, f"changed results: {changed}")
        self._finish()
        return True

    def _start_over(self):
        """A change rolled back inside a call (its guard caught an error, or the caller keeps outputs that graph
        replays would overwrite) leaves the other changes running another way from that call on, and that call paid
        the new way's first run: cuDNN's benchmark mode times every convolution again at a model's first call in a
        new dtype (3.4 s once, a segmentation model's first eager bf16 call on an H100, 2026-11-28), which a window
        holding it took for the fixes' cost (1155 ms a call against 7.4, and autocast rolled back). Until the fixed
        window is measured, the check starts over at such a call, as at the model's first call with the fixes."""
        lost = sum(change.kind in _rolled_back for change in self.changes)
        if lost == self.lost:
            return
        self.lost = lost
        if self.fixed_s is None and lost < len(self.changes):
            self.offset, self.opened_at = self.calls - 2, None  # the call before was the first run the new way

    def _watch_intervals(self):
        """Rolls the fixes back at once when two calls in a row, after the second, each took ten times a call as
        written and half a second or more: compiling again, in the forward or the backward. A call as written is
        the first call (a compiled forward takes over from the second) or, where shorter, the step the plan
        measured on the recording: the first call also loads kernels and sets up libraries, which can take
        longer than a compile."""
        now = time.perf_counter()
        last, self.last_s = self.last_s, now
        if last is None:
            return
        if self.calls == 2:
            self.first_s = now - last
            return
        written = min(self.first_s, _recorded_step_s[0] or self.first_s)
        limit = max(0.5, 10 * written)
        slow = self.calls > 3 and now - last > limit  # calls 2 and 3 compile and record
        self.slow_calls = self.slow_calls + 1 if slow else 0
        if self.slow_calls >= 2 and any(change.kind in _active for change in self.changes):
            _undo(self.changes, f"recompiling or stalled: two calls in a row each took more than {limit:.2f} s, "
                                f"against {written * 1e3:.3f} ms for a call as written")
            self._finish()

    def _watch_after_check(self):
        """After the check, while its compile stays: rolls the compile back once its calls come too slow (the
        global hooks, which call this, stay as long as a compile does)."""
        compiles = [change for change in self.changes if change.kind == "compile" and change.kind in _active]
        slow = self._slow_after_check() if compiles else ""
        if slow:
            _undo(compiles, slow)
            self._finish()

    def _slow_after_check(self):
        """Every _AFTER_WINDOW calls after the check: why the compiled calls are too slow to keep, or "". The
        median time from one call's start to the next against the step the plan measured on the recording: a
        compiled transformers generate ran its later calls at 120 ms each against 4.5 ms recorded (H100,
        2026-11-27), where its check, inside the program's first generate call, had timed both ways slow (43 and 49
        ms a call). The median leaves out a rare long pause (a checkpoint saved, an evaluation)."""
        now = time.perf_counter()
        last, self.after_last = self.after_last, now
        if last is None or _recorded_step_s[0] <= 0:
            return ""
        self.after_intervals.append(now - last)
        if len(self.after_intervals) < _AFTER_WINDOW:
            return ""
        window, self.after_intervals = sorted(self.after_intervals), []
        median = window[len(window) // 2]
        if median <= _AFTER_SLOWER * _recorded_step_s[0] or sum(window) < 1.0:
            return ""
        return (f"slower after the check: {median * 1e3:.3f} ms from one call to the next at the median of calls "
                f"{self.calls - _AFTER_WINDOW}-{self.calls}, against a step of {_recorded_step_s[0] * 1e3:.3f} ms on "
                f"the recording")

    def _finish(self):
        """The check is over: the global module hooks go when no fix in force needs them. Autocast is entered
        by them; a compiled forward was traced with them, and their removal would fail its guards and compile it
        again (seconds, in the middle of the program's timed steps)."""
        annotate = _recording()
        if not self.done and annotate is not None:  # the steps after this are the program as applied
            annotate.apply_check_done()
        self.done = True
        if not _active & _needs_hooks and all(check.done for check in _checks.values()):
            while _hooks:
                _hooks.pop().remove()
            values.remove_hooks()  # the results check's, which stay as long as these for the same reason

    @staticmethod
    def _synchronized():
        """Waits for the GPU's work so far; False inside a CUDA graph capture, which a synchronisation breaks."""
        if not torch.cuda.is_initialized():
            return True
        if torch.cuda.is_current_stream_capturing():
            return False
        torch.cuda.synchronize()
        return True

    def _open(self):
        _hook_cost()  # measured outside the window, whose module calls it would add to
        self.marks, self.opened_at = [], self.calls
        self._mark()

    def _mark(self):
        """A call's start inside a window, the device synchronised: (time, module calls the hooks have seen)."""
        if not self._synchronized():
            self.opened_at = None
            self._give_up("the calls run inside a CUDA graph capture, where they cannot be timed")
            return False
        self.marks.append((time.perf_counter(), _module_calls[0]))
        return True

    def _close(self):
        """The window's time per call (values.steady_per_call), each call's less what gpuscope's global module
        hooks cost in it: the program as written pays nothing for them, and a compiled forward runs none inside
        it, so left in they would make every compile look faster than the script (0.36 against 0.26 ms per call of
        an 11-module model)."""
        if self.opened_at is None:
            return self._give_up("the calls run inside a CUDA graph capture, where they cannot be timed")
        if not self._mark():
            return None
        hook_s = _hook_cost()
        intervals = [(t1 - t0) - (c1 - c0) * hook_s for (t0, c0), (t1, c1) in zip(self.marks, self.marks[1:])]
        self.window = (self.opened_at, self.calls - 1)
        self.opened_at = None
        return values.steady_per_call(intervals)

    def _decide(self, eager_s, written_calls):
        a, b = self.fixed_window
        said = (f"{self.name}.forward took {self.fixed_s * 1e3:.3f} ms per call with the fixes (calls {a}-{b}) and "
                f"{eager_s * 1e3:.3f} ms as written ({written_calls}), gpuscope's module hooks "
                f"({_hook_cost() * 1e6:.1f} us per module call) taken off")
        kinds = [change.kind for change in self.changes]
        changed, compared = verify.verdict(kinds)
        slower = self.fixed_s > eager_s * _slower_than_said()
        if slower and _plan_slower[0] > 1:
            said += f"; the plan said {(_plan_slower[0] - 1) * 100:.0f} % slower, for its memory"
        worse, where = _slower_on_any_rank(self.name, slower or changed is not None)
        if worse:
            _undo(self.changes, f"changed results: {changed}" if changed else f"slower{where}: {said}" if slower
                  else f"slower or changed results{where}: {said}")
        else:
            for change in self.changes:
                change.on()
            for fix in _in_force():
                _report(fix, f"checked: {said}" + (f"; {compared}" if compared else ""))
            verify.watch(kinds, lambda reason: _undo(self.changes, reason))
        self._finish()

    def _give_up(self, reason):
        for change in self.changes:
            change.on()
        for fix in _in_force():
            _report(fix, f"not checked: {reason}")
        self._finish()

    def _at_exit(self):
        if self.done:
            return
        for change in self.changes:  # the program ended inside the check: the fixes were in force, mostly
            change.on()
        for fix in _in_force():
            _report(fix, f"not checked: the program called {self.name}.forward {self.calls} times, the timing check "
                         f"needs {self.decide_at + self.offset}")


def _slower_than_said():
    """How much longer than the calls as written the calls with the fixes may take: _SLOWER, or, for a plan that
    says it costs time (a memory plan: checkpointing recomputes the forward), what it said and 15 % more (the
    advisor's prediction target); beyond that it costs more than the user was told, and is rolled back. A plan that
    says it saves time gets no such margin: with it, a compile 8 % slower in its check was kept (0.494 against 0.458
    ms a call, bench/corpus/trap_inplace_buffer, H100, 2026-11-28)."""
    return max(_SLOWER, _plan_slower[0] * 1.15) if _plan_slower[0] > 1 else _SLOWER


def _apart(fixed_s, written_s):
    """Whether calls with the fixes took so much less or more than the run as written's calls that the two
    processes' own difference in speed cannot be what set them apart (_APART)."""
    low, high = _APART
    return fixed_s < low * written_s or fixed_s > high * written_s


def _hook_cost():
    """What the global module hooks add to one module call inside a model, in seconds, measured once: a module
    with no work called through them (at depth 2 they return at once, as inside any model), against its
    forward called directly. The difference also holds the call's own dispatch, which the script pays too, so
    the check takes off a little more than the hooks cost: that can only favour the script as written."""
    if not _hook_cost_s:
        probe = torch.nn.Identity()
        _seen.add(id(probe))
        _depth.value = getattr(_depth, "value", 0) + 1  # as inside a root's call
        counted = _module_calls[0]
        try:
            best = []
            for call in (probe, probe.forward):
                runs = []
                for _ in range(5):
                    started = time.perf_counter()
                    for _ in range(200):
                        call(None)
                    runs.append((time.perf_counter() - started) / 200)
                best.append(min(runs))
        finally:
            _depth.value -= 1
            _module_calls[0] = counted  # the probe's calls are none of the program's
        _hook_cost_s.append(max(0.0, best[0] - best[1]))
    return _hook_cost_s[0]


def _slower_on_any_rank(name, slower):
    """In a job of several processes (torchrun), the ranks keep or roll back the fixes together, as the slowest
    rank sets the job's pace, and ranks that run the model differently (compiled on one, as written on another)
    can differ in their collectives. Where a rank does not post in time (it calls the model fewer times), each
    keeps its own. Returns whether to roll back and the ranks that were slower, in words."""
    try:
        answers = _every_rank(name, slower)
    except Exception as error:  # the store timed out or is gone: this rank's own verdict
        return slower, f" on this rank (the other ranks' verdicts were not seen: {type(error).__name__})"
    slow = [rank for rank, answer in enumerate(answers) if answer]
    return bool(slow), f" on rank {', '.join(map(str, slow))} of {len(answers)}" if slow and len(answers) > 1 else ""


def _apart_on_every_rank(name, apart):
    """Whether every rank's calls with the fixes were far apart from its run as written's (_apart): the ranks
    then decide at once, else all run calls as written first, so that they reach their verdicts at the same call."""
    try:
        return all(_every_rank(f"{name}/apart", apart))
    except Exception:  # not seen: calls as written in this process, which need no other rank's word
        return False


def _every_rank(topic, mine):
    """Posts this rank's answer (True or False) to one question of the check to the job's store and returns every
    rank's, in rank order, waiting up to 60 s for them; [mine] outside a job of several processes."""
    dist = torch.distributed
    if not dist.is_available() or not dist.is_initialized() or dist.get_world_size() < 2:
        return [mine]
    rank, world = dist.get_rank(), dist.get_world_size()
    keys = [f"gpuscope-apply/{topic}/{r}" for r in range(world)]
    store = dist.distributed_c10d._get_default_store()
    store.set(keys[rank], "1" if mine else "0")
    store.wait(keys, datetime.timedelta(seconds=60))
    return [store.get(key) == b"1" for key in keys]


def _at_first_forward(kind, fix, module):
    """Applies one kind of fix to a root module; returns the _Change made."""
    if kind == "checkpoint":
        return _checkpoint_model(module)
    _needs_hooks.add(kind)
    if kind == "autocast":
        return _Change(kind, f"applied: each forward of {type(module).__name__} runs under torch.autocast(bfloat16)")
    if compiled(module):
        raise ValueError("the script compiles the model itself (torch.compile); compiling it again would stack a "
                         "second compilation on the first")
    mode = "reduce-overhead" if fix.get("kind") == "cuda_graphs" else "default"
    _stop_recording_hooks(module)
    # Switched off and on by _active alone: setting the module's attributes again would fail the compiled
    # code's guards on it and compile it once more.
    module.forward = _PatchedForward(module, _guarded(kind, torch.compile(module.forward, mode=mode), module.forward,
                                                      mode == "reduce-overhead", module, _attribute_tensors(module)))
    return _Change(kind, f"applied: {type(module).__name__}.forward compiled (mode {mode!r})")


def _recording():
    """The recording's annotate module where this run is recorded (`apply --record`), else None."""
    return sys.modules.get(f"{__package__}.annotate")


def _stop_recording_hooks(module):
    """Under `apply --record`: the recording's module hooks go before the compiler traces them in, since their
    removal after the annotated steps would compile the model again (annotate.stop_module_hooks)."""
    annotate = _recording()
    if annotate is not None:
        annotate.stop_module_hooks(module)


def _guarded(kind, changed, original, graphs, module, attributes):
    """A forward with a fix in it, guarded: the first error raised inside it (a compile or graph-capture failure,
    a dtype error, out of memory) switches the fix off, runs the call again as the script wrote it, and every
    later call too; the roll-back is said on stderr. The program goes on as it would have without gpuscope.
    With CUDA graphs (graphs), a forward handed back what its previous call returned (a KV cache, a recurrent
    state) is never replayed: a replay would overwrite it. Nor is an inference forward whose caller still holds
    what the call before the previous one returned (an evaluation loop appending each batch's outputs to a list):
    the next replay would overwrite those too, and the kept results would be wrong. Nor is one of several
    forwards per optimizer step (gradient accumulation), or one that stores tensors in the model's attributes
    (`attributes`: those before its first call, which ran as written): the model is compiled again without
    graphs."""
    state = {"calls": 0, "returned": [], "changed": changed, "graphs": graphs, "train_calls": 0, "steps": 0,
             "recent": [], "compiled_ways": set()}
    as_keywords = _keyword_binder(original)

    # With the forward's own signature: callers read it (transformers' generate asks for logits_to_keep, and
    # without it computes the logits of every position at every token).
    @functools.wraps(original)
    def forward(*args, **kwargs):
        state["calls"] += 1
        if kind in _rolled_back or kind not in _active:
            return original(*args, **kwargs)
        graphs = state["graphs"]
        rebound = _rebound(attributes, module) if graphs and state["calls"] == 1 else []
        if rebound:
            graphs = _graphs_off(state, original, f"the forward stores tensors in the model's attributes "
                                 f"({', '.join(rebound[:3])}), kept from call to call: a graph replay would "
                                 f"overwrite them, and the next call would read them")
        judged = state["calls"] <= values.STATE_CALLS
        if graphs and judged and values.carried(values.tensors((args, kwargs)), state["returned"]):
            _roll_back(kind, "CUDA graphs: the forward is handed tensors its previous call returned (state kept from "
                             "call to call, such as a KV cache), which graph replays would overwrite")
            return original(*args, **kwargs)
        if graphs and not torch.is_grad_enabled() and state["calls"] <= _KEPT_CALLS + 1 and _kept(state["recent"]):
            _roll_back(kind, "CUDA graphs: the caller keeps the outputs of earlier calls (a list of results), which "
                             "graph replays would overwrite")
            return original(*args, **kwargs)
        if graphs and torch.is_grad_enabled() and _accumulating(state, module):
            graphs = _graphs_off(state, original, _accumulation_words())
        if graphs and torch.is_grad_enabled():
            # Training: each call is a new step for the CUDA graphs, whose earlier outputs the backward has used.
            # Without it a forward whose graphs were recorded before calls ran as written (the check) fails in
            # the backward, where no guard is.
            torch.compiler.cudagraph_mark_step_begin()
        try:
            call_args, call_kwargs = as_keywords(args, kwargs)
            with _compiled_once(state, module):
                out = state["changed"](*call_args, **call_kwargs)
        except Exception as error:
            _roll_back(kind, _error_words(error))
            return original(*args, **kwargs)
        # Over the first calls only: a loop keeps its outputs from the start, and each check costs host time.
        if graphs and state["calls"] <= _KEPT_CALLS:
            returned = values.storages(_fresh(values.tensors(out)))
            state["recent"] = (state["recent"] + [returned])[-2:]
            if state["calls"] < values.STATE_CALLS:  # what a later judged call could be handed
                state["returned"] = returned
        return out

    return forward


def _compiled_once(state, module):
    """A context in which the compiled forward compiles nothing it has compiled before: where it has already run
    in this way of calling it (training or evaluation, with or without gradients, with the fixes now in force),
    torch runs only what it compiled then, and runs a frame whose guards fail (new shapes) as written instead
    of compiling it again. A compilation takes seconds, and one that falls in the program's timed steps costs more
    than the compile can win back there: torchvision's Faster R-CNN, compiled at its second call (the last of its
    warm-up), compiled again at its third for new proposal counts, and a 24-batch loop took 246.8 ms a batch
    against 25.6-26.4 as written (2 x H200, 2026-11-28). A new way of calling it (the first training call after
    evaluation) compiles once, as it would with torch.compile by hand."""
    way = (frozenset(_active), torch.is_grad_enabled(), torch.is_inference_mode_enabled(), module.training)
    if way not in state["compiled_ways"]:
        state["compiled_ways"].add(way)
        return contextlib.nullcontext()
    try:
        if torch._C._dynamo.eval_frame.get_eval_frame_callback() not in (None, False):
            return contextlib.nullcontext()  # inside a region the script compiles itself, where no stance may be set
        return torch.compiler.set_stance("eager_on_recompile")
    except (AttributeError, RuntimeError, ValueError):  # a PyTorch before 2.6 has no such stance: as it would
        return contextlib.nullcontext()


def _attribute_tensors(module):
    """What each attribute of the model's modules that holds tensors (a tensor, or a list, tuple or dict of them;
    not its parameters and buffers) holds: which objects, by id, keyed by the attribute's name. An attribute that
    holds only the model's own parameters and buffers is left out: DistributedDataParallel lists its module's
    buffers anew before every call (modules_buffers, to broadcast them), and the compiler reads those as the
    model's state, which a graph replay updates in place; taking the new list for state kept from call to call
    turned CUDA graphs off for every DDP model with a buffer (a ResNet-50's batch norms, H200, 2026-11-29)."""
    own = {id(t) for t in itertools.chain(module.parameters(), module.buffers())}
    held = {}
    for path, m in module.named_modules():
        for name, value in vars(m).items():
            if name in ("_parameters", "_buffers", "_modules"):
                continue
            tensors = [v for v in _items(value) if isinstance(v, torch.Tensor)]
            if tensors and not all(id(t) in own for t in tensors):
                held[f"{path}.{name}".lstrip(".")] = (id(value), *map(id, _items(value)))
    return held


def _items(value):
    """What an attribute's value holds: itself where it is a tensor, else a list's, tuple's or dict's items."""
    if isinstance(value, torch.Tensor):
        return [value]
    if isinstance(value, dict):
        return list(value.values())
    return list(value) if isinstance(value, (list, tuple)) else []


def _rebound(before, module):
    """The attributes that held tensors before the model's first call and hold other objects now: state the
    forward keeps on the model from call to call. torchvision's detection models rebuild their anchor
    generator's cell_anchors at every call; under CUDA graphs the list held a replay's outputs, the next replay
    overwrote them and Faster R-CNN's next call failed, as written too (H200, 2026-11-28). An attribute first
    set by the call (a cache filled once) is no such state."""
    now = _attribute_tensors(module)
    return [name for name, objects in before.items() if name in now and now[name] != objects]


def _keyword_binder(original):
    """A function that turns a call's positional arguments into keywords, so that a forward called both ways
    (warm-up calls model(ids, mask), the loop model(input_ids=ids, attention_mask=mask)) reaches the compiled
    code one way: transformers wraps every model's forward in a decorator taking *args, on whose length
    torch.compile's guards depend, and the first call the other way compiled the model again inside the
    program's timed loop (3.5 s against 8.8 ms a call: a BERT classifier under `gpuscope apply`, H200,
    2026-11-28). Calls it cannot bind by name (positional-only or variadic parameters) go as they came."""
    try:
        params = list(inspect.signature(original).parameters.values())
    except (TypeError, ValueError):  # no signature to bind by
        params = []
    names = [p.name for p in params if p.kind == p.POSITIONAL_OR_KEYWORD]
    bindable = bool(params) and not any(p.kind in (p.POSITIONAL_ONLY, p.VAR_POSITIONAL) for p in params)

    def bind(args, kwargs):
        if not bindable or not args or len(args) > len(names) or any(n in kwargs for n in names[:len(args)]):
            return args, kwargs
        return (), {**dict(zip(names, args)), **kwargs}

    return bind


# The calls whose outputs are watched for being kept by the caller (_kept).
_KEPT_CALLS = 16


def _kept(recent):
    """Whether the outputs of the call before the previous one are still alive: a caller that only holds the
    latest result (`out = model(x)`) has dropped them by now; one that keeps every result has not."""
    return len(recent) == 2 and any(ref() is not None for ref in recent[0])


def _fresh(tensors):
    """The tensors a call made anew, not torch.compile's CUDA graph outputs: from a graph's first replay on, CUDA
    graph trees hand back the same cached output tensors at every replay, which the tree itself keeps alive, so
    they would always look kept. Judged on the calls before the first replay (the warm-up, the recording)."""
    cached = getattr(torch._C, "_is_cached_tensor", None)
    return [t for t in tensors if cached is None or not cached(t)]


def _accumulating(state, module):
    """Whether this training call of the model, among its first 16, follows another with no optimizer step
    between and their gradients kept: a second micro-batch of gradient accumulation. A step is a torch.optim
    optimizer's, or any change made in place to the trainable parameters (their version counters): a
    hand-written optimizer (a loop of mul_ and addcdiv_ over the parameters) has no step to count."""
    state["train_calls"] += 1
    if state["train_calls"] > 16:
        return False
    trainable = [p for p in module.parameters() if p.requires_grad]
    versions = sum(p._version for p in trainable)
    steps, state["steps"] = state["steps"], _optimizer_steps[0]
    updated, state["versions"] = versions != state.get("versions"), versions
    if state["train_calls"] < 2 or steps != _optimizer_steps[0] or updated:
        return False
    return any(p.grad is not None for p in trainable)


def _graphs_off(state, original, reason):
    """CUDA graphs are given up while the compile stays: the guarded forward's state (_guarded) gets `original`
    compiled again without them, with no way of calling it compiled yet, and the plan's cuda_graphs fixes are
    rolled back; the fixes the compile stands for otherwise (fusion, padding) stay. Returns the new state's
    `graphs`, False."""
    state["graphs"], state["changed"], state["compiled_ways"] = False, torch.compile(original, mode="default"), set()
    fixes = _applied.get("compile", [])
    for fix in [f for f in fixes if f.get("kind") == "cuda_graphs"]:
        fixes.remove(fix)
        _report(fix, f"rolled back: {reason}; the model is compiled again without them")
    return state["graphs"]


def _checkpoint_model(module):
    """Checkpoints the model's blocks; returns the _Change made. A model that has its own switch (transformers'
    gradient_checkpointing_enable) gets it, since the model knows what must change with it (its KV cache,
    which a recomputation outside it would fill twice)."""
    name = type(module).__name__
    if getattr(module, "supports_gradient_checkpointing", False) and hasattr(module, "gradient_checkpointing_enable"):
        module.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": False})
        # Not switched off for the timing check: the switch sets attributes a compiled forward guards on. Undone
        # when rolled back for good (a compiled forward then compiles once more).
        return _Change("checkpoint", f"applied: {name}.gradient_checkpointing_enable() (non-reentrant)", False,
                       getattr(module, "gradient_checkpointing_disable", None))
    blocks = _blocks(module)
    if not blocks:
        raise ValueError(f"{name} has no run of like blocks to checkpoint")
    for block in blocks:
        block.forward = _checkpointed(block, block.forward)
    return _Change("checkpoint", f"applied: {len(blocks)} blocks of {name} checkpointed")


def _is_block_run(m):
    return (isinstance(m, (torch.nn.ModuleList, torch.nn.Sequential)) and len(m) > 1
            and len({type(child) for child in m}) == 1
            and all(any(True for _ in child.children()) for child in m))


def _blocks(module):
    """The children of every ModuleList or Sequential of blocks of one type (modules made of modules), the
    outermost where such runs nest: a transformer's layers, every stage's bottlenecks of a ResNet."""
    if _is_block_run(module):
        return list(module)
    return [block for child in module.children() for block in _blocks(child)]


def _checkpointed(block, forward):
    """BLOCK's forward under torch.utils.checkpoint (non-reentrant: the recomputation draws dropout's random
    numbers again as the forward drew them). The recomputation in the backward runs the forward once more, and
    a forward that changes the block's buffers (BatchNorm's running statistics and count in training) would
    change them twice: the buffers are put back as the forward left them once it is done. A block whose first
    checkpointed call leaves its buffers alone runs without that from then on (torch.compile does not take a
    checkpoint's own contexts)."""
    from torch.utils.checkpoint import checkpoint

    buffers = list(block.buffers())
    changes = [bool(buffers)]  # whether the forward may change the buffers: until a call shows it does not

    def contexts():
        return contextlib.nullcontext(), _BuffersPutBack(buffers)

    def run(*args, **kwargs):
        if not torch.is_grad_enabled() or "checkpoint" not in _active:
            return forward(*args, **kwargs)
        if not changes[0]:
            return checkpoint(forward, *args, use_reentrant=False, **kwargs)
        versions = [b._version for b in buffers]
        out = checkpoint(forward, *args, use_reentrant=False, context_fn=contexts, **kwargs)
        changes[0] = versions != [b._version for b in buffers]
        return out

    return run


class _BuffersPutBack:
    """Around a checkpoint's recomputation: the buffers as they were before it, put back after it (also when
    torch stops the recomputation early, once it has what the backward needs)."""

    def __init__(self, buffers):
        self.buffers = buffers

    def __enter__(self):
        self.saved = [b.detach().clone() for b in self.buffers]

    def __exit__(self, *exc):
        with torch.no_grad():
            for b, saved in zip(self.buffers, self.saved):
                b.copy_(saved)
        return False
