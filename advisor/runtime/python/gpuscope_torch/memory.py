"""The caching allocator's events, with what the tensors are, written beside the trace at exit.

PyTorch's caching allocator hands tensors out of segments it keeps, so CUPTI sees segments, not tensors.
Its memory history (torch.cuda.memory._record_memory_history) records every tensor allocation and free
with its address, size, stream and time; the bridge adds the addresses of parameters, buffers,
gradients and optimizer state as it sees them, so the analyzer can tell every category exactly. The file,
torch-<pid>.json in the recording's folder, is a PyTorch memory snapshot (JSON) with a "gpuscope" key;
`gpuscope record` merges it into the process's trace.
"""

import atexit
import functools
import json
import os
import sys
import time

import torch

from . import annotate, warn

_MAX_EVENTS = int(os.environ.get("GPUSCOPE_TORCH_MAX_EVENTS", "2000000"))
_MAX_ROLES = 2_000_000
_roles = []  # [time_us, device, address, bytes, role, name]
_named_roots = set()  # ids of root modules whose parameters were recorded
_param_names = {}  # id(parameter) -> qualified name
_last_state = {}  # (id(parameter), key) -> (address, bytes): optimizer state is recorded when it moves
_recording = False


def install(output_dir):
    from torch.optim.optimizer import register_optimizer_step_post_hook, register_optimizer_step_pre_hook

    # At CUDA's initialization, not before: importing torch must not initialize CUDA (a program may fork).
    torch.cuda._lazy_call(_start)
    atexit.register(_write, output_dir)
    annotate.root_forward_observers.append(_guarded(_on_root_forward))
    register_optimizer_step_pre_hook(_guarded(_on_step_pre))
    register_optimizer_step_post_hook(_guarded(_on_step_post))


def _guarded(fn):
    warned = set()

    def run(*args, **kwargs):
        try:
            if _recording:
                fn(*args, **kwargs)
        except Exception as error:
            if repr(error) not in warned:  # once: a hook runs every step
                warned.add(repr(error))
                warn(f"tensor roles not recorded: {error!r}")

    return run


# Each entry costs the program's thread 0.3-0.4 us (bench/cost/allocator_history_cost.py), and every tensor's free
# is two: the free asked for, and the free done once the streams that used the block are through with it. The
# analyzer reads the second alone (a block is back in the cache then), so the first is not recorded where PyTorch
# can skip it (skip_actions, PyTorch 2.8 and later).
_SKIPPED_ACTIONS = ["free_requested"]


def _start():
    global _recording
    history = functools.partial(torch.cuda.memory._record_memory_history, enabled="all", context=None,
                                stacks="python", max_entries=_MAX_EVENTS)
    try:
        try:
            history(skip_actions=_SKIPPED_ACTIONS)
        except TypeError:  # an older PyTorch: every action
            history()
        _recording = True
    except Exception as error:
        warn(f"the caching allocator's events are not recorded: {error!r}")


def local_tensor(tensor):
    """The tensor whose storage holds a tensor's data on this rank. A DTensor (FSDP2's fully_shard parameters,
    their gradients and optimizer state; tensor parallelism) is a wrapper without storage of its own: its local
    shard has it."""
    local = getattr(tensor, "_local_tensor", None)
    if isinstance(local, torch.Tensor):
        return local
    to_local = getattr(tensor, "to_local", None)
    return to_local() if callable(to_local) else tensor


def _note(tensor, role, name):
    if len(_roles) >= _MAX_ROLES or not isinstance(tensor, torch.Tensor):
        return
    tensor = local_tensor(tensor)
    if not tensor.is_cuda:
        return
    size = tensor.untyped_storage().nbytes()
    if size == 0:
        return
    _roles.append([time.time_ns() // 1000, tensor.device.index, tensor.untyped_storage().data_ptr(), size, role, name])


def _on_root_forward(module):
    if id(module) in _named_roots:
        return
    _named_roots.add(id(module))
    root = annotate.qualified_name(module)
    for name, p in module.named_parameters():
        _param_names[id(p)] = f"{root}.{name}"
        _note(p, "parameter", f"{root}.{name}")
    for name, b in module.named_buffers():
        _note(b, "buffer", f"{root}.{name}")


def _params(optimizer):
    for group in optimizer.param_groups:
        yield from group["params"]


def _on_step_pre(optimizer, args, kwargs):
    for p in _params(optimizer):  # gradients: allocated anew each step unless zero_grad(set_to_none=False)
        if p.grad is not None:
            _note(p.grad, "gradient", _param_names.get(id(p), "") + ".grad")


def _on_step_post(optimizer, args, kwargs):
    if _last_state and annotate.hook_free():  # state seen already: it seldom moves, and the check costs per step
        return
    for p in _params(optimizer):
        for key, value in optimizer.state.get(p, {}).items():
            if not isinstance(value, torch.Tensor):
                continue
            local = local_tensor(value)
            if not local.is_cuda:
                continue
            where = (local.untyped_storage().data_ptr(), local.untyped_storage().nbytes())
            if _last_state.get((id(p), key)) != where:
                _last_state[(id(p), key)] = where
                _note(value, "optimizer_state", f"{_param_names.get(id(p), '')}.{key}")


def _write(output_dir):
    if not _recording:
        return
    try:
        snapshot = torch.cuda.memory._snapshot()
        traces = snapshot.get("device_traces", [])
        snapshot["gpuscope"] = {
            "version": 1,
            "pid": os.getpid(),
            "max_entries": _MAX_EVENTS,
            "wrapped": any(len(t) >= _MAX_EVENTS for t in traces),
            "roles_dropped": len(_roles) >= _MAX_ROLES,
            "roles": _roles,
        }
        path = os.path.join(output_dir, f"torch-{os.getpid()}.json")
        with open(path + ".tmp", "w") as f:
            json.dump(snapshot, f, separators=(",", ":"))
        os.replace(path + ".tmp", path)
    except Exception as error:
        warn(f"the caching allocator's events could not be written: {error!r}")
