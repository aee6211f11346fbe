"""Records the NVTX calls the bridge makes, and calls through to torch's own functions.

The bridge looks torch.cuda.nvtx's functions up at each call, so replacing them is enough. Without a tool
attached, NVTX answers 0 to every range_start; gpuscope's collector, like any tool, hands out distinct
ids, and the bridge keys its open ranges by them, so the spy hands out its own (and gives the real id to
the real range_end).
"""

import itertools

import torch

events = []  # ["push", name] ["pop"] ["start", name, id] ["end", id] ["nvtx mark", name], the program's ["mark", ...]


class InjectedFailure(RuntimeError):
    """Raised by the spy where the test asks, to stand for a bridge bug."""


def install(fail_on=None):
    """Wraps range_push/range_pop/range_start/range_end; range_push of the name fail_on raises."""
    nvtx = torch.cuda.nvtx
    real = {name: getattr(nvtx, name) for name in ("range_push", "range_pop", "range_start", "range_end")}
    ids = itertools.count(1)
    real_ids = {}

    def range_push(msg):
        if msg == fail_on:
            raise InjectedFailure(f"injected at {msg}")
        events.append(["push", msg])
        return real["range_push"](msg)

    def range_pop():
        events.append(["pop"])
        return real["range_pop"]()

    def range_start(msg):
        rid = next(ids)
        real_ids[rid] = real["range_start"](msg)
        events.append(["start", msg, rid])
        return rid

    def range_end(rid):
        events.append(["end", rid])
        return real["range_end"](real_ids.pop(rid))

    real_mark = nvtx.mark

    def nvtx_mark(msg):
        events.append(["nvtx mark", msg])
        return real_mark(msg)

    nvtx.range_push, nvtx.range_pop, nvtx.range_start, nvtx.range_end = range_push, range_pop, range_start, range_end
    nvtx.mark = nvtx_mark


def mark(*what):
    events.append(["mark", *what])
