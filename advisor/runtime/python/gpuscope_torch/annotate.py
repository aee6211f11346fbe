"""NVTX ranges for modules and optimizer steps, through PyTorch's global hooks.

Forward: a range from each module's forward pre-hook to its forward hook. Backward: a range from the
moment the gradient of the module's output arrives (a hook on the output tensor) to the moment the
gradients of all its inputs that need one are computed (hooks on the input tensors), or, when no input
needs a gradient (the first layer), until its parameters' gradients are accumulated. Ranges use NVTX
start/end, not push/pop, because backward ranges need not nest on one thread. A range left open (a
module whose backward never ran) is closed at the next optimizer step or forward of a root module.
"""

import threading
import weakref

import torch

from . import warn

_names = weakref.WeakKeyDictionary()  # module -> qualified name
_local = threading.local()  # .stack: (module, its inputs that need a gradient) whose forward is running
_open_backward = {}  # range id -> True, for ranges still open
_param_hooks = weakref.WeakKeyDictionary()  # module -> [handles]: parameters' post-accumulate hooks
_lock = threading.Lock()
_failed = False
root_forward_observers = []  # called with each root module when its forward begins (memory.py)
_compiling = getattr(getattr(torch, "compiler", None), "is_compiling", lambda: False)


def install():
    from torch.nn.modules import module as nn_module
    from torch.optim.optimizer import register_optimizer_step_post_hook, register_optimizer_step_pre_hook

    nn_module.register_module_forward_pre_hook(_forward_pre)
    try:  # always_call: the range is closed even when forward raises
        nn_module.register_module_forward_hook(_forward_post, always_call=True)
    except TypeError:  # PyTorch before 2.1
        nn_module.register_module_forward_hook(_forward_post)
    register_optimizer_step_pre_hook(_step_pre)
    register_optimizer_step_post_hook(_step_post)


def qualified_name(module):
    """The module's name from its root ("GPT2LMHeadModel.transformer.h.0"), naming the tree on first sight."""
    name = _names.get(module)
    if name is not None:
        return name
    stack = _stack()
    if stack:  # a module not registered under the running one (made on the fly): name it below its caller
        caller = stack[-1][0]
        name = f"{_names.get(caller, type(caller).__name__)}.{type(module).__name__}"
        _names[module] = name
        return name
    root = type(module).__name__
    for child_name, child in module.named_modules():
        _names.setdefault(child, f"{root}.{child_name}" if child_name else root)
    return _names[module]


def _stack():
    stack = getattr(_local, "stack", None)
    if stack is None:
        stack = _local.stack = []
    return stack


def _guarded(hook):
    """Runs a hook so that no error of the bridge reaches the program; after the first, the bridge stops."""

    def run(*args, **kwargs):
        global _failed
        if _failed or _compiling():
            return None
        try:
            return hook(*args, **kwargs)
        except Exception as error:
            _failed = True
            warn(f"module annotation stopped after an error: {error!r}")
            return None

    return run


def _tensors(value, out):
    """The tensors that need a gradient in a module's inputs or outputs (tuples, lists and dicts walked)."""
    if isinstance(value, torch.Tensor):
        if value.requires_grad:
            out.append(value)
    elif isinstance(value, (tuple, list)):
        for v in value:
            _tensors(v, out)
    elif isinstance(value, dict):
        for v in value.values():
            _tensors(v, out)
    return out


@_guarded
def _forward_pre(module, args):
    name = qualified_name(module)
    stack = _stack()
    if not stack:
        _close_open_backward()
        for observe in root_forward_observers:
            observe(module)
    stack.append((module, _tensors(args, []) if torch.is_grad_enabled() else []))
    torch.cuda.nvtx.range_push(f"{name} (forward)")


@_guarded
def _forward_post(module, args, output):
    stack = _stack()
    if not stack or stack[-1][0] is not module:
        return  # the pre-hook did not run for this call (hooks installed mid-forward)
    _, inputs = stack.pop()
    torch.cuda.nvtx.range_pop()
    if torch.is_grad_enabled():
        _arm_backward(module, inputs, _tensors(output, []))


def _arm_backward(module, inputs, outputs):
    if not outputs:
        return
    name = qualified_name(module)
    state = {"range": None, "waiting": len(inputs)}

    def begin(_grad):
        if state["range"] is None and not _failed:
            state["range"] = torch.cuda.nvtx.range_start(f"{name} (backward)")
            with _lock:
                _open_backward[state["range"]] = True

    def input_done(_grad):
        state["waiting"] -= 1
        if state["waiting"] == 0:
            _end(state)

    fired = [False]

    def begin_once(grad):
        if not fired[0]:
            fired[0] = True
            begin(grad)

    for t in outputs:
        t.register_hook(_guarded(begin_once))
    if inputs:
        for t in inputs:
            t.register_hook(_guarded(input_done))
    else:
        _arm_parameters(module, state)


def _arm_parameters(module, state):
    """Ends the module's backward range when its last parameter gradient is accumulated."""
    params = [p for p in module.parameters() if p.requires_grad]
    if not params:
        return
    state["params_left"] = len(params)
    handles = []

    def accumulated(_param):
        state["params_left"] -= 1
        if state["params_left"] == 0:
            _end(state)
            for h in handles:
                h.remove()

    for p in params:
        handles.append(p.register_post_accumulate_grad_hook(_guarded(accumulated)))


def _end(state):
    rid = state.get("range")
    if rid is None:
        return
    state["range"] = None
    with _lock:
        if _open_backward.pop(rid, None):
            torch.cuda.nvtx.range_end(rid)


def _close_open_backward():
    with _lock:
        ids = list(_open_backward)
        _open_backward.clear()
    for rid in ids:
        torch.cuda.nvtx.range_end(rid)


_step_ranges = threading.local()


@_guarded
def _step_pre(optimizer, args, kwargs):
    _close_open_backward()
    _step_ranges.depth = getattr(_step_ranges, "depth", 0) + 1
    torch.cuda.nvtx.range_push(f"optimizer.step ({type(optimizer).__name__})")


@_guarded
def _step_post(optimizer, args, kwargs):
    if getattr(_step_ranges, "depth", 0) > 0:
        _step_ranges.depth -= 1
        torch.cuda.nvtx.range_pop()
