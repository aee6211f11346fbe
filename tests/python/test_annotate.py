"""annotate.py with real torch on the CPU: the NVTX ranges the bridge opens for a small model's training
(programs/annotated_training.py records them), and that its hooks change nothing the program computes."""

import collections
import json
import tempfile
import unittest

import torch

import support

FORWARD = ["Net", "Net.embed", "Net.fragile", "Net.gate_in", "Net.gate", "Net.Scale", "Net.head"] + [
    f"Net.blocks.{i}{part}" for i in range(3) for part in ("", ".fc1", ".act", ".fc2")]
BACKWARD = [name for name in FORWARD if name != "Net.fragile"]  # its forward raised: no output


def record(*args):
    """Runs annotated_training.py; returns (events, the CompletedProcess)."""
    return support.run_for_json("annotated_training.py", *args)


def phase_index(events, phase, step):
    return events.index(["mark", "phase", phase, step])


def phase_events(events, step, phase):
    """(index, event) of one phase of one step: from its mark to the next phase's."""
    start = phase_index(events, phase, step)
    end = next((i for i in range(start + 1, len(events)) if events[i][:2] == ["mark", "phase"]), len(events))
    return [(i, events[i]) for i in range(start + 1, end)]


def forward_tree(events, step):
    """{range name: the name of the range it opened in} for one step's forward, checking balance."""
    stack, parents = [], {}
    for _, event in phase_events(events, step, "forward"):
        if event[0] == "push":
            parents[event[1]] = stack[-1] if stack else None
            stack.append(event[1])
        elif event[0] == "pop":
            if not stack:
                raise AssertionError(f"range_pop with no range open in step {step}")
            stack.pop()
    if stack:
        raise AssertionError(f"ranges left open after step {step}'s forward: {stack}")
    return parents


def backward_ranges(events, first, last):
    """{range id: [name, index of its start, index of its end or None]} between two event indexes."""
    ranges = {}
    for i in range(first, last):
        event = events[i]
        if event[0] == "start":
            ranges[event[2]] = [event[1], i, None]
        elif event[0] == "end" and event[1] in ranges:
            ranges[event[1]][2] = i
    return ranges


class ModuleRanges(unittest.TestCase):
    """One recorded run, checked from several sides."""

    @classmethod
    def setUpClass(cls):
        cls.events, cls.result = record()

    def whole_step_ranges(self, step):
        next_step = ["mark", "phase", "forward", step + 1]
        last = self.events.index(next_step) if next_step in self.events else len(self.events)
        return backward_ranges(self.events, phase_index(self.events, "backward", step), last)

    def test_forward_ranges_are_named_by_qualified_module_name(self):
        names = [e[1] for _, e in phase_events(self.events, 0, "forward") if e[0] == "push"]
        self.assertEqual(sorted(names), sorted(f"{name} (forward)" for name in FORWARD))

    def test_forward_ranges_balance_and_nest_like_the_modules(self):
        for step in range(5):
            parents = forward_tree(self.events, step)
            self.assertIsNone(parents["Net (forward)"])
            self.assertEqual(parents["Net.blocks.1 (forward)"], "Net (forward)")  # the ModuleList runs nothing
            self.assertEqual(parents["Net.blocks.1.act (forward)"], "Net.blocks.1 (forward)")
            self.assertEqual(parents["Net.head (forward)"], "Net (forward)")

    def test_module_made_during_forward_is_named_below_its_caller(self):
        self.assertEqual(forward_tree(self.events, 0)["Net.Scale (forward)"], "Net (forward)")

    def test_forward_that_raises_closes_its_range(self):
        forward = [e for _, e in phase_events(self.events, 0, "forward")]
        at = forward.index(["push", "Net.fragile (forward)"])
        self.assertEqual(forward[at + 1], ["pop"])

    def test_every_module_with_an_output_needing_grad_has_one_backward_range(self):
        for step in (0, 1, 4):
            names = collections.Counter(name for name, _, _ in self.whole_step_ranges(step).values())
            self.assertEqual(names, collections.Counter(f"{name} (backward)" for name in BACKWARD))

    def test_backward_ranges_start_and_end_within_the_backward_pass(self):
        for step in (0, 1):
            backward_end = phase_index(self.events, "step", step)
            for name, start, end in self.whole_step_ranges(step).values():
                self.assertIsNotNone(end, name)
                self.assertLess(start, end, name)
                self.assertLess(end, backward_end, name)

    def test_backward_range_ends_after_all_its_inputs_gradients(self):
        for name, _, end in self.whole_step_ranges(0).values():
            module = name.removesuffix(" (backward)")
            grads = [i for i, e in phase_events(self.events, 0, "backward") if e == ["mark", "input grad", module]]
            if module not in ("Net", "Net.embed", "Net.Scale"):  # inputs needing no grad; not observed
                self.assertTrue(grads, module)
            if module == "Net.gate":
                self.assertEqual(len(grads), 2)
            self.assertTrue(all(i < end for i in grads), module)

    def test_first_layer_backward_range_ends_at_parameter_accumulation(self):
        ranges = self.whole_step_ranges(0)
        end = next(end for name, _, end in ranges.values() if name == "Net.embed (backward)")
        accumulated = [i for i, e in phase_events(self.events, 0, "backward") if e[:2] == ["mark", "accumulated"]]
        self.assertEqual(len(accumulated), 2)
        self.assertGreater(end, max(accumulated))
        self.assertLess(end, phase_index(self.events, "step", 0))

    def test_range_left_open_is_closed_at_the_next_optimizer_step(self):
        ranges = backward_ranges(self.events, phase_index(self.events, "backward", 2), len(self.events))
        head = next(r for r in ranges.values() if r[0] == "Net.head (backward)")
        step_push = self.events.index(["push", "optimizer.step (SGD)"], head[1])
        self.assertTrue(phase_index(self.events, "step", 2) < head[2] < step_push)

    def test_range_left_open_is_closed_at_the_next_root_forward(self):
        ranges = backward_ranges(self.events, phase_index(self.events, "backward", 3), len(self.events))
        head = next(r for r in ranges.values() if r[0] == "Net.head (backward)")
        root_push = self.events.index(["push", "Net (forward)"], head[1])
        self.assertTrue(phase_index(self.events, "forward", 4) < head[2] < root_push)

    def test_no_backward_range_opens_where_the_gradient_never_came(self):
        names = {r[0] for r in self.whole_step_ranges(2).values()}
        self.assertEqual(names, {"Net.head (backward)", "Net (backward)"})

    def test_optimizer_step_range_is_pushed_and_popped(self):
        for step in (0, 1, 2, 4):
            step_events = [e for _, e in phase_events(self.events, step, "step")]
            self.assertEqual([e for e in step_events if e[0] in ("push", "pop")],
                             [["push", "optimizer.step (SGD)"], ["pop"]])

    def test_every_range_started_is_ended_once(self):
        started = [e[2] for e in self.events if e[0] == "start"]
        ended = [e[1] for e in self.events if e[0] == "end"]
        self.assertEqual(sorted(started), sorted(ended))

    def test_bridge_prints_nothing_when_all_goes_well(self):
        self.assertEqual(support.bridge_lines(self.result.stderr), [])


class HookErrors(unittest.TestCase):
    """The spy raises at one range_push, standing for a bug in the bridge."""

    @classmethod
    def setUpClass(cls):
        _, cls.plain = record()
        cls.events, cls.failing = record("--fail-on", "Net.blocks.1 (forward)")

    def test_error_in_a_hook_never_reaches_the_program(self):
        self.assertEqual(self.failing.stdout, self.plain.stdout)  # every step ran, with the same losses

    def test_error_in_a_hook_is_reported_once(self):
        lines = support.bridge_lines(self.failing.stderr)
        self.assertEqual(len(lines), 1, self.failing.stderr)
        self.assertIn("module annotation stopped after an error: InjectedFailure", lines[0])

    def test_bridge_makes_no_nvtx_call_after_an_error(self):
        calls = [i for i, e in enumerate(self.events) if e[0] != "mark"]
        self.assertEqual(self.events[calls[-1]], ["pop"])  # Net.blocks.0's, the range before the failure
        self.assertLess(calls[-1], phase_index(self.events, "backward", 0))


class LeafInputs(unittest.TestCase):
    """Leaf tensors outlive the autograd graph, and modules may get the same ones at every step."""

    @classmethod
    def setUpClass(cls):
        with tempfile.TemporaryDirectory() as tmp:
            support.run_program("leaf_inputs.py", f"{tmp}/out.json")
            with open(f"{tmp}/out.json") as f:
                cls.out = json.load(f)

    def steps(self):
        events = self.out["events"]
        marks = [i for i, e in enumerate(events) if e[:2] == ["mark", "step"]] + [len(events)]
        return [events[a:b] for a, b in zip(marks, marks[1:])]

    def test_hooks_do_not_pile_up_on_leaf_inputs(self):
        self.assertEqual(self.out["hooks"], [[0, 0]] * 4)

    def test_module_given_a_parameter_has_one_backward_range_per_step(self):
        for events in self.steps():
            starts = [e[2] for e in events if e[:2] == ["start", "LeafInputs.decoder (backward)"]]
            self.assertEqual(len(starts), 1)
            self.assertIn(["end", starts[0]], events)

    def test_every_backward_range_ends_in_its_step(self):
        for events in self.steps():
            started = sorted(e[2] for e in events if e[0] == "start")
            self.assertEqual(started, sorted(e[1] for e in events if e[0] == "end"))
            self.assertEqual(len(started), 6)  # the model, layers, its three, decoder


class Results(unittest.TestCase):
    """The hooks must not change what the program computes."""

    def gradients(self, model, *flags):
        with tempfile.TemporaryDirectory() as tmp:
            support.run_ok(self, "gradients.py", f"{tmp}/out.pt", "--model", model, *flags)
            return torch.load(f"{tmp}/out.pt")

    def assertSameTraining(self, a, b):
        self.assertEqual(a["grads"].keys(), b["grads"].keys())
        for name in a["grads"]:
            self.assertTrue(torch.equal(a["grads"][name], b["grads"][name]), name)
        self.assertTrue(torch.equal(torch.stack(a["losses"]), torch.stack(b["losses"])))

    def test_gradients_are_identical_with_and_without_the_bridge(self):
        self.assertSameTraining(self.gradients("net"), self.gradients("net", "--annotate"))

    def test_compiled_model_trains_alike_with_the_bridge(self):
        self.assertSameTraining(self.gradients("transformer"), self.gradients("transformer", "--annotate", "--compile"))


if __name__ == "__main__":
    unittest.main()


class DataLoaderRanges(unittest.TestCase):
    """Each batch a DataLoader hands out is one range, from the iterator's __next__ to its return (the last
    call, which ends the loop, too), with the batches as without the bridge."""

    def test_each_batch_is_one_range_in_the_main_process_and_with_workers(self):
        for workers in ("0", "1"):
            with self.subTest(workers=workers):
                out, _ = support.run_for_json("loader_ranges.py", workers)
                self.assertEqual(out["sums"], [6.0, 22.0, 38.0])
                loader = [e for e in out["events"] if e in (["push", "DataLoader.__next__"], ["pop"], ["mark", "batch"])]
                self.assertEqual(loader, [["push", "DataLoader.__next__"], ["pop"], ["mark", "batch"]] * 3 +
                                 [["push", "DataLoader.__next__"], ["pop"]])


class ClosureSteps(unittest.TestCase):
    """optimizer.step(closure), as Lightning calls it: the optimizer's range holds the update only, after the
    closure's forward and backward; a weightless module called per sample is no model and gets no range."""

    @classmethod
    def setUpClass(cls):
        cls.out, _ = support.run_for_json("closure_training.py")

    def test_losses_are_those_of_the_program_without_the_bridge(self):
        plain, _ = support.run_for_json("closure_training.py", "--plain")
        self.assertEqual(self.out["losses"], plain["losses"])

    def test_optimizer_range_opens_after_the_closure_and_closes_once(self):
        events = self.out["events"]
        for step in range(4):
            start = events.index(["mark", "phase", "step", step])
            end = events.index(["mark", "phase", "data", step + 1]) if step < 3 else len(events)
            part = events[start + 1 : end]
            closure_done = part.index(["mark", "closure done"])
            pushes = [i for i, e in enumerate(part) if e == ["push", "optimizer.step (SGD)"]]
            self.assertEqual(len(pushes), 1, part)
            self.assertGreater(pushes[0], closure_done)
            self.assertEqual(part[-1], ["pop"])
            self.assertIn(["push", "Sequential (forward)"], part[:closure_done])

    def test_weightless_module_gets_no_range(self):
        self.assertFalse([e for e in self.out["events"] if e[0] == "push" and e[1].startswith("Jitter")])
