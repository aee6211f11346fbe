"""values.py: what a run notes of the values the program computes (real torch on the CPU, the program run as
`gpuscope apply` runs it as written), and how two runs' values are compared."""

import json
import math
import pathlib
import sys
import tempfile
import unittest

import torch

import support

sys.path.insert(0, str(support.BRIDGE))
from gpuscope_torch import values, verify  # noqa: E402  (functions only: nothing is installed in this process)


def noted(*args):
    """values-0.json of results.py run as written with ARGS, and the program's stdout."""
    with tempfile.TemporaryDirectory() as tmp:
        result = support.run_as_written("results.py", *args, values_out=tmp)
        if result.returncode != 0:
            raise AssertionError(result.stderr)
        return json.loads((pathlib.Path(tmp) / "values-0.json").read_text()), result.stdout


class Noted(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.values, cls.stdout = noted("--batchnorm", "--steps", "6")

    def test_each_backward_notes_its_loss(self):
        losses = self.values["losses"]
        self.assertEqual(len(losses), 6)
        self.assertTrue(all(0 < loss < 10 for loss in losses), losses)

    def test_the_models_first_calls_are_noted(self):
        self.assertEqual(len(self.values["models"]), 1)  # the classifier; its blocks are inside it
        calls = self.values["models"][0]
        self.assertEqual(len(calls), values.CALLS)
        self.assertEqual(calls[0]["shapes"], [[64, 5]])
        stats = calls[0]["outputs"][0]
        self.assertEqual(len(stats), 2 + 320)  # sum, sum of magnitudes, every value of a 64 x 5 output
        self.assertAlmostEqual(stats[1], sum(abs(v) for v in stats[2:]), places=3)

    def test_buffers_are_noted_after_each_call(self):
        calls = self.values["models"][0]
        # Each BatchNorm1d: running_mean, running_var, num_batches_tracked; a sum and a sum of magnitudes each.
        self.assertEqual(len(calls[0]["buffers"]), 4 * 3 * 2)
        tracked = [calls[c]["buffers"][4] for c in range(values.CALLS)]
        self.assertEqual(tracked, [1.0, 2.0, 3.0, 4.0])
        # Each BatchNorm's running statistics share its index; its counter stands alone.
        self.assertEqual(calls[0]["buffer_groups"], [0, 0, -1, 1, 1, -1, 2, 2, -1, 3, 3, -1])

    def test_calls_are_noted_random_only_where_they_drew_random_numbers(self):
        self.assertFalse(any(call["random"] for call in self.values["models"][0]))
        # Functional dropout, no dropout module to find: the generator the call moved tells. Two training calls
        # drew; the evaluation's did not.
        drew, _ = noted("--dropout", "0.2", "--steps", "2")
        self.assertEqual([call["random"] for call in drew["models"][0]], [True, True, False])

    def test_the_sums_of_each_calls_inputs_are_noted(self):
        x = self.values["models"][0][0]["inputs"]
        self.assertEqual(len(x), 2)  # the one input batch: its sum and sum of magnitudes
        self.assertGreater(x[1], abs(x[0]))

    def test_the_program_prints_what_it_prints_without_gpuscope(self):
        self.assertEqual(self.stdout, support.run_ok(self, "results.py", "--batchnorm", "--steps", "6").stdout)


class Failures(unittest.TestCase):
    def test_outputs_and_losses_that_cannot_be_noted_leave_the_program_alone(self):
        with tempfile.TemporaryDirectory() as tmp:
            result = support.run_as_written("odd_outputs.py", values_out=tmp)
        plain = support.run_ok(self, "odd_outputs.py")
        self.assertEqual((result.returncode, result.stdout), (0, plain.stdout), result.stderr)
        self.assertIn("gpuscope: values: the model's outputs could not be noted: RuntimeError('sealed')",
                      result.stderr)
        self.assertIn("gpuscope: values: noting stopped after an error: RuntimeError('no detach')", result.stderr)


class Watch(unittest.TestCase):
    """After apply's check kept the model's fixes, the mean loss of each further window of ten steps is compared
    as the program goes (CPU losses: compared when noted; on a GPU, once copied to the host)."""

    def watched(self, leaves_at):
        result = support.run_program("watch.py", leaves_at)
        self.assertEqual(result.returncode, 0, result.stderr)
        return json.loads(result.stdout)

    def test_a_trajectory_that_leaves_the_run_as_written_rolls_the_fixes_back(self):
        out = self.watched(15)
        self.assertEqual(out["rolled_back_at"], 20)  # the window of steps 11-20, complete at step 20
        self.assertEqual(out["reason"], "changed results: the mean loss of steps 11-20 differs by 29.3 % from the run "
                                        "as written (tolerance 5 %: bf16 keeps 8 mantissa bits)")

    def test_a_trajectory_that_stays_keeps_them(self):
        self.assertEqual(self.watched(0), {"rolled_back_at": None, "reason": None})


class Picks(unittest.TestCase):
    def test_the_samples_span_a_large_output_and_stay_inside_it(self):
        import torch

        count = 8 * 1024 * 50257  # a GPT-2 batch's logits: float32 cannot hold its last index
        chosen = values.picks(count, "cpu")
        self.assertEqual(len(chosen), values.SAMPLE)
        self.assertEqual((chosen[0].item(), chosen[-1].item()), (0, count - 1))
        self.assertTrue(bool((chosen[1:] > chosen[:-1]).all()))
        self.assertEqual(values.picks(5, "cpu").tolist(), [0, 1, 2, 3, 4])
        self.assertEqual(chosen.dtype, torch.int64)

    def test_a_strided_output_is_sampled_in_the_order_of_its_elements(self):
        import torch

        base = torch.arange(12.0).reshape(3, 4)
        for t in (base, base.t(), base[:, ::2], torch.tensor(5.0)):
            stats = values._stats(t).tolist()
            self.assertEqual(stats[:2], [t.sum().item(), t.abs().sum().item()])
            self.assertEqual(stats[2:], t.reshape(-1).double().tolist())  # every value of a small tensor


def run(losses=(), outputs=None, buffers=(), groups=None):
    """Values as a run notes them: one model whose calls each have one output (sum, magnitude, sample)."""
    calls = [{"shapes": [[len(o) - 2]], "outputs": [list(o)], "buffers": list(buffers), "buffer_groups": groups}
             for o in (outputs or [])]
    return {"losses": list(losses), "models": [calls] if calls else []}


STRICT = (1e-3, 1e-3)


class Compare(unittest.TestCase):
    def test_equal_values_differ_by_nothing(self):
        a = run([2.0, 1.5], [[1.0, 3.0, -1.0, 2.0]], [4.0, 4.0])
        worst, beyond, words = values.compare(a, a, STRICT, STRICT)
        self.assertEqual((worst["difference"], beyond), (0.0, None))
        self.assertEqual(words, "the loss of steps 1-2 and the model's outputs and buffers at 1 call")

    def test_losses_after_the_first_are_compared_by_the_mean_of_each_window(self):
        ref = [2.0] + [1.0, 3.0] * 7  # 15 steps: windows 2-10 and 11-15
        mine = [2.0] + [3.0, 1.0] * 7  # each step off by 100 % (or 67 %), the means of the windows close
        worst, beyond, _ = values.compare(run(ref), run(mine), STRICT, (0.05, 0.05))
        self.assertIsNone(beyond)
        self.assertEqual(worst["where"], "the mean loss of steps 11-15")
        self.assertAlmostEqual(worst["difference"], 0.4 / 2.2)  # means 1.8 against 2.2
        # The loss as written moves by 2 from step to step, its mean is 2: that spread is the tolerance.
        self.assertEqual((worst["tolerance"], worst["basis"]), (1.0, "moves"))

    def test_a_trajectory_that_leaves_the_run_as_written(self):
        ref = [2.0] + [1.0 - 0.01 * i for i in range(24)]  # falls steadily: it barely moves from step to step
        mine = ref[:10] + [v * 1.3 for v in ref[10:]]  # from step 11 on
        _, beyond, _ = values.compare(run(ref), run(mine), STRICT, (0.1, 0.05))
        self.assertEqual(beyond["where"], "the mean loss of steps 11-20")
        self.assertAlmostEqual(beyond["difference"], 0.3)
        self.assertEqual((beyond["tolerance"], beyond["basis"]), (0.05, "fixes"))

    def test_windows(self):
        self.assertEqual(values.windows(1), [])
        self.assertEqual(values.windows(4), [(2, 4)])
        self.assertEqual(values.windows(11), [(2, 10)])  # a last window of one step is too short to mean anything
        self.assertEqual(values.windows(25), [(2, 10), (11, 20), (21, 25)])

    def test_the_first_call_is_held_to_the_first_tolerance(self):
        ref = run([], [[1.0, 3.0, -1.0, 2.0], [1.0, 3.0, -1.0, 2.0]])
        mine = run([], [[1.0, 3.0, -1.0, 2.04], [1.0, 3.0, -1.0, 2.04]])
        _, beyond, _ = values.compare(ref, mine, STRICT, (0.05, 0.05))
        self.assertEqual((beyond["where"], beyond["tolerance"], beyond["basis"]),
                         ("the model's outputs at call 1", 1e-3, "start"))

    def test_samples_are_relative_to_the_largest_value(self):
        ref = run([], [[0.0, 0.0, 1000.0, 0.001]] * 2)
        mine = run([], [[0.0, 0.0, 1000.0, 0.002]] * 2)  # a tiny value off by half of itself
        worst, beyond, _ = values.compare(ref, mine, STRICT, STRICT)
        self.assertIsNone(beyond)
        self.assertAlmostEqual(worst["difference"], 1e-6)

    def test_calls_that_drew_random_numbers_compare_their_shapes_only(self):
        ref, mine = run([], [[1.0, 3.0, -1.0, 2.0]] * 2), run([], [[3.0, 3.0, 2.0, 1.0]] * 2)
        for call in mine["models"][0]:
            call["random"] = True
        worst, beyond, words = values.compare(ref, mine, STRICT, STRICT)
        self.assertEqual((worst["difference"], beyond), (0.0, None))
        mine["models"][0][1]["shapes"] = [[3]]
        self.assertEqual(values.compare(ref, mine, STRICT, STRICT)[1]["difference"], math.inf)

    def test_calls_handed_other_inputs_are_not_compared(self):
        # Loader workers drew other random crops: the outputs differ as much as the batches do.
        ref = run([], [[1.0, 3.0, -1.0, 2.0]] * 2, [4.0, 4.0])
        mine = run([], [[1.0, 3.0, -1.0, 2.0], [3.0, 3.0, 2.0, 1.0]], [4.0, 4.0])
        for call, x in zip(ref["models"][0] + mine["models"][0], ([5.0, 7.0], [5.0, 7.0], [5.0, 7.0], [6.0, 7.5])):
            call["inputs"] = x
        worst, beyond, words = values.compare(ref, mine, STRICT, STRICT)
        self.assertEqual((worst["where"], worst["difference"], beyond), ("the model's outputs at call 1", 0.0, None))
        mine["models"][0][1]["inputs"] = [5.0, 7.0]  # handed the same batch, call 2 differs
        self.assertEqual(values.compare(ref, mine, STRICT, STRICT)[1]["where"], "the model's outputs at call 2")
        mine["models"][0][1]["inputs"] = [6.0, 7.5]
        self.assertEqual(words, "the model's outputs and buffers at 1 call (not the model's outputs at 1 call: "
                                "handed other batches than the run as written)")
        mine["models"][0][0]["inputs"] = [5.0 + 1e-7, 7.0]  # float32 rounding is the same batch
        self.assertTrue(values.same_inputs(mine["models"][0][0], ref["models"][0][0]))

    def test_outputs_of_calls_trained_with_the_fixes_are_left_to_the_losses(self):
        # Training in bf16: from call 3 on the weights are those the fixes' own steps made, and the outputs carry
        # all that training made of the fixes' rounding (13 % at call 3); in inference the same difference counts.
        ref = run([2.0, 1.9, 1.8, 1.7], [[1.0, 3.0, -1.0, 2.0]] * 4)
        mine = run([2.0, 1.9, 1.8, 1.7], [[1.0, 3.0, -1.0, 2.0]] * 2 + [[1.0, 3.0, -1.0, 2.3]] * 2)
        for trained in (True, False):
            for calls in (ref["models"][0], mine["models"][0]):
                for c, call in enumerate(calls):
                    call["backwards"] = c if trained else 0
            worst, beyond, words = values.compare(ref, mine, STRICT, (0.1, 0.05))
            if trained:
                self.assertIsNone(beyond)
                self.assertEqual(words, "the loss of steps 1-4 and the model's outputs and buffers at 2 calls (not "
                                        "the model's outputs at 2 later calls: computed with weights trained with the "
                                        "fixes, judged by the losses)")
                # Fixes that keep the arithmetic (checkpointing) are held to every call, trained or not.
                self.assertEqual(values.compare(ref, mine, STRICT, STRICT)[1]["where"],
                                 "the model's outputs at call 3")
            else:
                self.assertEqual(beyond["where"], "the model's outputs at call 3")

    def test_windows_over_other_random_batches_may_differ_by_what_the_batches_alone_set(self):
        # Loader workers drew other random crops: each step's loss is another sample, and windows of ten such steps
        # differ by their standard error, whatever the fixes do (16 % against a median move of 11 %: a torchvision
        # training under its loader fix on an H100, 2026-11-27, bench/corpus/tv_loader_main_thread).
        import random

        ref_noise, my_noise = random.Random(1), random.Random(2)
        ref = run([2.0] + [2.0 + ref_noise.gauss(0, 0.25) for _ in range(24)], [[1.0, 3.0, -1.0, 2.0]])
        mine = run([2.0] + [2.0 + my_noise.gauss(0, 0.25) for _ in range(24)], [[1.5, 3.0, -1.0, 2.5]])
        ref["models"][0][0]["inputs"], mine["models"][0][0]["inputs"] = [5.0, 7.0], [6.0, 7.5]
        scatter = values.step_scatter(ref["losses"])
        worst, beyond, _ = values.compare(ref, mine, STRICT, (0.1, 0.05))
        self.assertIsNone(beyond)
        self.assertEqual(worst["basis"], "draws")
        self.assertIn(worst["tolerance"], (values.sampling_bound(scatter, 9), values.sampling_bound(scatter, 10),
                                           values.sampling_bound(scatter, 5)))
        # For Gaussian draws the scatter is what the median change says (0.954 sigma), within what 24 draws allow.
        self.assertAlmostEqual(scatter, values.median_move(ref["losses"]) / 0.954, delta=0.4 * scatter)
        # A fix that moves the loss by half is beyond it still.
        mine["losses"] = [2.0] + [v * 1.5 for v in mine["losses"][1:]]
        self.assertEqual(values.compare(ref, mine, STRICT, (0.1, 0.05))[1]["basis"], "draws")
        # Handed the same batches, the windows are held to the loss's own moves, not to what sampling sets.
        mine["models"][0][0]["inputs"] = [5.0, 7.0]
        mine["models"][0][0]["outputs"] = [[1.0, 3.0, -1.0, 2.0]]
        mine["losses"] = [2.0] + [v / 1.5 for v in mine["losses"][1:]]
        worst, beyond, _ = values.compare(ref, mine, STRICT, (0.1, 0.05))
        self.assertNotEqual((beyond or worst)["basis"], "draws")

    def test_the_scatter_of_a_heavy_tailed_loss_counts_its_tails(self):
        # A batch of four now and then confidently wrong: most steps near 0.4, one in six near 2 (a transfer-learning
        # fine-tune at batch 4: the median change read sigma as 0.31 of the mean loss, the changes' root mean square
        # as 0.74).
        losses = [2.0 if i % 6 == 3 else 0.4 + 0.05 * (i % 3) for i in range(60)]
        self.assertGreater(values.step_scatter(losses), 2 * values.median_move(losses) / 0.954)

    def test_batches_other_only_after_the_first_calls_are_other_batches(self):
        # Twice the loader workers hand out each worker's first batch as before and other random crops after it
        # (PyTorch's transfer-learning tutorial, 4 workers made 8: its windows differed by 39 %, over the loss's
        # own moves of 29.5 %, H200, 2026-12-01): the later calls' inputs tell.
        import random

        ref_noise, my_noise = random.Random(1), random.Random(2)
        ref = run([2.0] + [2.0 + ref_noise.gauss(0, 0.25) for _ in range(24)], [[1.0, 3.0, -1.0, 2.0]])
        mine = run([2.0] + [2.0 + my_noise.gauss(0, 0.25) for _ in range(24)], [[1.0, 3.0, -1.0, 2.0]])
        ref["models"][0][0]["inputs"] = mine["models"][0][0]["inputs"] = [5.0, 7.0]
        ref["later_inputs"], mine["later_inputs"] = {"10": [5.5, 7.0], "20": [4.0, 6.0]}, {"20": [4.0, 6.0]}
        self.assertNotEqual(values.compare(ref, mine, STRICT, (0.1, 0.05))[0]["basis"], "draws")
        mine["later_inputs"]["10"] = [6.5, 7.5]
        self.assertEqual(values.compare(ref, mine, STRICT, (0.1, 0.05))[0]["basis"], "draws")

    def test_a_window_watched_after_the_check_knows_of_other_batches(self):
        # After the check the windows are judged from the losses alone, copied off the device as they come; one
        # beyond the loss's own moves is judged again with the batches' sums before anything is rolled back.
        import random

        noise = random.Random(3)
        ref_losses = [2.0] + [2.0 + noise.gauss(0, 0.25) for _ in range(19)]
        mine_losses = ref_losses[:10] + [v * 1.14 for v in ref_losses[10:]]
        reference = dict(run(ref_losses), later_inputs={"10": [5.0, 7.0]})
        undone = []
        saved = list(values._losses), dict(values._later["sums"]), list(verify._reference), dict(verify._watching)
        try:
            values._losses[:] = [torch.tensor(v) for v in mine_losses]
            verify._reference[:] = [reference]
            for later, rolled_back in (([5.0, 7.0], True), ([6.5, 7.5], False)):
                values._later["sums"].clear()
                values._later["sums"][10] = torch.tensor(later)
                undone.clear()
                verify._watching.clear()
                verify._watching.update(kinds=["data_loader"], undo=undone.append)
                verify._compare_window(20)
                self.assertEqual(bool(undone), rolled_back, undone)
        finally:
            values._losses[:], verify._reference[:] = saved[0], saved[2]
            values._later["sums"].clear()
            values._later["sums"].update(saved[1])
            verify._watching.clear()
            verify._watching.update(saved[3])

    def test_the_first_models_later_inputs_are_noted(self):
        later, _ = noted("--steps", "12")
        self.assertEqual(list(later["later_inputs"]), ["10"])
        self.assertEqual(len(later["later_inputs"]["10"]), len(later["models"][0][0]["inputs"]))

    def test_nan_differs_from_a_number_but_not_from_nan(self):
        self.assertIsNone(values.compare(run([math.nan]), run([math.nan]), STRICT, STRICT)[1])
        self.assertEqual(values.compare(run([1.0]), run([math.nan]), STRICT, STRICT)[1]["difference"], math.inf)

    def test_another_shape_differs_infinitely(self):
        ref = run([], [[1.0, 1.0, 1.0]])
        mine = {"losses": [], "models": [[{"shapes": [[2]], "outputs": [[1.0, 1.0, 1.0]], "buffers": []}]]}
        self.assertEqual(values.compare(ref, mine, STRICT, STRICT)[1]["difference"], math.inf)

    def test_buffers_are_relative_to_their_magnitude(self):
        ref = run([], [[1.0, 1.0, 1.0]] * 2, buffers=[0.01, 10.0])
        mine = run([], [[1.0, 1.0, 1.0]] * 2, buffers=[0.02, 10.0])
        self.assertAlmostEqual(values.compare(ref, mine, STRICT, STRICT)[0]["difference"], 0.001)

    def test_a_modules_statistics_share_its_scale(self):
        # A DeepLabV3 BatchNorm early in training (measured): a running mean near nothing, its variance near its
        # channels' count; the counter stands alone.
        ref_buffers = [2.5e-5, 1.4e-4, 60.0, 60.0, 3.0, 3.0]
        mine_buffers = [-2.1e-5, 1.4e-4, 60.0, 60.0, 3.0, 3.0]
        ref = run([], [[1.0, 1.0, 1.0]] * 2, buffers=ref_buffers, groups=[0, 0, -1])
        mine = run([], [[1.0, 1.0, 1.0]] * 2, buffers=mine_buffers)
        self.assertAlmostEqual(values.compare(ref, mine, STRICT, STRICT)[0]["difference"], 4.6e-5 / 60)
        ungrouped = run([], [[1.0, 1.0, 1.0]] * 2, buffers=ref_buffers)
        self.assertGreater(values.compare(ungrouped, mine, STRICT, STRICT)[0]["difference"], 0.3)
        counted_twice = run([], [[1.0, 1.0, 1.0]] * 2, buffers=ref_buffers[:4] + [4.0, 4.0])
        self.assertAlmostEqual(values.compare(ref, counted_twice, STRICT, STRICT)[0]["difference"], 1 / 3)

    def test_nothing_in_common(self):
        worst, beyond, words = values.compare(run(), run(), STRICT, STRICT)
        self.assertEqual((worst, beyond), (None, None))
        self.assertIn("nothing", words)



class ScriptsOwnPrecision(unittest.TestCase):
    """A script that runs its model under its own bf16 autocast: the compiler's reordered sums round to bf16, and
    the check allows for it (a transformer with a hand-written AdamW moved its mean loss by 2.85 % compiled)."""

    def setUp(self):
        self.saved = list(verify._reference), list(verify._own_bf16)
        ref = [2.0] + [1.0 - 0.01 * i for i in range(19)]  # 20 steps, moving 1 % from step to step
        verify._reference[:] = [run(ref)]
        self.mine = run(ref[:10] + [v * 1.03 for v in ref[10:]])  # the mean of steps 11-20 off by 3 %

    def tearDown(self):
        verify._reference[:], verify._own_bf16[:] = self.saved

    def test_compiled_fp32_sums_are_held_to_the_compilers_tolerance(self):
        verify._own_bf16.clear()
        changed, _ = verify.verdict(["compile"], self.mine)
        self.assertRegex(changed, r"the mean loss of steps 11-20 differs by 3 % .*tolerance 2 %")

    def test_compiled_sums_in_the_scripts_bf16_get_bf16s_tolerance(self):
        verify.program_runs_autocast()
        changed, compared = verify.verdict(["compile"], self.mine)
        self.assertIsNone(changed)
        self.assertIn("tolerance 5 %: the compiler reorders sums the program itself runs in bf16", compared)

    def test_the_scripts_autocast_is_seen(self):
        from gpuscope_torch import apply  # its functions only: nothing is installed in this process

        self.assertFalse(apply._script_autocast())
        with torch.autocast("cpu", dtype=torch.bfloat16):
            self.assertTrue(apply._script_autocast())


if __name__ == "__main__":
    unittest.main()
