"""gpuscope's JAX bridge without a GPU: what its sampler keeps of memory_stats() and writes for `gpuscope record
--jax` to merge, and that it stays out of the way where it is not asked for. (On real JAX it runs on the GPU
machine: scripts/jax-memory-run.sh.)"""

import json
import os
import pathlib
import subprocess
import sys
import tempfile
import threading
import time
import unittest
from unittest import mock

import gpuscope_jax
from gpuscope_jax import apply


class Device:
    """What the sampler reads of a jax.Device: its platform, id and memory_stats()."""

    def __init__(self, platform, id, stats):
        self.platform, self.id, self.stats = platform, id, stats

    def memory_stats(self):
        return self.stats() if callable(self.stats) else self.stats


def stats(in_use, peak=None, pool=3 << 30, limit=4 << 30):
    return {"bytes_in_use": in_use, "peak_bytes_in_use": peak or in_use, "pool_bytes": pool, "bytes_limit": limit,
            "num_allocs": 7}


class Sampler(unittest.TestCase):
    def test_keeps_a_reading_when_a_figure_changed_and_writes_what_the_merge_reads(self):
        figures = iter([stats(1 << 20), stats(1 << 20), stats(5 << 20), stats(2 << 20, peak=5 << 20)])
        gpu = Device("gpu", 0, lambda: next(figures))
        sampler = gpuscope_jax.Sampler(lambda: [gpu, Device("cpu", 1, None)])
        for _ in range(4):
            sampler.sample()
        with tempfile.TemporaryDirectory() as out:
            sampler.write(out)
            self.assertEqual(os.listdir(out), [f"jax-{os.getpid()}.json"])  # no temporary left behind
            with open(os.path.join(out, f"jax-{os.getpid()}.json")) as f:
                written = json.load(f)
        samples = written["memory_usage"]["0"]
        self.assertEqual([s[1:] for s in samples], [[1 << 20, 1 << 20, 3 << 30, 4 << 30],
                                                    [5 << 20, 5 << 20, 3 << 30, 4 << 30],
                                                    [2 << 20, 5 << 20, 3 << 30, 4 << 30]])
        self.assertLessEqual(samples[0][0], samples[2][0])
        self.assertEqual(list(written["memory_usage"]), ["0"])  # the CPU device has no memory to read
        self.assertEqual(written["gpuscope"]["allocator"], "xla")
        self.assertFalse(written["gpuscope"]["full"])

    def test_a_figure_xla_does_not_report_is_null(self):
        sampler = gpuscope_jax.Sampler(lambda: [Device("gpu", 2, {"bytes_in_use": 10})])
        sampler.sample()
        self.assertEqual(sampler.snapshot()["memory_usage"]["2"][0][1:], [10, None, None, None])

    def test_no_figures_at_all_keep_nothing(self):  # XLA's platform allocator reports none
        sampler = gpuscope_jax.Sampler(lambda: [Device("gpu", 0, None)])
        sampler.sample()
        self.assertEqual(sampler.snapshot()["memory_usage"], {})

    def test_stops_at_its_limit_and_says_so(self):
        sizes = iter(range(1, 100))
        sampler = gpuscope_jax.Sampler(lambda: [Device("gpu", 0, lambda: stats(next(sizes)))], max_samples=2)
        for _ in range(5):
            sampler.sample()
        self.assertEqual(len(sampler.snapshot()["memory_usage"]["0"]), 2)
        self.assertTrue(sampler.snapshot()["gpuscope"]["full"])

    def test_a_device_that_fails_stops_the_reading_not_the_program(self):
        def broken():
            raise RuntimeError("backend gone")

        sampler = gpuscope_jax.Sampler(lambda: [Device("gpu", 0, broken)])
        with mock.patch("sys.stderr") as stderr:
            sampler.sample()
            sampler.sample()
        self.assertEqual(stderr.write.call_count, 1)
        self.assertIn("backend gone", sampler.snapshot()["gpuscope"]["failed"])

    def test_an_unwritable_folder_is_said_once(self):
        sampler = gpuscope_jax.Sampler(lambda: [])
        with mock.patch("sys.stderr") as stderr:
            sampler.write("/nonexistent/folder")
        self.assertIn("not written", stderr.write.call_args[0][0])


class Reader(unittest.TestCase):
    def test_reads_only_once_jax_has_started_and_not_after_it_is_stopped(self):
        sizes = iter(range(1, 10**6))
        sampler = gpuscope_jax.Sampler(lambda: [Device("gpu", 0, lambda: stats(next(sizes)))])
        started = threading.Event()
        reader = gpuscope_jax.Reader(sampler, 0.001, started.is_set)
        reader.start()
        time.sleep(0.05)
        self.assertEqual(sampler.count, 0)  # JAX not started: nothing asked of it
        started.set()
        deadline = time.monotonic() + 5
        while sampler.count < 3 and time.monotonic() < deadline:
            time.sleep(0.005)
        reader.stop()
        self.assertFalse(reader.thread.is_alive())
        count = sampler.count
        self.assertGreaterEqual(count, 3)
        time.sleep(0.02)
        self.assertEqual(sampler.count, count)

    def test_an_interval_that_is_no_number_is_said_and_the_default_kept(self):
        with mock.patch.dict(os.environ, {"GPUSCOPE_JAX_SAMPLE_MS": "fast"}), mock.patch("sys.stderr") as stderr:
            self.assertEqual(gpuscope_jax._interval_s(), 0.01)
        self.assertIn("GPUSCOPE_JAX_SAMPLE_MS", stderr.write.call_args[0][0])


class Install(unittest.TestCase):
    def test_does_nothing_unless_asked_to_record(self):
        with mock.patch.dict(os.environ, {"GPUSCOPE_JAX": ""}), mock.patch.object(gpuscope_jax, "Sampler") as made:
            gpuscope_jax.install_from_environment()
        made.assert_not_called()


class ApplySettings(unittest.TestCase):
    """XLA's allocator variables under `gpuscope apply`: set before the program runs, and "applied" at exit only
    where XLA's own figures show its pool well under what it reserved when recorded."""

    FIX = {"id": "allocator-1", "kind": "allocator", "variable": "XLA_PYTHON_CLIENT_PREALLOCATE", "setting": "false",
           "reserved_bytes": 100 << 30}

    def verdict(self, stats, started=True, environment="false"):
        with mock.patch.dict(os.environ, {"XLA_PYTHON_CLIENT_PREALLOCATE": environment}):
            return apply.verdict(self.FIX, started, lambda: [Device("gpu", 0, stats), Device("cpu", 1, None)])

    def test_a_pool_well_under_the_reservation_is_applied(self):
        said = self.verdict({"pool_bytes": 2 << 30, "peak_pool_bytes": 6 << 30})
        self.assertEqual(said, "applied: XLA_PYTHON_CLIENT_PREALLOCATE=false: XLA's pool held at most 6.00 GiB "
                               "(memory_stats()'s peak_pool_bytes), against the 100.00 GiB reserved up front when "
                               "recorded")

    def test_a_pool_still_near_the_reservation_is_not_applied(self):
        self.assertTrue(self.verdict({"pool_bytes": 75 << 30}).startswith("not applied: "))

    def test_what_cannot_be_seen_is_never_called_applied(self):
        self.assertTrue(self.verdict({"bytes_in_use": 1 << 30}).startswith("unconfirmed: "))  # no pool reported
        self.assertTrue(self.verdict(None).startswith("unconfirmed: "))
        self.assertIn("started no GPU client", self.verdict({"pool_bytes": 1}, started=False))
        self.assertIn("the program set XLA_PYTHON_CLIENT_PREALLOCATE=true itself",
                      self.verdict({"pool_bytes": 1}, environment="true"))

    def run_with_plan(self, tmp, code, environment=None):
        plan = os.path.join(tmp, "plan.json")
        with open(plan, "w") as f:
            json.dump({"format": "gpuscope-plan", "version": 1, "fixes": [self.FIX]}, f)
        os.mkdir(os.path.join(tmp, "outcome"))
        bridge = os.path.dirname(os.path.dirname(os.path.abspath(gpuscope_jax.__file__)))
        env = {k: v for k, v in os.environ.items() if not k.startswith(("GPUSCOPE_", "XLA_PYTHON_CLIENT_"))}
        env.update(PYTHONPATH=f"{bridge}/bootstrap:{bridge}", GPUSCOPE_TORCH="apply", GPUSCOPE_PLAN=plan,
                   GPUSCOPE_APPLY_OUTCOME=os.path.join(tmp, "outcome"), **(environment or {}))
        return subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60)

    def test_the_bootstrap_sets_the_variable_before_the_program_runs_and_says_what_came_of_it(self):
        with tempfile.TemporaryDirectory() as tmp:
            run = self.run_with_plan(tmp, "import os; print(os.environ['XLA_PYTHON_CLIENT_PREALLOCATE'])")
            outcome = [json.loads(path.read_text()) for path in pathlib.Path(tmp, "outcome").iterdir()]
        self.assertEqual((run.returncode, run.stdout), (0, "false\n"), run.stderr)
        said = "not applied: XLA_PYTHON_CLIENT_PREALLOCATE set, but the program never imported jax"
        self.assertEqual(run.stderr, f"gpuscope apply: allocator-1 (allocator): {said}\n")
        self.assertEqual(outcome, [{"fixes": {"allocator-1": said}, "results": ""}])

    def test_a_variable_the_environment_sets_stays_the_users(self):
        with tempfile.TemporaryDirectory() as tmp:
            run = self.run_with_plan(tmp, "import os, sys; print(os.environ['XLA_PYTHON_CLIENT_PREALLOCATE'])",
                                     {"XLA_PYTHON_CLIENT_PREALLOCATE": "true"})
        self.assertEqual((run.returncode, run.stdout), (0, "true\n"), run.stderr)
        self.assertIn("not applied: the environment sets XLA_PYTHON_CLIENT_PREALLOCATE=true already", run.stderr)


if __name__ == "__main__":
    unittest.main()
