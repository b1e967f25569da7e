#!/usr/bin/env python3
"""Tests of join.py's models table: medians over repeated runs, ratios paired run by run.
Run by `make test` (python3 -m unittest infra/bench/peer/join_test.py)."""

import contextlib
import io
import json
import os
import tempfile
import unittest

import importlib.util

HERE = os.path.dirname(os.path.abspath(__file__))
spec = importlib.util.spec_from_file_location("join", os.path.join(HERE, "join.py"))
join = importlib.util.module_from_spec(spec)
spec.loader.exec_module(join)


def report(path, name, rate, rate1, peak, **extra):
    rep = {"version": "v", "blas": "openblas", "blas_core": "packed AVX2", "elementwise": "AVX2", "cores": 2,
           "machine_sgemm_gflops": 100.0, "torch": "1.13", "peak_rss_mb": peak,
           "models": [{"name": name, "params": 10, "clients": 2, "samples_per_s": rate, "samples_per_s_1": rate1}]}
    rep["models"][0].update(extra)
    with open(path, "w") as f:
        json.dump(rep, f)
    return path


class MedianTest(unittest.TestCase):
    def test_known_values(self):
        self.assertEqual(join.median([3, 1, 2]), 2)
        self.assertEqual(join.median([4, 1, 3, 2]), 2.5)
        self.assertEqual(join.median([7]), 7)

    def test_ratio_pairs_runs(self):
        # Run by run 2.0, 1.0, 3.0: median 2.0. The ratio of the medians (200/100) would be 2.0 as
        # well, so the pairing shows in the range.
        a = [{"samples_per_s": x} for x in (200, 100, 600)]
        b = [{"samples_per_s": x} for x in (100, 100, 200)]
        self.assertEqual(join.ratio(a, b), "2.00 (1.00-3.00)")
        self.assertEqual(join.ratio(a[:1], b[:1]), "2.00")


class TableTest(unittest.TestCase):
    def run_join(self, ours, peer, purego=""):
        out = io.StringIO()
        args = type("A", (), {"ours": ours, "peer": peer, "purego": purego})
        with contextlib.redirect_stdout(out):
            join.cmd_models(args)
        return out.getvalue()

    def test_repeated_runs(self):
        with tempfile.TemporaryDirectory() as d:
            p = lambda n: os.path.join(d, n)
            ours = ",".join(report(p(f"o{i}"), "mlp", r, r / 2, pk) for i, (r, pk) in enumerate([(300, 90), (100, 95), (200, 80)]))
            peer = ",".join(report(p(f"t{i}"), "mlp", r, r / 2, 500) for i, r in enumerate([100, 100, 100]))
            text = self.run_join(ours, peer)
        row = next(line for line in text.splitlines() if line.startswith("mlp"))
        cells = row.split()
        # params, PyTorch, ours (median 200), ours/PyTorch (median of 3, 1, 2), range, PyTorch peak, ours peak (largest)
        self.assertEqual(cells[1:8], ["10", "100", "200", "2.00", "(1.00-3.00)", "500", "95"])
        self.assertIn("medians of 3 runs", text)
        self.assertIn("alone (one client): mlp 50 vs ours 100", text)

    def test_one_run_unchanged(self):
        with tempfile.TemporaryDirectory() as d:
            ours = report(os.path.join(d, "o"), "lenet", 150, 80, 97)
            peer = report(os.path.join(d, "t"), "lenet", 100, 60, 501)
            text = self.run_join(ours, peer)
        row = next(line for line in text.splitlines() if line.startswith("lenet"))
        self.assertEqual(row.split()[1:7], ["10", "100", "150", "1.50", "501", "97"])
        self.assertNotIn("medians of", text)

    def test_params_differ_fails(self):
        with tempfile.TemporaryDirectory() as d:
            ours = report(os.path.join(d, "o"), "mlp", 150, 80, 97)
            peer = report(os.path.join(d, "t"), "mlp", 100, 60, 501, params=11)
            with self.assertRaises(SystemExit):
                self.run_join(ours, peer)


if __name__ == "__main__":
    unittest.main()
