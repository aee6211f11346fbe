"""gpuscope's CuPy bridge without a GPU: what its recorder writes for `gpuscope record --cupy` to merge, and that
it stays out of the way where it is not asked for. (Its memory hook on real CuPy runs in the GPU tests.)"""

import json
import os
import tempfile
import unittest
from unittest import mock

import gpuscope_cupy


class Recorder(unittest.TestCase):
    def test_writes_a_snapshot_the_merge_reads(self):
        recorder = gpuscope_cupy.Recorder()
        recorder.note("segment_alloc", 0, 1 << 20, 1 << 20)
        recorder.note("alloc", 0, 1 << 20, 512)
        recorder.note("alloc", 1, 1 << 21, 1024)
        recorder.note("free_completed", 0, 1 << 20, 512)
        with tempfile.TemporaryDirectory() as out:
            recorder.write(out)
            with open(os.path.join(out, f"cupy-{os.getpid()}.json")) as f:
                snapshot = json.load(f)
            self.assertEqual(os.listdir(out), [f"cupy-{os.getpid()}.json"])  # no temporary left behind
        traces = snapshot["device_traces"]
        self.assertEqual([len(t) for t in traces], [3, 1])
        self.assertEqual([e["action"] for e in traces[0]], ["segment_alloc", "alloc", "free_completed"])
        self.assertEqual(traces[1][0], {**traces[1][0], "addr": 1 << 21, "size": 1024})
        self.assertLessEqual(traces[0][0]["time_us"], traces[0][2]["time_us"])
        self.assertEqual(snapshot["gpuscope"]["pid"], os.getpid())
        self.assertFalse(snapshot["gpuscope"]["wrapped"])

    def test_stops_at_its_limit_and_says_so(self):
        recorder = gpuscope_cupy.Recorder(max_events=2)
        for i in range(5):
            recorder.note("alloc", 0, 4096 * i, 512)
        self.assertEqual(len(recorder.snapshot()["device_traces"][0]), 2)
        self.assertTrue(recorder.snapshot()["gpuscope"]["wrapped"])

    def test_a_value_it_cannot_read_stops_the_noting_not_the_program(self):
        recorder = gpuscope_cupy.Recorder()
        with mock.patch("sys.stderr") as stderr:
            recorder.note("alloc", 0, object(), 512)  # an address that is no number
            recorder.note("alloc", 0, 4096, 512)
        self.assertEqual(recorder.count, 0)
        self.assertEqual(stderr.write.call_count, 1)

    def test_an_unwritable_folder_is_said_once(self):
        recorder = gpuscope_cupy.Recorder()
        with mock.patch("sys.stderr") as stderr:
            recorder.write("/nonexistent/folder")
        self.assertIn("not written", stderr.write.call_args[0][0])


class Install(unittest.TestCase):
    def test_does_nothing_unless_asked_to_record(self):
        with mock.patch.dict(os.environ, {"GPUSCOPE_CUPY": ""}), mock.patch.object(gpuscope_cupy, "make_hook") as hook:
            gpuscope_cupy.install_from_environment()
        hook.assert_not_called()


if __name__ == "__main__":
    unittest.main()
