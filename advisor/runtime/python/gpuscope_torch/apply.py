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
                 shape padding, turned on for gemm_padding).
  attention      needs the model's code changed (scaled_dot_product_attention): reported, not applied.
What was applied, and what was not and why, is printed on stderr: when the program starts for the fixes
that take effect then, at the model's first forward for those applied to the model, and at exit for those
that never took effect. A compiled forward that fails (the compiler or a graph capture raising) is rolled back:
that call and every later one run as the script wrote them, and "rolled back: ERROR" is printed (a program with no nn.Module, whose step is a plain function, has no model to
compile, checkpoint or run under autocast: it is told so, never that the fix was applied).
"""

import atexit

import json
import os
import sys
import threading

import torch

from . import warn

_seen = set()  # ids of every module of the models already handled (so a recomputed block is no new root)
_depth = threading.local()  # .value: how many module forwards are running on this thread
_autocast = []  # a stack of entered autocast contexts, one per running root forward
_root_fixes = []  # (kind, fix) applied to each root module at its first forward
_waiting = {}  # id(fix) -> (kind, fix): fixes for the model not yet applied to any
_applied = {}  # kind -> the plan's fixes applied to the model as that kind of change


def install(plan_path):
    try:
        with open(plan_path) as f:
            plan = json.load(f)
    except (OSError, ValueError) as error:
        warn(f"apply: cannot read the plan {plan_path}: {error}")
        return
    if plan.get("format") != "gpuscope-plan" or plan.get("version") != 1:
        warn(f"apply: {plan_path} is not a gpuscope plan of version 1")
        return
    for fix in plan.get("fixes", []):
        handler = _HANDLERS.get(fix.get("kind"))
        try:
            note = handler(fix) if handler else "not applied: gpuscope does not know this kind of fix"
        except Exception as error:  # a fix that cannot be applied must not stop the program
            note = f"not applied: {error!r}"
        _report(fix, note)
    if _root_fixes:
        from torch.nn.modules import module as nn_module

        nn_module.register_module_forward_pre_hook(_root_pre)
        nn_module.register_module_forward_hook(_root_post, always_call=True)
        atexit.register(_report_never_applied)


def _wait_for_model(kind, fix):
    """A fix applied to the model at its first forward: said to be applied only once it is."""
    if not any(k == kind for k, _ in _root_fixes):
        _root_fixes.append((kind, fix))
    _waiting[id(fix)] = (kind, fix)
    return "waiting for the model's first forward"


def _report_never_applied():
    for _, fix in _waiting.values():
        _report(fix, "not applied: no nn.Module's forward ran (a step written as a plain function has no model to "
                     "apply it to; apply it by hand, e.g. torch.compile of the step function)")
    _waiting.clear()


def _report(fix, note):
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
    if fix.get("kind") == "gemm_padding":
        import torch._inductor.config as inductor_config

        inductor_config.shape_padding = True
    _wait_for_model("compile", fix)
    if fix.get("kind") == "cuda_graphs":  # the one compile uses reduce-overhead
        _root_fixes[:] = [(k, fix if k == "compile" else f) for k, f in _root_fixes]
    return "waiting for the model's first forward: one torch.compile with the other compiler fixes"


def _code_change(fix):
    return "not applied: needs the model's code changed (the advice shows how)"


_HANDLERS = {
    "precision": _precision,
    "optimizer": _optimizer,
    "allocator": _allocator,
    "data_loader": _data_loader,
    "checkpoint": _checkpoint,
    "cuda_graphs": _compile,
    "fusion": _compile,
    "gemm_padding": _compile,
    "attention": _code_change,
}


def _root_pre(module, args):
    # Under torch.compile these hooks are traced: a side effect here (even the depth count) would break the
    # graph, and a checkpointed block would then run outside it. The root's own call is never compiled.
    if torch.compiler.is_compiling():
        return
    _depth.value = getattr(_depth, "value", 0) + 1
    if _depth.value != 1:
        return
    if id(module) not in _seen:
        _seen.update(id(m) for m in module.modules())
        # A module with no parameters (a loss, an activation called at top level) is no model to fix.
        model = any(True for _ in module.parameters())
        for kind, fix in _root_fixes if model else ():
            try:
                note = _at_first_forward(kind, fix, module)
            except Exception as error:
                note = f"not applied to {type(module).__name__}: {error!r}"
            for key, (waiting_kind, waiting_fix) in list(_waiting.items()):
                if waiting_kind == kind:  # every fix this one change stands for (fusion and graphs: one compile)
                    _report(waiting_fix, note)
                    _applied.setdefault(kind, []).append(waiting_fix)
                    del _waiting[key]
    if any(kind == "autocast" for kind, _ in _root_fixes):
        context = torch.autocast("cuda", dtype=torch.bfloat16)
        context.__enter__()
        _autocast.append(context)


def _root_post(module, args, output):
    if torch.compiler.is_compiling():
        return
    _depth.value = max(0, getattr(_depth, "value", 0) - 1)
    if _depth.value == 0 and _autocast:
        _autocast.pop().__exit__(None, None, None)


def _at_first_forward(kind, fix, module):
    """Applies one kind of fix to a root module; returns what was done."""
    if kind == "checkpoint":
        return _checkpoint_model(module)
    if kind == "autocast":
        return f"applied: each forward of {type(module).__name__} runs under torch.autocast(bfloat16)"
    mode = "reduce-overhead" if fix.get("kind") == "cuda_graphs" else "default"
    module.forward = _guarded(kind, torch.compile(module.forward, mode=mode), module.forward)
    return f"applied: {type(module).__name__}.forward compiled (mode {mode!r})"


def _guarded(kind, changed, original):
    """A forward with a fix in it, guarded: the first error raised inside it (a compile or graph-capture failure,
    a dtype error, out of memory) switches the fix off, runs the call again as the script wrote it, and every
    later call too; the roll-back is said on stderr. The program goes on as it would have without gpuscope."""
    failed = []

    def forward(*args, **kwargs):
        if not failed:
            try:
                return changed(*args, **kwargs)
            except Exception as error:
                failed.append(error)
                first_line = (str(error).strip().splitlines() or [""])[0]
                for fix in _applied.get(kind, []):
                    _report(fix, f"rolled back: {type(error).__name__}: {first_line[:300]}")
        return original(*args, **kwargs)

    return forward


def _checkpoint_model(module):
    """Checkpoints the model's blocks; returns what was done. A model that has its own switch (transformers'
    gradient_checkpointing_enable) gets it, since the model knows what must change with it (its KV cache,
    which a recomputation outside it would fill twice)."""
    name = type(module).__name__
    if getattr(module, "supports_gradient_checkpointing", False) and hasattr(module, "gradient_checkpointing_enable"):
        module.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": False})
        return f"applied: {name}.gradient_checkpointing_enable() (non-reentrant)"
    blocks = _blocks(module)
    if not blocks:
        return f"not applied: {name} has no run of like blocks to checkpoint"
    for block in blocks:
        block.forward = _checkpointed(block.forward)
    return f"applied: {len(blocks)} blocks of {name} checkpointed"


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


def _checkpointed(forward):
    from torch.utils.checkpoint import checkpoint

    def run(*args, **kwargs):
        if not torch.is_grad_enabled():
            return forward(*args, **kwargs)
        return checkpoint(forward, *args, use_reentrant=False, **kwargs)

    return run
