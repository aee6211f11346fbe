"""`gpuscope apply --plan plan.json -- python train.py` end to end, through the real CLI (its path comes
from CMake through tests/python/run): the program's output and exit status are its own, and stderr says
what was applied."""

import json
import pathlib
import re
import tempfile
import unittest

import support

FIXES = [
    {"kind": "precision", "setting": "tf32"},
    {"kind": "optimizer", "setting": "fused"},
    {"kind": "data_loader", "num_workers": 2, "persistent_workers": True},
    {"kind": "checkpoint", "segments": 2},
    {"kind": "attention", "setting": "sdpa"},
]


@unittest.skipUnless(support.CLI, "no gpuscope CLI given (tests/python/run VENV GPUSCOPE)")
class ApplyCommand(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        with tempfile.TemporaryDirectory() as tmp:
            plan = support.write_plan(tmp, FIXES)
            cls.plain = support.run_program("train.py")
            cls.applied = support.run_program("train.py", prefix=(support.CLI, "apply", "--plan", plan, "--"))
            cls.unverified = support.run_program("train.py",
                                                 prefix=(support.CLI, "apply", "--plan", plan, "--no-verify", "--"))

    def test_program_output_is_unchanged(self):
        self.assertRegex(self.plain.stdout, r"step 3 loss \d")
        self.assertEqual(self.applied.stdout, self.plain.stdout)

    def test_program_exit_status_is_unchanged(self):
        self.assertEqual((self.plain.returncode, self.applied.returncode), (3, 3), self.applied.stderr)

    def test_stderr_lists_what_was_applied(self):
        lines = support.bridge_lines(self.applied.stderr)
        for i, fix in enumerate(FIXES[:4], 1):
            self.assertTrue(any(re.match(rf"gpuscope apply: {fix['kind']}-{i} \({fix['kind']}\): applied", line)
                                for line in lines), f"{fix['kind']}: {lines}")
        self.assertIn("gpuscope apply: checkpoint-4 (checkpoint): applied: 4 blocks of Transformer checkpointed",
                      lines)
        self.assertTrue(any("attention-5 (attention): not applied" in line for line in lines), lines)

    def test_blocks_are_recomputed_under_the_plan(self):
        self.assertIn("block forward calls 16", self.plain.stderr)  # 4 steps of 4 blocks
        self.assertIn("block forward calls 32", self.applied.stderr)

    def test_the_program_runs_as_written_first_and_the_results_are_compared(self):
        lines = support.bridge_lines(self.applied.stderr)
        self.assertRegex(lines[0], r"^gpuscope apply: running the program as written first, to compare the results "
                                   r"with \(its output: \S+/as-written.log; --no-verify skips this\)$")
        log = re.search(r"its output: (\S+);", lines[0]).group(1)
        with open(log) as f:
            self.assertIn("step 3 loss", f.read())  # its output, not on the terminal
        # No random transform: the loader's workers hand out the same batches, and SGD fused does what it did. Under
        # the loader's loose tolerance the calls after the fixes' first step are left to the losses.
        self.assertRegex(lines[-2], r"^gpuscope apply: results as the run as written: the loss of steps 1-4 and the "
                                    r"model's outputs and buffers at 2 calls \(not the model's outputs at 2 later "
                                    r"calls: computed with weights trained with the fixes, judged by the losses\) "
                                    r"compared, the largest difference [\d.]+ % "
                                    r"\(.*, tolerance 25 %: loader workers draw random transforms from generators of "
                                    r"their own\)$")
        self.assertEqual(lines[-1], "gpuscope apply: exit code 3, as the run as written")

    def test_no_verify_runs_the_program_once(self):
        self.assertEqual(self.unverified.stdout, self.plain.stdout)
        self.assertEqual(self.unverified.returncode, 3)
        self.assertFalse(any("as written" in line for line in support.bridge_lines(self.unverified.stderr)))

    def test_plan_the_cli_cannot_read_stops_before_the_program(self):
        with tempfile.TemporaryDirectory() as tmp:
            plan = support.write_plan(tmp, [], raw="{}")
            result = support.run_program("train.py", prefix=(support.CLI, "apply", "--plan", plan, "--"))
        self.assertEqual(result.returncode, 1)
        self.assertEqual(result.stdout, "")  # the program did not run
        self.assertIn("not a gpuscope plan", result.stderr)


@unittest.skipUnless(support.CLI, "no gpuscope CLI given (tests/python/run VENV GPUSCOPE)")
class FixByFix(unittest.TestCase):
    """A plan that fails as a whole is tried again one finding's fixes at a time: the compile fails (no working C++
    compiler for inductor on this CPU) and is rolled back, the fused optimizer passes on its own and is written as
    the verified plan."""

    FIXES = [{"kind": "fusion", "rule": "fusable_chains"},
             {"kind": "optimizer", "setting": "fused", "rule": "unfused_optimizer"}]

    def apply(self, tmp, *options):
        plan = support.write_plan(tmp, self.FIXES)
        result = support.run_program("gradients.py", f"{tmp}/out.pt", "--model", "transformer",
                                     prefix=(support.CLI, "apply", "--plan", plan, *options, "--"),
                                     extra_env={"CXX": "/bin/false"})
        return result, support.bridge_lines(result.stderr)

    def test_the_fixes_that_pass_alone_are_written_as_a_verified_plan(self):
        with tempfile.TemporaryDirectory() as tmp:
            result, lines = self.apply(tmp)
            self.assertEqual(result.returncode, 0, result.stderr)
            search = [line for line in lines if "fix by fix" in line]
            self.assertRegex(search[0], r"the plan as a whole failed \(fusion-1 rolled back: InductorError")
            self.assertRegex(search[1], r"dropped fusable_chains \(fusion-1\): fusion-1 rolled back: InductorError")
            self.assertRegex(search[2], r"kept unfused_optimizer \(optimizer-2\): applied: Adam, AdamW and SGD")
            self.assertRegex(search[3], r"wrote \S+/plan.verified.json: 1 of the plan's 2 fixes")
            verified = json.loads(pathlib.Path(tmp, "plan.verified.json").read_text())
            self.assertEqual([f["id"] for f in verified["fixes"]], ["optimizer-2"])
            self.assertRegex(verified["fixes"][0]["verified"], r"^applied: ")
            again = support.run_program("gradients.py", f"{tmp}/again.pt", "--model", "transformer",
                                        prefix=(support.CLI, "apply", "--plan", f"{tmp}/plan.verified.json", "--"))
            self.assertEqual(again.returncode, 0, again.stderr)
            self.assertFalse(any("fix by fix" in line for line in support.bridge_lines(again.stderr)))

    def test_no_budget_no_search(self):
        with tempfile.TemporaryDirectory() as tmp:
            result, lines = self.apply(tmp, "--search-budget", "0")
            self.assertEqual(result.returncode, 0, result.stderr)
            self.assertFalse(any("fix by fix" in line for line in lines), lines)
            self.assertFalse(pathlib.Path(tmp, "plan.verified.json").exists())


if __name__ == "__main__":
    unittest.main()
