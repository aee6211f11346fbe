"""Once its module hooks are gone, the bridge times some recorded steps, pauses the recording (an NVTX mark the
collector switches at) for as many steps, times them, resumes, times as many recorded steps again, and marks the
three figures (programs/paused_steps.py, real torch on the CPU)."""

import re
import unittest

import support

HOOKS_REMOVED = "gpuscope: module hooks removed"
TIMED = "gpuscope: recorded steps timed"
PAUSED = "gpuscope: recording paused"
RESUMED = "gpuscope: recording resumed"
COST = re.compile(r"^gpuscope: recording's cost timed \((\d+) steps: (\d+) ns recorded before, (\d+) ns paused, "
                  r"(\d+) ns recorded after\)$")


def run(*args):
    return support.run_for_json("paused_steps.py", *args)


def marks_by_step(events):
    """[(the step it came in, the mark's text)] for the bridge's NVTX marks."""
    step, out = None, []
    for event in events:
        if event[0] == "mark" and event[1] == "step":
            step = event[2]
        elif event[0] == "nvtx mark":
            out.append((step, event[1]))
    return out


class PausedSteps(unittest.TestCase):
    def test_the_pause_follows_the_timed_recorded_steps_and_lasts_as_many(self):
        out, _ = run("3")
        marks = marks_by_step(out["events"])
        # Annotated steps 0-1; hooks removed at step 2 (its switch, timed neither way); steps 3-5 timed recorded;
        # paused at step 6 (the pause's switch), steps 7-9 timed paused; resumed at step 10 (its switch), steps 11-13
        # timed recorded again; the figures at step 14.
        self.assertEqual(marks[:4], [(2, HOOKS_REMOVED), (3, TIMED), (6, PAUSED), (10, RESUMED)])
        self.assertEqual(len(marks), 5)
        self.assertEqual(marks[4][0], 14)
        figures = COST.match(marks[4][1])
        self.assertIsNotNone(figures, marks[4][1])
        self.assertEqual(int(figures.group(1)), 3)
        for group in (2, 3, 4):
            self.assertGreater(int(figures.group(group)), 0)

    def test_with_gradient_accumulation_a_step_is_the_optimizers(self):
        out, _ = run("2", "--accumulate", "3")
        self.assertEqual([step for step, _ in marks_by_step(out["events"])], [2, 3, 5, 8, 11])

    def test_a_window_that_held_an_evaluation_starts_again(self):
        out, _ = run("3", "--evaluate-every", "5")
        # Evaluations after steps 4, 9 and 14: the recorded window starts again at step 5 (marked again), the paused
        # one at step 10, the one after the pause at step 15; each then times 3 steps.
        self.assertEqual([(step, text.split(" (")[0]) for step, text in marks_by_step(out["events"])],
                         [(2, HOOKS_REMOVED), (3, TIMED), (5, TIMED), (8, PAUSED), (13, RESUMED),
                          (18, "gpuscope: recording's cost timed")])

    def test_a_program_that_ends_while_the_last_steps_are_timed_gives_the_figures_of_those_it_ran(self):
        # Timed 3-7 recorded, paused at 7, 8-12 paused, resumed at 12, recorded from 13: ended after step 15, two
        # steps of the four after the pause were timed, and the figure after is theirs, scaled to four.
        out, _ = run("4", "--steps", "16")
        marks = marks_by_step(out["events"])
        self.assertEqual([step for step, _ in marks], [2, 3, 7, 12, 15])
        figures = COST.match(marks[-1][1])
        self.assertIsNotNone(figures, marks[-1][1])
        self.assertEqual(int(figures.group(1)), 4)
        out, _ = run("4", "--steps", "15")  # one step timed after it: no figures
        self.assertEqual([step for step, _ in marks_by_step(out["events"])], [2, 3, 7, 12])

    def test_zero_steps_times_nothing(self):
        out, _ = run("0")
        self.assertEqual(marks_by_step(out["events"]), [(2, HOOKS_REMOVED)])

    def test_results_are_those_of_the_program_alone(self):
        _, bridged = run("3")
        _, plain = run("3", "--no-bridge")
        self.assertEqual(bridged.stdout, plain.stdout)
        self.assertEqual(support.bridge_lines(bridged.stderr), [])


if __name__ == "__main__":
    unittest.main()
