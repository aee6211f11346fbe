"""gpuscope's CuPy bridge: what CuPy's memory pool hands out, beside what it reserves.

CuPy's memory pool reserves device memory with cudaMalloc and hands arrays out of it, keeping freed blocks
for reuse; CUPTI sees only the reservations. Under `gpuscope record --cupy` the bootstrap's sitecustomize calls
install_from_environment() right after `import cupy`: a cupy.cuda.MemoryHook on the importing thread notes
every block handed out of the pool and given back to it, and every new block the pool asks CUDA for, with
the time, device, address and size. At exit they are written beside the trace as cupy-<pid>.json, in the
shape of a PyTorch memory snapshot ("device_traces"), which `gpuscope record` merges into the trace as the
allocator's events: the analyzer then measures the program's memory in use, and what the pool holds besides.

Memory hooks are per thread in CuPy: arrays made on other threads are not seen. Nothing here may change what
the program computes, prints or returns: every failure is reported on stderr once and the bridge steps aside.
"""

import atexit
import json
import os
import sys
import time

_MAX_EVENTS = int(os.environ.get("GPUSCOPE_CUPY_MAX_EVENTS", "2000000"))
_installed = False


def warn(message):
    sys.stderr.write(f"gpuscope: {message}\n")


class Recorder:
    """The pool's events by device: [{"action", "addr", "size", "time_us"}] in the order they happened."""

    def __init__(self, max_events=_MAX_EVENTS):
        self.traces = {}
        self.count = 0
        self.max_events = max_events
        self.failed = None

    def note(self, action, device_id, address, size):
        if self.count >= self.max_events or self.failed:
            return
        try:
            self.traces.setdefault(int(device_id), []).append(
                {"action": action, "addr": int(address), "size": int(size), "time_us": time.time_ns() // 1000})
            self.count += 1
        except Exception as error:  # never the program's problem
            self.failed = repr(error)
            warn(f"CuPy's pool events are no longer noted: {error!r}")

    def snapshot(self):
        devices = max(self.traces, default=-1) + 1
        return {"device_traces": [self.traces.get(d, []) for d in range(devices)],
                "gpuscope": {"version": 1, "pid": os.getpid(), "allocator": "cupy", "max_entries": self.max_events,
                             "wrapped": self.count >= self.max_events}}

    def write(self, output_dir):
        try:
            path = os.path.join(output_dir, f"cupy-{os.getpid()}.json")
            with open(path + ".tmp", "w") as out:
                json.dump(self.snapshot(), out)
            os.replace(path + ".tmp", path)
        except Exception as error:
            warn(f"CuPy's pool events not written: {error!r}")


def make_hook(recorder):
    """A cupy.cuda.MemoryHook noting, as PyTorch's allocator names them, a block handed out of the pool
    ("alloc"), given back to it ("free_completed"), and a new block asked of CUDA ("segment_alloc")."""
    import cupy

    class PoolEvents(cupy.cuda.MemoryHook):
        name = "GpuscopePoolEvents"

        def alloc_postprocess(self, **kw):
            recorder.note("segment_alloc", kw["device_id"], kw["mem_ptr"], kw["mem_size"])

        def malloc_postprocess(self, **kw):
            recorder.note("alloc", kw["device_id"], kw["mem_ptr"], kw["mem_size"])

        def free_postprocess(self, **kw):
            recorder.note("free_completed", kw["device_id"], kw["mem_ptr"], kw["mem_size"])

    return PoolEvents()


def install_from_environment():
    """Installs the hook where GPUSCOPE_CUPY asks for "record"; safe to call more than once."""
    global _installed
    if _installed or "record" not in os.environ.get("GPUSCOPE_CUPY", "").split(","):
        return
    _installed = True
    output_dir = os.environ.get("GPUSCOPE_OUTPUT_DIR", "")
    if not output_dir:
        warn("GPUSCOPE_OUTPUT_DIR is not set: CuPy's pool events are not recorded")
        return
    recorder = Recorder()
    hook = make_hook(recorder)
    hook.__enter__()  # for the rest of the run, on this thread (CuPy's hooks are per thread)
    atexit.register(recorder.write, output_dir)
