"""NVTX ranges for modules and optimizer steps, through PyTorch's global hooks.

Forward: a range from each module's forward pre-hook to its forward hook. Backward: a range from the
moment the gradient of the module's output arrives to the moment the gradients of all its inputs that
need one are computed, or, when no input needs a gradient (the first layer), until its parameters'
gradients are accumulated. Ranges use NVTX start/end, not push/pop, because backward ranges need not nest
on one thread. A range left open (a module whose backward never ran) is closed at the next optimizer step
or forward of a root module.

This runs on every module call, so it is kept cheap (tests/bench/torch_bridge_cpu_overhead.py measures
it): the backward hooks go on the autograd nodes that produce the tensors (Node.register_prehook, about a
third of Tensor.register_hook's cost, and it fires at the same step of the backward pass, with the
tensor's gradient among the node's), on the tensor only where there is no node (a leaf); one object per
module call holds its backward range's state; range names are made once per module.

Cheap is still not free: a host-bound model runs markedly slower under the hooks, and the advisor would
read that cost as the program's own. So only the first GPUSCOPE_TORCH_STEPS steps (default 5: optimizer
steps, or calls of a root module where no optimizer steps) are annotated in full; then the module hooks
are removed and only the root modules' forward ranges and the optimizer step's stay, which open the steps.
An NVTX mark, HOOKS_REMOVED_MARK, says when: the analyzer takes module attribution from the steps before
it and timings from the steps after it.

A root module handed back, over its first calls, memory its previous call returned (an RNN's hidden state fed
into the next call, detached) gets one NVTX mark, STATE_CARRIED_MARK and its name: a replay of CUDA graphs would
overwrite that state, and the advisor leaves them out of `gpuscope apply`'s plan.

Every batch a torch.utils.data.DataLoader hands out gets a range too (DATA_LOADER_RANGE, from the iterator's
__next__ call to its return, for the whole run: one range per batch costs about what one module call's hooks
do): with workers it is the main thread's wait for a batch, without them the loading itself. The analyzer
reads the GPU's idle time inside them as waiting for input (torch.profiler marks the same call).
"""

import collections
import functools
import os
import threading
import weakref

import torch

from . import compiled, values, warn

_names = weakref.WeakKeyDictionary()  # module -> (qualified name, its forward range's name, its backward's)
_local = threading.local()  # .stack: (module, its range names, its inputs needing a gradient) in forward
_open_backward = {}  # range id -> True, for ranges still open
_param_waiters = {}  # id(parameter) -> (weak reference to it, deque of _BackwardRange waiting for its gradient)
_lock = threading.Lock()
_failed = False
HOOKS_REMOVED_MARK = "gpuscope: module hooks removed"
# Under `gpuscope apply --record`: where apply's timing check of the fixes ended (the analyzer times the steps
# after it, not the check's calls that compile or run as the script wrote them).
APPLY_CHECK_DONE_MARK = "gpuscope: apply check done"
APPLY_AS_WRITTEN_MARK = "gpuscope: apply check runs the model as written"
# Followed by the root module's name: its forward was handed memory its previous call returned (an RNN's hidden
# state fed back, a cache), which a replay of CUDA graphs would overwrite. Judged over each root's first
# values.STATE_CALLS calls, as apply's guard judges them (positional arguments: a global hook sees no keyword ones),
# said once.
STATE_CARRIED_MARK = "gpuscope: state carried into "
_state = weakref.WeakKeyDictionary()  # root module -> [its calls, storages of its latest outputs, said]
# Around each DataLoader iterator's __next__.
DATA_LOADER_RANGE = "DataLoader.__next__"
_DEFAULT_STEPS = 5
# Micro-batches per optimizer step allowed for (gradient accumulation) before a training model that has not
# stepped an optimizer yet has its calls counted as steps.
_CALLS_PER_STEP_IN_TRAINING = 16
_steps_to_annotate = None  # None: every step ("all"); else how many before the hooks go
_optimizer_steps = 0
_optimizers_made = 0  # torch.optim optimizers constructed (their subclasses: apex's, bitsandbytes', ...)
_root_calls = weakref.WeakKeyDictionary()  # root module -> its forward calls while annotating
_handles = []  # the global hooks' and parameters' handles, removed with the hooks
_roots_hooked = weakref.WeakSet()  # root modules with forward hooks of their own, after the switch
_hook_free = False
root_forward_observers = []  # called with each root module when its forward begins (memory.py)
_compiling = getattr(getattr(torch, "compiler", None), "is_compiling", lambda: False)


def install(steps=None):
    """steps: how many steps to annotate in full ("all" or a whole number; default GPUSCOPE_TORCH_STEPS)."""
    from torch.nn.modules import module as nn_module
    from torch.optim.optimizer import register_optimizer_step_post_hook, register_optimizer_step_pre_hook

    global _steps_to_annotate
    _steps_to_annotate = _parse_steps(os.environ.get("GPUSCOPE_TORCH_STEPS", "") if steps is None else steps)
    _handles.append(nn_module.register_module_forward_pre_hook(_forward_pre))
    try:  # always_call: the range is closed even when forward raises
        _handles.append(nn_module.register_module_forward_hook(_forward_post, always_call=True))
    except TypeError:  # PyTorch before 2.1
        _handles.append(nn_module.register_module_forward_hook(_forward_post))
    register_optimizer_step_pre_hook(_step_pre)
    register_optimizer_step_post_hook(_step_post)
    _count_optimizers()
    _annotate_data_loader()


def _count_optimizers():
    """Counts the optimizers the program makes: one that makes none updates its weights by hand, and each of its
    training calls is a step (a per-parameter AdamW written out kept the hooks 80 calls, +40 % on every step)."""
    optimizer = torch.optim.Optimizer
    original = optimizer.__init__

    @functools.wraps(original)
    def init(self, *args, **kwargs):
        global _optimizers_made
        _optimizers_made += 1
        return original(self, *args, **kwargs)

    optimizer.__init__ = init


def _annotate_data_loader():
    """Wraps the DataLoader iterators' __next__ (defined once, on their base class) in DATA_LOADER_RANGE; an error
    of the bridge's NVTX calls never reaches the loop (_guarded)."""
    from torch.utils.data import dataloader

    original = dataloader._BaseDataLoaderIter.__next__

    @functools.wraps(original)
    def next_batch(self):
        pushed = _loader_range_push()
        try:
            return original(self)
        finally:
            if pushed:
                _loader_range_pop()

    dataloader._BaseDataLoaderIter.__next__ = next_batch


def _parse_steps(text):
    text = str(text).strip()
    if text == "all":
        return None
    if not text:
        return _DEFAULT_STEPS
    try:
        steps = int(text)
        if steps >= 1:
            return steps
    except ValueError:
        pass
    warn(f"GPUSCOPE_TORCH_STEPS={text!r} is not a whole number of steps above 0 or 'all': using {_DEFAULT_STEPS}")
    return _DEFAULT_STEPS


def qualified_name(module):
    """The module's name from its root ("GPT2LMHeadModel.transformer.h.0"), naming the tree on first sight."""
    return _range_names(module)[0]


def _range_names(module):
    names = _names.get(module)
    if names is not None:
        return names
    stack = _stack()
    if stack:  # a module not registered under the running one (made on the fly): name it below its caller
        caller = stack[-1][0]
        caller_name = _names[caller][0] if caller in _names else type(caller).__name__
        names = _names[module] = _named(f"{caller_name}.{type(module).__name__}")
        return names
    root = type(module).__name__
    for child_name, child in module.named_modules():
        if child not in _names:
            _names[child] = _named(f"{root}.{child_name}" if child_name else root)
    return _names[module]


def _named(name):
    return name, f"{name} (forward)", f"{name} (backward)"


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
            try:  # so that the program does not keep paying for hooks that do nothing now
                _drop_module_hooks()
            except Exception:
                pass
            return None

    return run


def _drop_module_hooks():
    """The global module hooks and the parameters' hooks go."""
    for handle in _handles:
        handle.remove()
    _handles.clear()
    _param_waiters.clear()


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
    if _hook_free:  # removed by stop_module_hooks in this very call's hooks
        _root_pre(module, args)
        return
    stack = _stack()
    if not stack and _weightless(module):
        return  # no model: a transform a DataLoader calls per sample (its post-hook finds the stack empty)
    names = _range_names(module)
    if not stack:
        _close_open_backward()
        if compiled(module):
            # The compiler would trace the hooks into the compiled code (where they do nothing) and guard on them:
            # removed after the annotated steps, they made a compiled GPT compile again inside the program's
            # timed steps (58.8 ms a step recorded against 11.9 plain, H200, 2026-11-27). They go before it runs.
            for observe in root_forward_observers:
                observe(module)
            stop_module_hooks(module)
            _root_pre(module, args)
            return
        if _annotated_enough(module):
            _remove_module_hooks()
            _root_pre(module, args)  # this call's range too: its own post-hook, just added, closes it
            return
        for observe in root_forward_observers:
            observe(module)
        _note_handed(module, args)
    stack.append((module, names, _tensors(args, []) if torch.is_grad_enabled() else []))
    torch.cuda.nvtx.range_push(names[1])


def _note_handed(root, args):
    """At a root's forward: whether it is handed what its previous call returned (STATE_CARRIED_MARK)."""
    seen = _state.setdefault(root, [0, [], False])
    seen[0] += 1
    if seen[0] <= values.STATE_CALLS and not seen[2] and values.carried(values.tensors(args), seen[1]):
        seen[2] = True
        torch.cuda.nvtx.mark(STATE_CARRIED_MARK + _range_names(root)[0])


def _note_returned(root, output):
    seen = _state.get(root)
    if seen is not None and seen[0] < values.STATE_CALLS and not seen[2]:  # a later judged call may be handed it
        seen[1] = values.storages(values.tensors(output))


def _weightless(module):
    """A module with no parameters or buffers anywhere inside: torchvision's transforms, an activation called on
    its own. Such a root is no model, and its calls (per sample, in a DataLoader) are no steps."""
    return next(module.parameters(), None) is None and next(module.buffers(), None) is None


@_guarded
def _forward_post(module, args, output):
    stack = _stack()
    if not stack or stack[-1][0] is not module:
        return  # the pre-hook did not run for this call (hooks installed mid-forward)
    _, names, inputs = stack.pop()
    torch.cuda.nvtx.range_pop()
    if not stack:
        _note_returned(module, output)
    if torch.is_grad_enabled():
        outputs = _tensors(output, [])
        if outputs:
            _BackwardRange(module, names[2], inputs, outputs)


def _gradient_points(tensors):
    """Where each tensor's gradient can be watched, each once: the autograd node that made it (one node may
    make several of the tensors), or the tensor itself where there is none (a leaf)."""
    points = []
    for t in tensors:
        point = t.grad_fn
        if point is None:
            point = t
        for seen in points:
            if seen is point:
                break
        else:
            points.append(point)
    return points


def _watch(point, hook):
    """Calls hook when the gradient reaches point (a node: before it runs; a leaf: when it is computed)."""
    if isinstance(point, torch.Tensor):
        once = _Once(hook)
        once.handle = point.register_hook(once)
    else:
        point.register_prehook(hook)


class _Once:
    """A hook on a leaf tensor, removed when it fires. A node's hooks go with the autograd graph, but a
    leaf outlives it (an input reused at every step, a parameter passed to a module): its hooks would pile
    up, one more per step, each called at every backward."""

    __slots__ = ("hook", "handle")

    def __init__(self, hook):
        self.hook = hook

    def __call__(self, grad):
        if not _compiling():  # being traced: no side effect (the hook itself returns at once too)
            self.handle.remove()
        self.hook(grad)


class _BackwardRange:
    """One module call's backward range: started when the first of its outputs' gradients arrives, ended
    when its inputs' gradients are all computed, or its parameters' accumulated where no input needs one.
    Held only by the hooks: the autograd graph's, and its parameters' waiting lists."""

    __slots__ = ("name", "range", "started", "waiting", "params_left")

    def __init__(self, module, name, inputs, outputs):
        self.name = name
        self.range = None
        self.started = False
        for point in _gradient_points(outputs):
            _watch(point, self.begin)
        if inputs:
            points = _gradient_points(inputs)
            self.waiting = len(points)
            for point in points:
                _watch(point, self.input_done)
        else:
            self._watch_parameters(module)

    def _watch_parameters(self, module):
        params = [p for p in module.parameters() if p.requires_grad]
        self.params_left = len(params)
        for p in params:
            if p.is_leaf:
                _waiters(p).append(self)
            else:  # FSDP's use_orig_params: during the forward a parameter is a view of its flat parameter
                _watch(p, self.accumulated_view)

    @_guarded
    def accumulated_view(self, _grad):
        self.accumulated()

    @_guarded
    def begin(self, _grad):
        if self.started:  # several outputs: the first gradient begins the range
            return
        self.started = True
        self.range = torch.cuda.nvtx.range_start(self.name)
        with _lock:
            _open_backward[self.range] = True

    @_guarded
    def input_done(self, _grad):
        self.waiting -= 1
        if self.waiting == 0:
            self._end()

    def accumulated(self):
        self.params_left -= 1
        if self.params_left == 0:
            self._end()

    def _end(self):
        rid = self.range
        if rid is None:
            return
        self.range = None
        with _lock:
            if _open_backward.pop(rid, None):
                torch.cuda.nvtx.range_end(rid)


def _waiters(param):
    """The ranges waiting for the parameter's gradient to be accumulated. The parameter gets one hook on
    first need, kept until the module hooks are removed: registering a hook is what costs, and a root module
    waits for all its parameters at every forward. Keyed by id (a tensor's == compares elements), checked
    against a weak reference."""
    entry = _param_waiters.get(id(param))
    if entry is None or entry[0]() is not param:
        key = id(param)
        waiters = collections.deque()  # appended in forward, emptied by the autograd engine's thread

        def forget(ref):
            if _param_waiters.get(key, (None,))[0] is ref:
                del _param_waiters[key]

        entry = _param_waiters[key] = (weakref.ref(param, forget), waiters)
        _handles.append(param.register_post_accumulate_grad_hook(_guarded(lambda _param: _accumulated(waiters))))
    return entry[1]


def _accumulated(waiters):
    """Each range waiting for this gradient counts it, once: a range waits for one backward pass."""
    while waiters:
        try:
            waiting = waiters.popleft()
        except IndexError:  # emptied by another thread meanwhile
            return
        waiting.accumulated()


def _close_open_backward():
    with _lock:
        ids = list(_open_backward)
        _open_backward.clear()
    for rid in ids:
        torch.cuda.nvtx.range_end(rid)


@_guarded
def _loader_range_push():
    torch.cuda.nvtx.range_push(DATA_LOADER_RANGE)
    return True


@_guarded
def _loader_range_pop():
    torch.cuda.nvtx.range_pop()


_step_ranges = threading.local()


def _open_steps():
    """This thread's optimizer steps in progress, innermost last: whether each one's range is open now."""
    steps = getattr(_step_ranges, "open", None)
    if steps is None:
        steps = _step_ranges.open = []
    return steps


@_guarded
def _step_pre(optimizer, args, kwargs):
    _close_open_backward()
    name = f"optimizer.step ({type(optimizer).__name__})"
    closure = kwargs.get("closure", args[1] if len(args) > 1 else None)  # args: (optimizer, closure?)
    if not callable(closure):
        _open_steps().append(True)
        torch.cuda.nvtx.range_push(name)
        return None
    # step(closure) runs the closure first (Lightning's training step: forward, backward), then updates: the
    # range holds only the update, so that the model's work is not counted as the optimizer's.
    _open_steps().append(False)
    wrapped = _outside_step_range(closure, name)
    if "closure" in kwargs:
        return args, dict(kwargs, closure=wrapped)
    return (args[0], wrapped, *args[2:]), kwargs


def _outside_step_range(closure, name):
    def run(*args, **kwargs):
        steps = _open_steps()
        if steps and steps[-1]:
            torch.cuda.nvtx.range_pop()
            steps[-1] = False
        try:
            result = closure(*args, **kwargs)
        except BaseException:
            if steps:
                steps.pop()  # the step raises too: no post-hook comes for it
            raise
        if steps and not steps[-1]:
            torch.cuda.nvtx.range_push(name)
            steps[-1] = True
        return result

    return run


@_guarded
def _step_post(optimizer, args, kwargs):
    global _optimizer_steps
    _optimizer_steps += 1
    steps = _open_steps()
    if steps and steps.pop():
        torch.cuda.nvtx.range_pop()


def hook_free():
    """Whether the module hooks are gone (memory.py then notes less per step too)."""
    return _hook_free


def _annotated_enough(root):
    """At a root module's forward: whether the steps annotated so far are enough. Counted in optimizer steps;
    where none has run yet, in calls of this root (inference)."""
    calls = _root_calls[root] = _root_calls.get(root, 0) + 1
    if _steps_to_annotate is None:
        return False
    if _optimizer_steps:
        return _optimizer_steps >= _steps_to_annotate
    # No optimizer step yet: a model training with an optimizer may be accumulating gradients over several calls
    # before its first one, so its calls count for a step only past that many; in inference, or training with no
    # optimizer made, each call is a step.
    accumulating = root.training and torch.is_grad_enabled() and _optimizers_made
    return calls > _steps_to_annotate * (_CALLS_PER_STEP_IN_TRAINING if accumulating else 1)


def _remove_module_hooks():
    """Leaves only the root modules' forward ranges: a pre- and a post-hook on each root seen so far (a root
    first called later gets none). Safe inside a module's hooks: PyTorch iterates over a copy of them."""
    global _hook_free
    _hook_free = True
    _drop_module_hooks()
    _close_open_backward()
    for root in list(_root_calls):
        _hook_root(root)
    torch.cuda.nvtx.mark(HOOKS_REMOVED_MARK)


def apply_check_done():
    """Called by apply when its timing check of a model ends, in a recorded run."""
    torch.cuda.nvtx.mark(APPLY_CHECK_DONE_MARK)


def apply_check_as_written():
    """Called by apply when its timing check switches the fixes off to run the model as written, in a recorded
    run: up to the check's end, gpuscope's own calls, which the analysis leaves out of the program's steps and peak."""
    torch.cuda.nvtx.mark(APPLY_AS_WRITTEN_MARK)


def stop_module_hooks(root):
    """Called by apply at a root module's first call, when it compiles that module: the module hooks go at
    once, before the compiler traces them into the compiled code (removing them later fails its guards and
    compiles it again, inside the steps apply times). The run keeps the root's forward ranges and no module
    attribution."""
    if _handles and not _hook_free:
        _root_calls.setdefault(root, 0)
        _remove_module_hooks()


def _hook_root(root):
    if root in _roots_hooked:
        return
    _roots_hooked.add(root)
    root.register_forward_pre_hook(_root_pre)
    try:
        root.register_forward_hook(_root_post, always_call=True)
    except TypeError:  # PyTorch before 2.1
        root.register_forward_hook(_root_post)


@_guarded
def _root_pre(module, args):
    stack = _stack()
    if not stack:  # a root module called inside another's forward is not a step's root there
        for observe in root_forward_observers:
            observe(module)
        _note_handed(module, args)
        torch.cuda.nvtx.range_push(_range_names(module)[1])
    stack.append(module)


@_guarded
def _root_post(module, args, output):
    stack = _stack()
    if stack and stack[-1] is module:
        stack.pop()
        if not stack:
            _note_returned(module, output)
            torch.cuda.nvtx.range_pop()
