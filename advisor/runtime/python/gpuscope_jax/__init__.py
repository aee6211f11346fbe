"""gpuscope's JAX bridge: what XLA's allocator has in use, beside what it reserved.

XLA's allocator reserves device memory up front (75 % of the GPU by default) and hands buffers out of it
itself: CUPTI sees the reservation only. Under `gpuscope record --jax` the bootstrap's sitecustomize calls
install_from_environment() right after `import jax`: a daemon thread reads each GPU's memory_stats() (the
figures JAX users read: bytes in use, the peak in use, the pool XLA holds) every GPUSCOPE_JAX_SAMPLE_MS
milliseconds (default 10), keeping a sample when a figure changed, and once more at exit, after the thread has
stopped (JAX's own exit handlers, which run after ours, tear its backends down). They are written
beside the trace as jax-<pid>.json, which `gpuscope record` merges into the trace's memory_usage table.

The thread never starts JAX's backends: a program may still set XLA's variables or its platform after
`import jax`, so it reads only once the program has made its first array. Nothing here may change what the
program computes, prints or returns: every failure is reported on stderr once and the bridge steps aside.
"""

import atexit
import json
import os
import sys
import threading
import time

_FIELDS = ("bytes_in_use", "peak_bytes_in_use", "pool_bytes", "bytes_limit")
_MAX_SAMPLES = int(os.environ.get("GPUSCOPE_JAX_MAX_SAMPLES", "200000"))
_installed = False


def warn(message):
    sys.stderr.write(f"gpuscope: {message}\n")


def backends_started():
    """Whether the program has started JAX's backends (its first array, its first jitted call), asked without
    starting them."""
    try:
        from jax._src import xla_bridge
    except Exception:
        return False
    started = getattr(xla_bridge, "backends_are_initialized", None)
    if started is not None:
        return bool(started())
    return bool(getattr(xla_bridge, "_backends", None))


class Sampler:
    """Samples by device id: [time_us, bytes_in_use, peak_bytes_in_use, pool_bytes, bytes_limit], a figure
    XLA does not report being None."""

    def __init__(self, devices, max_samples=_MAX_SAMPLES):
        self.devices = devices  # a function returning the devices to read (jax.local_devices)
        self.samples = {}
        self.last = {}
        self.count = 0
        self.max_samples = max_samples
        self.failed = None
        self.lock = threading.Lock()

    def sample(self):
        if self.failed or self.count >= self.max_samples:
            return
        try:
            # Asked each time, never kept: at exit JAX ends the process with status -1 if anything still holds
            # one of its clients (through a device) when it clears its backends.
            for device in self.devices():
                stats = device.memory_stats() if device.platform == "gpu" else None
                if stats:
                    self._keep(int(device.id), [stats.get(f) for f in _FIELDS])
        except Exception as error:  # never the program's problem
            self.failed = repr(error)
            warn(f"JAX's memory figures are no longer read: {error!r}")

    def _keep(self, device_id, figures):
        with self.lock:
            if self.last.get(device_id) == figures:
                return
            self.last[device_id] = figures
            self.samples.setdefault(device_id, []).append([time.time_ns() // 1000] + figures)
            self.count += 1

    def snapshot(self):
        with self.lock:
            return {"memory_usage": {str(d): list(s) for d, s in self.samples.items()},
                    "gpuscope": {"version": 1, "pid": os.getpid(), "allocator": "xla", "fields": list(_FIELDS),
                                 "max_samples": self.max_samples, "full": self.count >= self.max_samples,
                                 "failed": self.failed}}

    def write(self, output_dir):
        try:
            path = os.path.join(output_dir, f"jax-{os.getpid()}.json")
            with open(path + ".tmp", "w") as out:
                json.dump(self.snapshot(), out)
            os.replace(path + ".tmp", path)
        except Exception as error:
            warn(f"JAX's memory figures not written: {error!r}")


class Reader:
    """The sampler's thread: a reading every `seconds` once `started()` says JAX has started, until stopped."""

    def __init__(self, sampler, seconds, started=backends_started):
        self.sampler, self.seconds, self.started = sampler, seconds, started
        self._stop = threading.Event()
        self.thread = threading.Thread(target=self._run, name="gpuscope-jax-memory", daemon=True)

    def _run(self):
        while not self._stop.wait(self.seconds):
            if self.started():
                self.sampler.sample()

    def start(self):
        self.thread.start()

    def stop(self, timeout=1.0):
        """Returns once no reading is under way: JAX's own exit handlers, after ours, tear its backends down."""
        self._stop.set()
        if self.thread.is_alive():
            self.thread.join(timeout)


def _interval_s():
    text = os.environ.get("GPUSCOPE_JAX_SAMPLE_MS", "10")
    try:
        return max(1.0, float(text)) / 1000.0
    except ValueError:
        warn(f"GPUSCOPE_JAX_SAMPLE_MS={text!r} is not a number of milliseconds: reading every 10 ms")
        return 0.01


def install_from_environment():
    """Starts the sampler where GPUSCOPE_JAX asks for "record"; safe to call more than once."""
    global _installed
    if _installed or "record" not in os.environ.get("GPUSCOPE_JAX", "").split(","):
        return
    _installed = True
    output_dir = os.environ.get("GPUSCOPE_OUTPUT_DIR", "")
    if not output_dir:
        warn("GPUSCOPE_OUTPUT_DIR is not set: JAX's memory figures are not recorded")
        return
    import jax

    sampler = Sampler(jax.local_devices)
    reader = Reader(sampler, _interval_s())
    reader.start()

    def at_exit():  # registered after jax's own: runs while its backends still live
        reader.stop()
        if backends_started():
            sampler.sample()
        sampler.write(output_dir)

    atexit.register(at_exit)
