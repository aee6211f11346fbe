"""The bridge annotates the first GPUSCOPE_TORCH_STEPS steps, then removes its module hooks so the rest run
at the program's own speed, keeping only the root module's forward range and the optimizer step's, and an
NVTX mark where it switched (programs/hook_free_steps.py, real torch on the CPU)."""

import unittest

import support

MARK = "gpuscope: module hooks removed"
STATE_MARK = "gpuscope: state carried into "


def run(*args):
    """Runs hook_free_steps.py; returns (its JSON output, the CompletedProcess)."""
    return support.run_for_json("hook_free_steps.py", *args)


def split(events, kind):
    """{N: the events from ["mark", kind, N] to the next mark of a step or call}."""
    out, current = {}, None
    for event in events:
        if event[0] == "mark" and event[1] in ("step", "infer"):
            current = (event[1], event[2])
            if event[1] == kind:
                out[event[2]] = []
            continue
        if current and current[0] == kind:
            out[current[1]].append(event)
    return out


def nvtx_calls(events):
    return [e for e in events if e[0] != "mark"]


class TrainingThenInference(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.out, cls.result = run("3")
        _, cls.plain = run("3", "--no-bridge")
        cls.steps = split(cls.out["events"], "step")
        cls.calls = split(cls.out["events"], "infer")

    def test_first_steps_carry_module_ranges(self):
        for step in range(3):
            pushed = {e[1] for e in self.steps[step] if e[0] == "push"}
            self.assertIn("Net.blocks.1.fc2 (forward)", pushed)
            self.assertTrue(any(e[0] == "start" and e[1] == "Net.blocks.1 (backward)" for e in self.steps[step]))

    def test_hooks_go_at_the_root_forward_after_the_last_annotated_step(self):
        marks = [(n, e) for n, events in self.steps.items() for e in events if e == ["nvtx mark", MARK]]
        self.assertEqual(len(marks), 1)
        self.assertEqual(marks[0][0], 3)
        self.assertEqual(nvtx_calls(self.steps[3])[:2], [["nvtx mark", MARK], ["push", "Net (forward)"]])

    def test_a_batch_handed_anew_is_no_state_carried(self):
        self.assertFalse([e for e in self.out["events"] if e[0] == "nvtx mark" and e[1].startswith(STATE_MARK)])

    def test_later_steps_keep_only_the_root_forward_and_the_optimizer_step(self):
        for step in range(4, 8):
            self.assertEqual(nvtx_calls(self.steps[step]),
                             [["push", "Net (forward)"], ["pop"], ["push", "optimizer.step (Adam)"], ["pop"]])

    def test_inference_calls_after_the_switch_keep_the_root_range(self):
        for call in range(6):
            self.assertEqual(nvtx_calls(self.calls[call]), [["push", "Net (forward)"], ["pop"]])

    def test_global_module_hooks_are_removed(self):
        self.assertEqual(self.out["hooks"], {"start": 2, "after training": 0, "after inference": 0})

    def test_every_range_started_is_ended_once(self):
        events = self.out["events"]
        self.assertEqual(sorted(e[2] for e in events if e[0] == "start"), sorted(e[1] for e in events if e[0] == "end"))
        self.assertEqual(sum(e[0] == "push" for e in events), sum(e[0] == "pop" for e in events))

    def test_results_are_those_of_the_program_alone(self):
        self.assertEqual(self.result.stdout, self.plain.stdout)
        self.assertEqual(support.bridge_lines(self.result.stderr), [])


class InferenceOnly(unittest.TestCase):
    """No optimizer ever steps: the steps are counted in the model's calls."""

    @classmethod
    def setUpClass(cls):
        cls.out, _ = run("2", "--inference-only")
        cls.calls = split(cls.out["events"], "infer")

    def test_switch_comes_at_the_third_call(self):
        self.assertIn(["push", "Net.blocks.0 (forward)"], self.calls[1])
        self.assertEqual(nvtx_calls(self.calls[2]), [["nvtx mark", MARK], ["push", "Net (forward)"], ["pop"]])
        self.assertEqual(nvtx_calls(self.calls[5]), [["push", "Net (forward)"], ["pop"]])


class GradientAccumulation(unittest.TestCase):
    """Four forwards per optimizer step: the steps are the optimizer's, also before its first step."""

    def test_switch_comes_after_the_optimizer_steps(self):
        out, _ = run("2", "--accumulate", "4")
        steps = split(out["events"], "step")
        marks = [n for n, events in steps.items() for e in events if e == ["nvtx mark", MARK]]
        self.assertEqual(marks, [2])
        self.assertIn(["push", "Net.blocks.0 (forward)"], steps[1])


class WeightsUpdatedByHand(unittest.TestCase):
    """No optimizer is ever made: each training call is a step, and the hooks go after as many as asked for, not
    after the 16 calls a step that gradient accumulation is allowed before an optimizer's first step."""

    def test_switch_comes_after_the_steps_asked_for(self):
        out, result = run("2", "--by-hand")
        steps = split(out["events"], "step")
        marks = [n for n, events in steps.items() for e in events if e == ["nvtx mark", MARK]]
        self.assertEqual(marks, [2])
        _, plain = run("2", "--by-hand", "--no-bridge")
        self.assertEqual(result.stdout, plain.stdout)


class ShardedByFsdp(unittest.TestCase):
    """FSDP1 with use_orig_params (Accelerate's and the Trainer's FSDP): in the forward a parameter is a view of its
    flat parameter, on which no accumulation hook can go. The bridge's first such hook stopped its annotation with an
    error, and its hooks stayed on, doing nothing, for the whole run (a Llama job recorded 79.5 ms a step against
    44-51 plain, 2 x H200, 2026-11-29)."""

    def test_annotated_steps_then_hook_free_as_unsharded(self):
        out, result = run("2", "--fsdp")
        self.assertEqual(support.bridge_lines(result.stderr), [])
        steps = split(out["events"], "step")
        marks = [n for n, events in steps.items() for e in events if e == ["nvtx mark", MARK]]
        self.assertEqual(marks, [2])
        ranges = [e[1] for e in nvtx_calls(steps[1]) if e[0] == "push"]
        self.assertIn("FullyShardedDataParallel (forward)", ranges)
        self.assertTrue(any(r.startswith("FullyShardedDataParallel._fsdp_wrapped_module.") for r in ranges), ranges)
        _, plain = run("2", "--fsdp", "--no-bridge")
        self.assertEqual(result.stdout, plain.stdout)


class AfterAnError(unittest.TestCase):
    """An error in the bridge's hooks stops its annotation; its module hooks go then, so that the program does not
    pay for them, doing nothing, for the rest of its run."""

    def test_the_module_hooks_go(self):
        out, result = run("5", "--fail-on", "Net.blocks.1 (forward)")
        lines = support.bridge_lines(result.stderr)
        self.assertEqual(len(lines), 1, result.stderr)
        self.assertIn("module annotation stopped after an error", lines[0])
        self.assertGreater(out["hooks"]["start"], 0)
        self.assertEqual(out["hooks"]["after training"], 0)
        _, plain = run("5", "--no-bridge")
        self.assertEqual(result.stdout, plain.stdout)


class CompiledModel(unittest.TestCase):
    """A model the script compiled: the compiler would trace the module hooks in and guard on them, so they go at
    its first call, before it compiles; removed later, they would make it compile again inside the timed steps."""

    @classmethod
    def setUpClass(cls):
        cls.out, cls.result = run("3", "--compiled")
        cls.plain, cls.plain_result = run("3", "--compiled", "--no-bridge")
        cls.steps = split(cls.out["events"], "step")

    def test_hooks_go_at_the_first_call(self):
        self.assertEqual(nvtx_calls(self.steps[0])[:2], [["nvtx mark", MARK], ["push", "OptimizedModule (forward)"]])
        self.assertEqual(self.out["hooks"]["after training"], 0)

    def test_it_compiles_as_often_as_without_the_bridge(self):
        self.assertGreater(self.plain["frames_compiled"], 0)
        self.assertEqual(self.out["frames_compiled"], self.plain["frames_compiled"])

    def test_results_are_those_of_the_program_alone(self):
        self.assertEqual(self.result.stdout, self.plain_result.stdout)


class StateFedBack(unittest.TestCase):
    """A forward handed what its previous call returned (a recurrent state, detached) is said once by an NVTX mark,
    in the annotated steps or in the hook-free ones: a replay of CUDA graphs would overwrite that state, and the
    advisor leaves them out of apply's plan. A new state each step is not, though it often lands at an address an
    earlier output was freed from."""

    def marks(self, steps, mode):
        out, _ = support.run_for_json("state_fed_back.py", steps, mode)
        return [e[1] for e in out["events"] if e[0] == "nvtx mark" and e[1].startswith(STATE_MARK)]

    def test_said_once_in_the_annotated_steps(self):
        self.assertEqual(self.marks("4", "carry"), [STATE_MARK + "Cell"])

    def test_said_once_at_the_switch_to_hook_free_steps(self):
        self.assertEqual(self.marks("1", "carry"), [STATE_MARK + "Cell"])

    def test_a_new_state_at_a_reused_address_is_not(self):
        self.assertEqual(self.marks("4", "fresh"), [])


class StepsSetting(unittest.TestCase):
    def test_all_keeps_the_hooks(self):
        out, _ = run("all")
        self.assertNotIn(["nvtx mark", MARK], out["events"])
        self.assertEqual(out["hooks"]["after inference"], 2)

    def test_a_bad_value_is_reported_once_and_the_default_used(self):
        out, result = run("-1")
        lines = support.bridge_lines(result.stderr)
        self.assertEqual(len(lines), 1, result.stderr)
        self.assertIn("GPUSCOPE_TORCH_STEPS='-1'", lines[0])
        self.assertEqual(out["hooks"]["after training"], 0)  # the default, 5 steps, ran out in training


if __name__ == "__main__":
    unittest.main()
