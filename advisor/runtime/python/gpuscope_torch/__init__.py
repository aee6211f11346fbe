"""gpuscope's PyTorch bridge.

When a program runs under `gpuscope record --torch` or `gpuscope apply`, the bootstrap's sitecustomize
calls install_from_environment() right after `import torch`. `apply` applies plan.json's fixes
(apply.py). Recording gets:
  - NVTX ranges for every module's forward and backward, named by the module's qualified name
    ("GPT2LMHeadModel.transformer.h.0.attn (forward)"), and for each optimizer step;
  - the caching allocator's own events (allocations, frees, segments), with the addresses of the
    parameters, gradients and optimizer state, written beside the trace at exit and merged into it.

Nothing here may change what the program computes, prints or returns: every failure is reported on
stderr once and the bridge steps aside.
"""

import os
import sys

_installed = False


def install_from_environment():
    """Installs what GPUSCOPE_TORCH asks for ("record", "apply", "values", comma-separated; apply reads the
    plan named by GPUSCOPE_PLAN); safe to call more than once. With GPUSCOPE_VALUES_OUT set (values: the run
    as written of `gpuscope apply`) the values the program computes are noted and written there."""
    global _installed
    modes = set(os.environ.get("GPUSCOPE_TORCH", "").split(","))
    if _installed or not modes & {"record", "apply", "values"}:
        return
    _installed = True
    if "values" in modes or os.environ.get("GPUSCOPE_VALUES_REF") or os.environ.get("GPUSCOPE_VALUES_OUT"):
        from . import values

        output_dir = os.environ.get("GPUSCOPE_VALUES_OUT", "")
        values.install(output_dir, keep_hooks="apply" in modes, timed=bool(output_dir) and "apply" not in modes)
    if "apply" in modes:
        from . import apply

        apply.install(os.environ.get("GPUSCOPE_PLAN", ""))
    if "record" in modes:
        _install_recording(timed_paused="apply" not in modes)


def _install_recording(timed_paused):
    from . import annotate, memory, recording_cost

    annotate.install()
    if timed_paused:  # apply's own timing check is what `apply --record` times
        recording_cost.install()
    output_dir = os.environ.get("GPUSCOPE_OUTPUT_DIR", "")
    if output_dir:
        memory.install(output_dir)
    else:
        warn("GPUSCOPE_OUTPUT_DIR is not set: allocator events are not recorded")


def warn(message):
    sys.stderr.write(f"gpuscope: {message}\n")


def compiled(module):
    """Whether the script compiled a module: torch.compile(model) (an OptimizedModule) or model.compile()."""
    optimized = getattr(sys.modules.get("torch._dynamo.eval_frame"), "OptimizedModule", None)
    return (optimized is not None and isinstance(module, optimized)) or getattr(module, "_compiled_call_impl",
                                                                               None) is not None
