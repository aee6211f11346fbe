"""gpuscope's PyTorch bridge.

When a program runs under `gpuscope record --torch`, the bootstrap's sitecustomize calls
install_from_environment() right after `import torch`. Recording then gets:
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
    """Installs what the environment asks for (GPUSCOPE_TORCH=record); safe to call more than once."""
    global _installed
    if _installed or os.environ.get("GPUSCOPE_TORCH", "") != "record":
        return
    _installed = True
    from . import annotate, memory

    annotate.install()
    output_dir = os.environ.get("GPUSCOPE_OUTPUT_DIR", "")
    if output_dir:
        memory.install(output_dir)
    else:
        warn("GPUSCOPE_OUTPUT_DIR is not set: allocator events are not recorded")


def warn(message):
    sys.stderr.write(f"gpuscope: {message}\n")
