"""The values a PyTorch program computes, noted so that `gpuscope apply` can compare a run with fixes against
the run as the script wrote it.

`gpuscope apply` runs the program twice: first as written, with GPUSCOPE_TORCH=values, which notes here
  - the loss of each of the first LOSSES backward passes (the one-element tensor backward() is called on),
  - the first CALLS calls of each model (a root module: the sums of its input tensors; its outputs' floating
    tensors, each by its shape, its sum, its sum of magnitudes and SAMPLE values evenly spaced through it; its
    buffers' sums (and sums of magnitudes) after the call: BatchNorm's running statistics, counters a forward
    updates in place; and whether it drew random numbers: an active dropout module, or a random generator the call
    moved, as functional dropout does),
  - the sums of the first model's input tensors at its calls LATER (each tenth, up to LOSSES), by a hook of that
    module alone: a loader whose workers draw random crops hands out other batches once its workers or their
    generators change, and more workers change them only from the batch after the first of each worker,
and writes them to GPUSCOPE_VALUES_OUT/values-RANK.json at exit; then with the plan, where apply reads that
file back (GPUSCOPE_VALUES_REF) and compares (verify.py): at its timing check, when the fixes can still be
rolled back, then window by window while they stay, and at exit for the whole run.

Noting costs a copy of each loss (one tiny kernel) and, for the first calls of a model, a few reductions; the
module hooks that find the models go after the first model's CALLS calls (under apply, with apply's own). Under
CUDA graphs a model's outputs and the loss live in memory the next replay overwrites, so both are read at once,
never later in place.

The run as written also times the first model's calls TIMED (each between two device synchronisations, by a hook of
that module alone, once the hooks above are gone): apply's timing check compares the same calls with the fixes
against them, and need not run the model as written inside the run with the plan, whose own clock those
slower calls would otherwise slow (a short benchmark's 20 timed steps held three of them: +35 % on BERT).
"""

import atexit
import itertools
import json
import math
import os
import time
import weakref

import torch

from . import warn

LOSSES = 100  # backward passes whose loss is noted
CALLS = 4  # calls of each model noted: the first runs as written in both runs, apply's fixes go in at the second
TIMED = (5, 8)  # the first model's calls 5-7 are timed in the run as written: apply times the same ones with its fixes
PAUSE_OUTSIDE = 1.5  # a call of a timed window this many times its fastest paused outside the model (steady_per_call)
LATER = range(10, LOSSES + 1, 10)  # the first model's later calls whose input sums are noted
SAMPLE = 1024  # values sampled from each output tensor
# Fixes held to this tolerance or a tighter one keep the arithmetic (checkpointing, a fused optimizer): a trained
# model's later calls are compared with them too (a recomputation that updated BatchNorm's running statistics
# again would show in the buffers noted after the third call, not the second).
EXACT = 1e-3
OUTPUTS = 4  # output tensors noted per call
BUFFERS = 256  # buffers noted per call

_losses = []  # detached copies of the losses, in the order backward() was called
_calls = {}  # id(root module) -> per call noted: (output shapes, a stats tensor per output, buffer sums, random)
_order = []  # root modules' ids in the order of their first call
_inside = set()  # ids of the modules inside the models seen (a checkpointed block recomputed alone is no model)
_depth = [0]
_draws = [None]  # where the random generators stood when the outermost module call began (see _drew)
_hooks = []
_keep_hooks = [False]
_stopped = []  # the error that stopped the noting, if one did
_timing = {}  # the first model's timed calls: "model" (its class), "calls" seen, "starts" (s), "per_call_s"
_later = {"calls": 1, "sums": {}}  # the first model's calls seen, and the input sums of those LATER; "hook"
loss_listeners = []  # called with the number of losses noted, after each (verify.py watches them)


def install(output_dir="", keep_hooks=False, timed=False):
    """Starts noting; with output_dir, writes the values there at exit. keep_hooks: the module hooks stay until
    remove_hooks() (under apply, whose compiled forwards are traced with them: removed, they would fail the
    compiled code's guards and compile it again). timed: the first model's calls TIMED are timed (the run as
    written)."""
    _keep_hooks[0] = keep_hooks
    if timed:
        _timing["wanted"] = True
    from torch.nn.modules import module as nn_module

    original = torch.Tensor.backward

    def backward(self, *args, **kwargs):
        try:
            noted = not _stopped and len(_losses) < LOSSES and self.numel() == 1 and self.is_floating_point()
            if noted and not _capturing():
                _losses.append(self.detach().reshape(()).to(torch.float32, copy=True))
                for listen in loss_listeners:
                    listen(len(_losses))
        except Exception as error:  # noting must never break the program: it stops instead
            _stop(error)
        return original(self, *args, **kwargs)

    torch.Tensor.backward = backward
    _hooks.append(nn_module.register_module_forward_pre_hook(_pre))
    _hooks.append(nn_module.register_module_forward_hook(_post, always_call=True))
    if output_dir:
        atexit.register(_write, output_dir)


def _pre(module, args):
    if not torch.compiler.is_compiling():
        if _depth[0] == 0:
            _draws[0] = _generator_marks()
        _depth[0] += 1


def _post(module, args, output):
    if torch.compiler.is_compiling():
        return
    _depth[0] = max(0, _depth[0] - 1)
    try:
        _note_call(module, args, output)
    except Exception as error:  # noting must never break the program: it stops instead
        _stop(error)


def _stop(error):
    """Stops noting after an error, saying so once; what was noted so far stays."""
    if not _stopped:
        _stopped.append(error)
        warn(f"values: noting stopped after an error: {error!r}")
    remove_hooks()


def _note_call(module, args, output):
    if _depth[0] or id(module) in _inside or not any(True for _ in module.parameters()):
        return  # a module inside a model, or no model (a loss, an activation called at top level)
    if id(module) not in _calls:
        _calls[id(module)] = []
        _order.append(id(module))
        _inside.update(id(m) for m in module.modules() if m is not module)
        if _timing.pop("wanted", False):
            _timing.update(model=type(module).__name__, calls=1)  # this, its first call, has run
            _timing["hook"] = module.register_forward_pre_hook(_time_call)
        if len(_order) == 1:
            _later["hook"] = module.register_forward_pre_hook(_note_later_inputs)
    calls = _calls[id(module)]
    if len(calls) < CALLS and not _capturing():
        try:
            calls.append(_noted(args, output, module))
        except Exception as error:  # noting must never break the program
            warn(f"values: the model's outputs could not be noted: {error!r}")
            calls.append(None)
    # The hooks cost time at every module call: only the first model's first calls, and those of models that
    # appear meanwhile, are noted.
    if len(_calls[_order[0]]) >= CALLS and not _keep_hooks[0]:
        remove_hooks()


def steady_per_call(intervals):
    """A window's time per call from the times between its calls' starts: the mean of those within
    PAUSE_OUTSIDE times the fastest. A call that took far longer than the others of its window paused for
    something neither way of running the model causes: a DataLoader without persistent workers starting them again
    at an epoch's first batch: in a segmentation job's check, two calls as written took 189 ms each on average
    where the run as written's took 106 ms and the calls with the fixes 129 (2 x H200, 2026-11-30), and the
    fixes, slower, were kept."""
    fastest = min(intervals)
    kept = [s for s in intervals if s <= PAUSE_OUTSIDE * fastest]
    return sum(kept) / len(kept)


def _time_call(module, args):
    """The first model's calls TIMED, each from its start to the next call's start, the device synchronised at
    each (as apply's check times them), and their time per call (steady_per_call)."""
    if torch.compiler.is_compiling():
        return
    _timing["calls"] += 1
    if not TIMED[0] <= _timing["calls"] <= TIMED[1]:
        return
    try:
        if _capturing():
            raise RuntimeError("the calls run inside a CUDA graph capture")
        if torch.cuda.is_initialized():
            torch.cuda.synchronize()
        _timing.setdefault("starts", []).append(time.perf_counter())
        if _timing["calls"] == TIMED[1]:
            starts = _timing["starts"]
            _timing["per_call_s"] = steady_per_call([b - a for a, b in zip(starts, starts[1:])])
            _timing.pop("hook").remove()
    except Exception as error:  # timing must never break the program: apply then times the calls itself
        warn(f"values: the model's calls not timed: {error!r}")
        _timing.pop("hook").remove()


def _note_later_inputs(module, args):
    """The sums of the first model's inputs at its calls LATER (device tensors, no synchronisation)."""
    if torch.compiler.is_compiling():
        return
    _later["calls"] += 1
    if _later["calls"] not in LATER or _capturing():
        return
    try:
        sums = _input_sums(args)
        if sums is not None:
            _later["sums"][_later["calls"]] = sums
    except Exception as error:  # noting must never break the program
        warn(f"values: the model's later inputs not noted: {error!r}")
        _later["calls"] = LATER[-1]
    if _later["calls"] >= LATER[-1]:
        _later.pop("hook").remove()


def remove_hooks():
    while _hooks:
        _hooks.pop().remove()


def let_hooks_go():
    """The hooks go once the first model's calls are noted after all (apply has no fix to make to a model)."""
    _keep_hooks[0] = False


def _noted(args, output, module):
    """One call's outputs, buffers and inputs (their sums), as device tensors (no synchronisation here)."""
    with torch.no_grad():
        outputs = [t for t in tensors(output) if t.is_floating_point() and t.numel()][:OUTPUTS]
        stats = [_stats(t.detach()) for t in outputs]
        named = list(module.named_buffers())[:BUFFERS]
        buffers = [_sums(b.detach()) for _, b in named]
        return ([list(t.shape) for t in outputs], stats, torch.cat(buffers) if buffers else None,
                _random(module) or _drew(),
                _input_sums(args), len(_losses), _buffer_groups(named))


def _buffer_groups(named):
    """Which module holds each floating buffer (an index, the same for a module's buffers); -1 for a counter,
    compared against itself alone."""
    owners = {}
    return [owners.setdefault(name.rpartition(".")[0], len(owners)) if b.is_floating_point() else -1
            for name, b in named]


def _input_sums(args):
    """The sums of a call's first input tensors, or None where they cannot be taken (sparse, on another device
    than each other): then the call counts as handed the same inputs."""
    try:
        sums = [_sums(t.detach()) for t in itertools.islice((t for t in tensors(args) if t.numel()), OUTPUTS)]
        return torch.cat(sums) if sums else None
    except (RuntimeError, TypeError, ValueError):
        return None


def _random(module):
    """Whether the call drew random numbers: a dropout module of the model active (training, p > 0). A compiled
    forward draws other ones than the forward as written, so its outputs then differ value by value, and in
    their sums too."""
    return any(isinstance(m, torch.nn.modules.dropout._DropoutNd) and m.training and m.p > 0 for m in module.modules())


def _generator_marks():
    """Where the random generators stand: the CPU generator's state and the current GPU's generator's offset
    (host values: no synchronisation; the other GPUs' generators are left alone, a torchrun rank touches its own),
    or None where they cannot be read (inside a CUDA graph capture)."""
    try:
        marks = [torch.default_generator.get_state()]
        if torch.cuda.is_initialized():
            marks.append(torch.cuda.default_generators[torch.cuda.current_device()].get_offset())
        return marks
    except (RuntimeError, AttributeError):
        return None


def _drew():
    """Whether the call just ended moved the CPU's or the current GPU's random generator: it drew random numbers as
    torch.nn.functional.dropout does, called by the model's own forward with no dropout module to find (PyTorch
    Geometric's GCN)."""
    before, after = _draws[0], _generator_marks()
    if before is None or after is None:
        return False
    return not torch.equal(before[0], after[0]) or before[1:] != after[1:]


def _sums(t):
    """A tensor's sum and sum of magnitudes, in one float64 tensor of two. Accumulated in float32, as PyTorch
    sums a float32 tensor: asked in float64, a reduction may first make a float64 copy of its input (3.2 GB for
    a GPT-2 batch's logits), which a program near its memory's end cannot spare."""
    if not t.is_floating_point():
        t = t.float()  # a counter's buffer
    sums = [t.sum(dtype=torch.float32), torch.linalg.vector_norm(t, 1, dtype=torch.float32)]
    return torch.stack(sums).double()


def _capturing():
    """Whether the program is capturing a CUDA graph: what would be noted then is captured into its graph, and
    replayed at every replay of it."""
    return torch.cuda.is_initialized() and torch.cuda.is_current_stream_capturing()


def _stats(t):
    """A tensor's sum, sum of magnitudes and SAMPLE values evenly spaced through it (in the order of its
    elements, read where they lie: a strided view is not copied whole), in one float64 tensor."""
    chosen = torch.unravel_index(picks(t.numel(), t.device), t.shape)
    return torch.cat([_sums(t), t[chosen].double().reshape(-1)])


def picks(count, device):
    """SAMPLE indices evenly spaced over count values, first and last included, in integers: in float32 (as
    linspace makes them) the last index of a GPT-2 batch's logits (411 million values) rounds past the end."""
    if count <= SAMPLE:
        return torch.arange(count, device=device)
    return torch.arange(SAMPLE, dtype=torch.int64, device=device) * (count - 1) // (SAMPLE - 1)


def tensors(value, depth=0):
    """The tensors in a call's arguments or results: in tuples, lists, dicts (a ModelOutput) and the attributes
    of plain objects (a KV cache's layers), a few levels down."""
    if isinstance(value, torch.Tensor):
        yield value
    elif depth < 5 and not isinstance(value, (str, bytes, torch.nn.Module)):
        items = value.values() if isinstance(value, dict) else value if isinstance(value, (list, tuple)) else \
            vars(value).values() if hasattr(value, "__dict__") else ()
        for item in items:
            yield from tensors(item, depth + 1)


# A forward is judged for state handed back (carried) over its first calls only: a loop feeds its state back from
# the start, and each check walks the call's arguments on the host. apply's CUDA graphs guard and the recording's
# mark (annotate.STATE_CARRIED_MARK) judge the same calls.
STATE_CALLS = 4


def storages(tensors):
    """Weak references to the memory a call's tensors live in. A storage's Python object lives exactly as long
    as the memory (PyTorch keeps the one object for it): a later tensor in the same memory is state carried
    over (a view or a detached copy of it included), one that only reuses a freed address is not."""
    refs = []
    for t in tensors:
        try:
            refs.append(weakref.ref(t.untyped_storage()))
        except (RuntimeError, NotImplementedError, TypeError):  # no storage of its own (sparse, a subclass)
            pass
    return refs


def carried(handed, returned):
    """Whether a call is handed memory a previous call returned that is still alive. Addresses alone would not
    do: the caching allocator hands a batch the block of last step's freed logits, and a training loop with
    no state at all lost its CUDA graphs to it."""
    alive = {id(s) for s in (ref() for ref in returned) if s is not None}
    return any(id(ref()) in alive for ref in storages(handed)) if alive else False


def losses():
    """The losses noted so far, as float32 device tensors of one element."""
    return list(_losses)


def snapshot():
    """What has been noted so far, as plain numbers (synchronises with the device): {"losses": [...],
    "models": [[{"shapes", "outputs", "buffers"} per call] per model, in the order of their first call]}."""
    losses = torch.stack(_losses).tolist() if _losses else []
    models = []
    for key in _order:
        calls = []
        for call in _calls[key]:
            if call is None:
                calls.append(None)
                continue
            shapes, stats, buffers, random, inputs, backwards, groups = call
            calls.append({"shapes": shapes, "outputs": [s.tolist() for s in stats],
                          "buffers": buffers.tolist() if buffers is not None else [], "buffer_groups": groups,
                          "random": random,
                          "inputs": inputs.tolist() if inputs is not None else None, "backwards": backwards})
        models.append(calls)
    noted = {"losses": losses, "models": models,
             "later_inputs": {str(c): sums.tolist() for c, sums in _later["sums"].items()}}
    if "per_call_s" in _timing:
        noted["timed"] = {"model": _timing["model"], "calls": list(TIMED), "per_call_s": _timing["per_call_s"]}
    return noted


def file_name():
    """One file per process of a job: its rank where torchrun set one."""
    return f"values-{os.environ.get('RANK', '0')}.json"


def _write(output_dir):
    try:
        values = snapshot()
        if not values["losses"] and not values["models"]:
            return  # a process that ran no model (a launcher, a data loader's worker)
        with open(os.path.join(output_dir, file_name()), "w") as f:
            json.dump(values, f)
    except Exception as error:
        warn(f"values: not written: {error!r}")


def read(path):
    """Values written by the run as written, or None where there are none (it ran no model, or failed early)."""
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def compare(ref, mine, first, later):
    """Compares this run's values with the run as written's. first: the tolerances for what only the fixes in
    force from the program's start can change (the models' first calls, the first loss); later: for the rest;
    each (for single values, for the mean loss of a window of steps). The loss after the first step is compared
    window by window (steps 2-10, 11-20, ...): a fix's effect on the loss adds up from step to step, and so do
    the effects of rounding in a training that is sensitive to it, so single steps scatter where means do
    not; a window's mean may also differ by what the loss moves from one step to the next as written (its
    median change, relative), the spread of a trajectory that rounding alone sets on another path, and where the
    model was handed other batches (loader workers' own random transforms) by what other random batches alone set
    (sampling_bound). Returns (the largest difference, the first beyond its tolerance or None, what was compared in
    words); each difference is a dict: difference, where (words), tolerance, basis ("start", "fixes", "moves" or
    "draws")."""
    found = []
    skip_trained = later[0] > EXACT
    losses, ref_losses = mine["losses"], ref["losses"]
    if losses and ref_losses:
        found.append(_found(_relative(losses[0], ref_losses[0], abs(ref_losses[0])), "the loss of step 1", first[0],
                            "start"))
    moves, scatter = median_move(ref_losses), step_scatter(ref_losses)
    other_batches = _other_batches(mine, ref)
    for begin, end in windows(min(len(losses), len(ref_losses))):
        a, b = _mean(losses[begin - 1:end]), _mean(ref_losses[begin - 1:end])
        draws = sampling_bound(scatter, end - begin + 1) if other_batches else 0.0
        tolerance = max(later[1], moves, draws)
        basis = "draws" if draws == tolerance and draws > 0 else "moves" if moves == tolerance and moves > 0 \
            else "fixes"
        found.append(_found(_relative(a, b, abs(b)), f"the mean loss of steps {begin}-{end}", tolerance, basis))
    for m, (calls, ref_calls) in enumerate(zip(mine["models"], ref["models"]), 1):
        model = f"model {m}" if len(ref["models"]) > 1 else "the model"
        for c, (call, ref_call) in enumerate(zip(calls, ref_calls), 1):
            if call is None or ref_call is None or not same_inputs(call, ref_call):
                continue
            if skip_trained and trained_with_fixes(ref_calls, c):
                continue
            tolerance, basis = (first[0], "start") if c == 1 else (later[0], "fixes")
            found.append(_found(_outputs(call, ref_call), f"{model}'s outputs at call {c}", tolerance, basis))
            if ref_call["buffers"] or call["buffers"]:
                found.append(_found(_buffers(call["buffers"], ref_call["buffers"], ref_call.get("buffer_groups")),
                                    f"{model}'s buffers after call {c}", tolerance, basis))
    beyond = next((f for f in found if not f["difference"] <= f["tolerance"]), None)
    worst = max(found, key=lambda f: f["difference"] if f["difference"] == f["difference"] else float("inf"),
                default=None)
    return worst, beyond, _compared_words(mine, ref, skip_trained)


def same_inputs(call, ref_call):
    """Whether a model's call was handed what the run as written handed it (the sums of its input tensors, to
    float32 rounding): where not (loader workers that draw their own random crops and flips), its outputs and
    buffers say nothing of the fixes and are not compared. Runs noted before inputs were count as the same."""
    a, b = call.get("inputs"), ref_call.get("inputs")
    if a is None or b is None:
        return True
    if len(a) != len(b):
        return False
    return all(_relative(x, y, abs(magnitude)) <= 1e-5 for x, y, magnitude in zip(a[0::2], b[0::2], b[1::2])) and \
        all(_relative(x, y, abs(y)) <= 1e-5 for x, y in zip(a[1::2], b[1::2]))


def _call_pairs(mine, ref, skip_trained=False):
    """The models' calls both runs noted, as (this run's, the run as written's); with skip_trained, less those
    trained_with_fixes."""
    return [(a, b) for calls, ref_calls in zip(mine["models"], ref["models"])
            for c, (a, b) in enumerate(zip(calls, ref_calls), 1)
            if a is not None and b is not None and not (skip_trained and trained_with_fixes(ref_calls, c))]


def trained_with_fixes(ref_calls, c):
    """Whether the model's call c (from 1) follows a backward pass of a call the fixes were in (apply's fixes go in
    at the second call): its weights are then those the fixes' own training steps made, and its outputs differ
    from the run as written by all that the training made of the fixes' rounding, which the windows of mean
    losses judge (where the fixes round otherwise than as written: compare leaves such calls out only then). A
    DDP ResNet-50 trained in bf16 at lr 0.1, compiled, moved its outputs at call 3 by 10.2 and 13.3 % on its two
    ranks, its losses within tolerance and its outputs at call 2 too (2 x H200, 2026-11-28)."""
    second = ref_calls[1] if len(ref_calls) > 1 else None
    call = ref_calls[c - 1]
    if c <= 2 or second is None or call is None or "backwards" not in call:
        return False
    return call["backwards"] > second["backwards"]


def _other_batches(mine, ref):
    """Whether the model was handed other batches than in the run as written at one of the calls both noted (loader
    workers that draw their own random crops and flips). The later calls count too: PyTorch's transfer-learning
    tutorial, its 4 loader workers made 8 with persistent workers, was handed the same first four batches, and
    other ones after (bench/corpus/tv_transfer_learning_tutorial, H200, 2026-12-01)."""
    later, ref_later = mine.get("later_inputs", {}), ref.get("later_inputs", {})
    return any(not same_inputs(a, b) for a, b in _call_pairs(mine, ref)) or \
        any(not same_inputs({"inputs": later[c]}, {"inputs": ref_later[c]}) for c in later.keys() & ref_later.keys())


# How many standard errors two windows' mean losses over other random batches may differ by: 4 leaves about one
# window in 16,000 of two runs that differ only in their batches beyond it, where a fix that changes the arithmetic
# (bf16 moved a model's loss by 102 %, bench/corpus/trap_autocast_fp32_ops) stays far outside.
STANDARD_ERRORS = 4


def sampling_bound(scatter, steps):
    """How far the mean loss of a window of `steps` steps may differ, relative, between two runs that train on other
    random batches alone: STANDARD_ERRORS standard errors of the difference of two such means, sigma * sqrt(2 /
    steps), with the loss's scatter from step to step (sigma, relative: step_scatter)."""
    if scatter <= 0 or steps <= 0:
        return 0.0
    return STANDARD_ERRORS * scatter * math.sqrt(2.0 / steps)


def step_scatter(losses):
    """The loss's scatter from one step to the next, relative to the mean loss: the root mean square of its changes
    over sqrt(2), which is sigma for independent draws, heavy tails included, and leaves a slow trend out. The median
    change read for Gaussian draws (0.954 sigma) took a batch-4 fine-tune's sigma for 0.31 of its mean loss where it
    was 0.74, one confidently wrong batch of four costing several times the rest, and its windows over other batches
    for changed results (106 % apart against 55 %: bench/corpus/tv_transfer_learning_tutorial, H200, 2026-12-01)."""
    changes = [(b - a) ** 2 for a, b in zip(losses, losses[1:]) if a == a and b == b]
    scale = _mean([abs(v) for v in losses if v == v]) if losses else 0.0
    return math.sqrt(sum(changes) / len(changes) / 2.0) / scale if changes and scale > 0 else 0.0


def _found(difference, where, tolerance, basis):
    return {"difference": difference, "where": where, "tolerance": tolerance, "basis": basis}


WINDOW = 10


def windows(steps):
    """The windows of steps after the first whose mean losses are compared: 2-10, 11-20, ...; a last one shorter
    than half a window only where it is the first."""
    out = []
    begin = 2
    while begin <= steps:
        end = min(steps, WINDOW if begin == 2 else begin + WINDOW - 1)
        if end - begin + 1 >= WINDOW // 2 or not out:
            out.append((begin, end))
        begin = end + 1
    return out


def median_move(losses):
    """How far the loss moves from one step to the next: the median change, relative to the mean loss."""
    moves = sorted(abs(b - a) for a, b in zip(losses, losses[1:]) if a == a and b == b)
    scale = _mean([abs(v) for v in losses if v == v]) if losses else 0.0
    return moves[len(moves) // 2] / scale if moves and scale > 0 else 0.0


def _mean(values):
    return sum(values) / len(values) if values else 0.0


def _compared_words(mine, ref, skip_trained):
    words = []
    losses = min(len(mine["losses"]), len(ref["losses"]))
    if losses:
        words.append(f"the loss of steps 1-{losses}" if losses > 1 else "the loss of step 1")
    pairs = _call_pairs(mine, ref, skip_trained)
    trained = len(_call_pairs(mine, ref)) - len(pairs)  # their weights are the fixes' own training's
    calls = sum(same_inputs(a, b) for a, b in pairs)
    other = len(pairs) - calls
    if calls:
        random = any(c and c.get("random") for calls in ref["models"] for c in calls)
        words.append(f"the model's outputs{' (their shapes only: dropout draws random numbers)' if random else ''} "
                     f"and buffers at {calls} call{'s' if calls > 1 else ''}")
    said = " and ".join(words)
    if trained:
        said += (f"{' ' if said else ''}(not the model's outputs at {trained} later call{'s' if trained > 1 else ''}: "
                 f"computed with weights trained with the fixes, judged by the losses)")
    if other:  # the loader's workers drew other random crops: those calls' outputs say nothing of the fixes
        said += (f"{' ' if said else ''}(not the model's outputs at {other} call{'s' if other > 1 else ''}: handed "
                 f"other batches than the run as written)")
    return said or "nothing (no loss and no model call in common)"


def _relative(a, b, scale):
    if a != a or b != b:  # NaN: equal only to NaN
        return 0.0 if a != a and b != b else float("inf")
    return abs(a - b) / max(scale, 1e-12)


def _outputs(call, ref_call):
    """The largest relative difference of a call's outputs: their sums against the sum of magnitudes, their
    sampled values against the largest sampled magnitude. A different shape is an infinite difference. Where the
    call drew random numbers (dropout) in either run, only the shapes count: a compiled forward draws other
    ones, and with them every value and even the sums differ (by 6 to 15 % for a BERT classifier's logits)."""
    if call["shapes"] != ref_call["shapes"]:
        return float("inf")
    if call.get("random") or ref_call.get("random"):
        return 0.0
    worst = 0.0
    for a, b in zip(call["outputs"], ref_call["outputs"]):
        worst = max(worst, _relative(a[0], b[0], b[1]))
        scale = max((abs(v) for v in b[2:]), default=0.0)
        worst = max([worst] + [_relative(x, y, scale) for x, y in zip(a[2:], b[2:])])
    return worst


def _buffers(sums, ref_sums, groups=None):
    """The largest relative difference of the buffers' sums, each against the largest sum of magnitudes of its
    module's floating buffers (groups, as _buffer_groups gives them; without them, against its own). A module's
    statistics share one scale: BatchNorm's running mean moves by what rounding changes in a batch's mean, a
    fraction of the batch's spread, which its running variance holds; early in training the mean's own magnitude
    is near nothing (1.4e-4 for a DeepLabV3 layer, against a variance near its channels' count), and a rounding
    difference in it read as 33 %. A statistic updated twice still shows: the variance moves by a tenth of its
    distance from one, the counter (compared against itself) by one."""
    if len(sums) != len(ref_sums):
        return float("inf")
    magnitudes = ref_sums[1::2]
    groups = groups if groups and len(groups) == len(magnitudes) else [-1] * len(magnitudes)
    scale = {}
    for group, magnitude in zip(groups, magnitudes):
        scale[group] = max(scale.get(group, 0.0), magnitude)
    scales = [magnitude if group < 0 else scale[group] for group, magnitude in zip(groups, magnitudes)]
    return max((_relative(a, b, s) for a, b, s in zip(sums[0::2], ref_sums[0::2], scales)), default=0.0)
