"""Tests of the GPU benchmark's logic that need no GPU, no torch and no vtc: the floor, the
output check, a case's record (best peer, speedup, memory), the merge and the chart.

    python3 -m unittest discover -s bench/gpu -p 'test_*.py'
"""

from __future__ import annotations

import json
import math
import os
import struct
import tempfile
import unittest
import zlib

import numpy as np

import chart
import floor
import merge
import outputs_check
import record
import rounds
from cases import Case, make_cases, rotation


def vtc_json(none_ms=2.0, greedy_ms=1.0, copies=(5, 1)) -> dict:
    def strategy(ms, c):
        return {"median_ms": ms, "min_ms": ms * 0.9, "arena_bytes": 1_000_000,
                "constant_bytes": 4_000_000, "bound_bytes": 2_000_000, "steps": 10, "copies": c,
                "interpreted": 0, "ready_s": 3.0, "compile_s": 2.5,
                "step_times": [
                    {"name": "k0 gemm", "kind": "kernel", "ms": 0.6 * ms, "bytes": 4_000_000,
                     "flops": 8_000_000},
                    {"name": "copy t", "kind": "copy", "ms": 0.4 * ms, "bytes": 2_000_000,
                     "flops": 0}]}
    return {"model": "m.onnx", "target": "cuda", "repeat": 5, "warmup": 1, "threads": 1,
            "strategies": {"none": strategy(none_ms, copies[0]),
                           "greedy": strategy(greedy_ms, copies[1])},
            "onnxruntime": {"available": False, "reason": "cuda"}}


def peer(ms, ok=True, peak=8_000_000) -> dict:
    return {"available": True, "median_ms": ms, "min_ms": ms, "first_call_s": 1.0,
            "peak_bytes": peak, "check": {"ok": ok, "tolerance": 1e-2, "rel_l2": {},
                                          "problem": None if ok else "y: rel L2 1 > 0.01"}}


def peers_json(**systems) -> dict:
    return {"ceilings": {"available": True, "device": "test", "how": "test",
                         "copy_bytes_per_s": 4e12, "matrix_flops_per_s": 8e14,
                         "matrix_dtype": "bf16"},
            "systems": systems}


CASE = Case("llama3_layer", "full", "bf16", 1)


class FloorTest(unittest.TestCase):
    def test_bytes_bound(self):
        f = floor.floor_ms(4_000_000_000, 1e9, 4e12, 1e15)
        self.assertAlmostEqual(f["floor_ms"], 1.0)
        self.assertEqual(f["bound"], "bytes")
        self.assertAlmostEqual(f["flops_ms"], 1e-3)

    def test_flops_bound(self):
        f = floor.floor_ms(4_000_000, 2e12, 4e12, 1e15)
        self.assertAlmostEqual(f["floor_ms"], 2.0)
        self.assertEqual(f["bound"], "flops")

    def test_no_copy_bandwidth_no_floor(self):
        self.assertIsNone(floor.floor_ms(100, 1e9, None, 1e15)["floor_ms"])

    def test_no_flops_is_bytes(self):
        f = floor.floor_ms(8_000_000, 0, 4e12, None)
        self.assertAlmostEqual(f["floor_ms"], 2e-3)
        self.assertIsNone(f["flops_ms"])

    def test_model_bytes_counts_each_once(self):
        import onnx
        from onnx import TensorProto, helper, numpy_helper

        w = numpy_helper.from_array(np.zeros((4, 8), np.float16), "w")
        const = helper.make_node("Constant", [], ["c"], value=numpy_helper.from_array(
            np.zeros(3, np.int64), "c"))
        mm = helper.make_node("MatMul", ["x", "w"], ["y"])
        upd = helper.make_node("Identity", ["past_k"], ["present_k"])
        g = helper.make_graph(
            [const, mm, upd], "g",
            [helper.make_tensor_value_info("x", TensorProto.FLOAT16, [2, 4]),
             helper.make_tensor_value_info("past_k", TensorProto.BFLOAT16, [1, 2, 16, 8])],
            [helper.make_tensor_value_info("y", TensorProto.FLOAT16, [2, 8]),
             helper.make_tensor_value_info("present_k", TensorProto.BFLOAT16, [1, 2, 16, 8])],
            [w])
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "m.onnx")
            onnx.save(helper.make_model(g), path)
            b = floor.model_bytes(path, {"present_k": "past_k"})
            self.assertEqual(b.weights, 4 * 8 * 2 + 3 * 8)
            self.assertEqual(b.inputs, 2 * 4 * 2 + 256 * 2)
            self.assertEqual(b.outputs, 2 * 8 * 2)  # present_k is past_k's buffer
            self.assertEqual(floor.model_bytes(path, {}).outputs, 2 * 8 * 2 + 256 * 2)

    def test_model_bytes_sizes_symbolic_outputs_by_inference(self):
        import onnx
        from onnx import TensorProto, helper

        g = helper.make_graph(
            [helper.make_node("Relu", ["x"], ["y"])], "g",
            [helper.make_tensor_value_info("x", TensorProto.FLOAT16, [2, 3, 5])],
            [helper.make_tensor_value_info("y", TensorProto.FLOAT16, ["Addy_dim_0", 3, 5])])
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "m.onnx")
            onnx.save(helper.make_model(g), path)
            self.assertEqual(floor.model_bytes(path, {}).outputs, 2 * 3 * 5 * 2)

    def test_model_bytes_sizes_what_inference_cannot_by_the_run(self):
        import onnx
        from onnx import TensorProto, helper

        # NonZero's output length depends on the values: inference leaves it symbolic.
        g = helper.make_graph(
            [helper.make_node("NonZero", ["x"], ["y"])], "g",
            [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])],
            [helper.make_tensor_value_info("y", TensorProto.INT64, [2, "n"])])
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "m.onnx")
            onnx.save(helper.make_model(g), path)
            with self.assertRaises(ValueError):
                floor.model_bytes(path, {})
            self.assertEqual(floor.model_bytes(path, {}, {"y": (2, 4)}).outputs, 2 * 4 * 8)

    def test_program_flops(self):
        self.assertEqual(floor.program_flops(vtc_json()["strategies"]["greedy"]), 8_000_000)


class OutputsCheckTest(unittest.TestCase):
    def test_within_and_over(self):
        e = {"y": np.ones((2, 3), np.float32)}
        self.assertTrue(outputs_check.check({"y": e["y"] * (1 + 1e-6)}, e, 1e-5)["ok"])
        r = outputs_check.check({"y": e["y"] * 1.1}, e, 1e-2)
        self.assertFalse(r["ok"])
        self.assertAlmostEqual(r["rel_l2"]["y"], 0.1, places=6)

    def test_missing_shape_nan(self):
        e = {"y": np.ones(3), "z": np.ones(2)}
        r = outputs_check.check({"y": np.ones(4)}, e, 1e-2)
        self.assertFalse(r["ok"])
        self.assertIn("no output 'z'", r["problem"])
        self.assertIn("shape", r["problem"])
        self.assertFalse(outputs_check.check({"y": np.array([1, np.nan, 1]), "z": np.ones(2)},
                                             e, 1e-2)["ok"])


class RoundsTest(unittest.TestCase):
    def test_vtc_keeps_its_fastest_greedy_round(self):
        joined = rounds.best_vtc([vtc_json(2.0, 1.2), None, vtc_json(2.2, 1.0)])
        self.assertEqual(joined["strategies"]["greedy"]["median_ms"], 1.0)
        self.assertEqual(joined["strategies"]["none"]["median_ms"], 2.2)  # greedy's round
        self.assertEqual(joined["strategies"]["greedy"]["rounds_ms"], [1.2, None, 1.0])
        self.assertIsNone(rounds.best_vtc([None, None]))

    def test_each_peer_keeps_its_fastest_checked_round(self):
        wrong = peer(0.1, ok=False)
        first = peers_json(torch_eager=peer(3.0), torch_default=wrong)
        second = peers_json(torch_eager=peer(2.5), torch_default=peer(0.9),
                            jax_jit={"available": False, "reason": "no JAX"})
        joined = rounds.best_peers([first, second])
        systems = joined["systems"]
        self.assertEqual(systems["torch_eager"]["median_ms"], 2.5)
        self.assertEqual(systems["torch_eager"]["rounds_ms"], [3.0, 2.5])
        self.assertEqual(systems["torch_default"]["median_ms"], 0.9)  # not the wrong 0.1
        self.assertFalse(systems["jax_jit"]["available"])
        self.assertEqual(systems["jax_jit"]["rounds_ms"], [None, None])
        self.assertEqual(joined["ceilings"], first["ceilings"])
        only_wrong = rounds.best_peers([peers_json(torch_default=wrong)])
        self.assertFalse(only_wrong["systems"]["torch_default"]["check"]["ok"])

    def test_one_round_is_unchanged_but_for_its_medians(self):
        r = record.case_record(CASE, {"source": "torch"}, rounds.best_vtc([vtc_json()]), None,
                               rounds.best_peers([peers_json(torch_eager=peer(3.0))]), None,
                               floor.FloorBytes(4_000_000, 2_000_000, 0))
        self.assertAlmostEqual(r["speedup_over_best_peer"], 3.0)
        self.assertEqual(r["systems"]["vtc_greedy"]["rounds_ms"], [1.0])
        self.assertEqual(r["systems"]["torch_eager"]["rounds_ms"], [3.0])


class RecordTest(unittest.TestCase):
    def make(self, **systems):
        return record.case_record(CASE, {"source": "torch"}, vtc_json(), None,
                                  peers_json(**systems), None,
                                  floor.FloorBytes(4_000_000, 2_000_000, 0))

    def test_best_peer_and_speedup(self):
        r = self.make(torch_eager=peer(3.0), torch_default=peer(2.0),
                      torch_max_autotune=peer(0.5, ok=False))
        self.assertEqual(r["best_peer"], "torch_default")  # max-autotune computed otherwise
        self.assertEqual(r["failed_checks"], ["torch_max_autotune"])
        self.assertAlmostEqual(r["speedup_over_best_peer"], 2.0)
        self.assertEqual(r["vtc_greedy_ms"], 1.0)
        self.assertIsNone(r["jax_jit_ms"])
        self.assertIn("reason", r["systems"]["jax_jit"])
        self.assertAlmostEqual(r["peak_mb"]["vtc_greedy"], 7.0)
        self.assertAlmostEqual(r["peak_mb"]["torch_eager"], 8.0)
        self.assertEqual((r["copies_before"], r["copies_after"]), (5, 1))

    def test_unchecked_peer_is_never_best(self):
        fast = peer(0.1)
        fast["check"] = outputs_check.check({}, None, 1e-2)
        self.assertIsNone(fast["check"]["ok"])
        r = self.make(torch_eager=peer(3.0), jax_jit=fast)
        self.assertEqual(r["best_peer"], "torch_eager")
        self.assertEqual(r["failed_checks"], [])

    def test_floor_and_breakdown(self):
        r = self.make(torch_eager=peer(3.0))
        self.assertAlmostEqual(r["floor_ms"], 6_000_000 / 4e12 * 1e3)
        self.assertEqual(r["floor"]["bound"], "bytes")
        top = r["breakdown"][0]
        self.assertEqual(top["name"], "k0 gemm")
        self.assertAlmostEqual(top["gb_per_s"], 4e6 / 0.6e-3 / 1e9)
        self.assertAlmostEqual(top["of_copy_bw"], 4e6 / 0.6e-3 / 4e12)
        self.assertAlmostEqual(top["of_matrix_rate"], 8e6 / 0.6e-3 / 8e14)

    def test_nothing_ran(self):
        r = record.case_record(CASE, None, None, "vtc bench exit 1: boom", None,
                               "no vtc outputs", None)
        self.assertIsNone(r["speedup_over_best_peer"])
        self.assertIsNone(r["floor_ms"])
        self.assertEqual(r["systems"]["vtc_greedy"]["reason"], "vtc bench exit 1: boom")
        self.assertEqual(r["systems"]["torch_eager"]["reason"], "no vtc outputs")


class MergeTest(unittest.TestCase):
    def run_doc(self, started, cases, warm=False):
        return {"run": {"started": started, "warm_up": warm}, "cases": cases}

    def rec(self, workload, batch, greedy_ms, best_ms):
        c = Case(workload, "full", "f16", batch)
        return record.case_record(c, None, vtc_json(greedy_ms=greedy_ms), None,
                                  peers_json(torch_eager=peer(best_ms)), None,
                                  floor.FloorBytes(1, 1, 1))

    def test_merge_summary_and_files(self):
        a = self.run_doc("t1", [self.rec("yolo11n", 1, 1.0, 2.0), self.rec("yolo11n", 16, 1.0,
                                                                            0.5)])
        b = self.run_doc("t2", [self.rec("yolo11n", 16, 1.0, 8.0)])
        warm = self.run_doc("t3", [self.rec("yolo11n", 1, 1.0, 100.0)], warm=True)
        with tempfile.TemporaryDirectory() as d:
            paths = []
            for i, doc in enumerate((a, b, warm)):
                os.makedirs(os.path.join(d, f"r{i}"))
                paths.append(os.path.join(d, f"r{i}"))
                with open(os.path.join(paths[-1], "run.json"), "w") as f:
                    json.dump(doc, f)
            out = os.path.join(d, "out")
            self.assertEqual(merge.main(paths + ["--out", out, "--quiet"]), 0)
            with open(os.path.join(out, "gpu-bench.json")) as f:
                doc = json.load(f)
            speedups = [w["speedup_over_best_peer"] for w in doc["workloads"]]
            self.assertEqual(speedups, [2.0, 8.0])  # b16 from the later run, warm-up skipped
            self.assertAlmostEqual(doc["summary"]["geomean_speedup"], 4.0)
            for w in doc["workloads"]:
                for key in ("workload", "batch", "floor_ms", "peak_mb", "vtc_none_ms",
                            "vtc_greedy_ms", "torch_eager_ms", "torch_max_autotune_ms",
                            "jax_jit_ms", "speedup_over_best_peer"):
                    self.assertIn(key, w)
            with open(os.path.join(out, "gpu-bench.txt")) as f:
                last = f.read().strip().splitlines()[-1]
            self.assertEqual(last, "gpu-bench: geomean speedup over best peer 4.000, min 2.000, "
                             "workloads 2")
            with open(os.path.join(out, "gpu-bench.png"), "rb") as f:
                self.assertEqual(f.read(8), b"\x89PNG\r\n\x1a\n")

    def test_workspace_parts_in_the_details(self):
        vtc = vtc_json()
        vtc["strategies"]["greedy"]["workspace_bytes"] = 3_000_000
        vtc["strategies"]["greedy"]["workspace_parts"] = {
            "split-K partial sums": 2_000_000, "library products": 1_000_000,
            "library workspace": 0}
        r = record.case_record(Case("yolo11n", "full", "f16", 16), None, vtc, None,
                               peers_json(torch_eager=peer(2.0)), None, floor.FloorBytes(1, 1, 1))
        self.assertEqual(r["systems"]["vtc_greedy"]["peak_bytes"], 10_000_000)
        with tempfile.TemporaryDirectory() as d:
            os.makedirs(os.path.join(d, "r"))
            with open(os.path.join(d, "r", "run.json"), "w") as f:
                json.dump(self.run_doc("t1", [r]), f)
            out = os.path.join(d, "out")
            self.assertEqual(merge.main([os.path.join(d, "r"), "--out", out, "--quiet"]), 0)
            with open(os.path.join(out, "gpu-bench.txt")) as f:
                text = f.read()
        self.assertIn("  vtc greedy workspace MB: split-K partial sums 2.0, library products 1.0\n",
                      text)

    def test_merged_table_as_input(self):
        a = self.run_doc("t1", [self.rec("yolo11n", 1, 1.0, 2.0), self.rec("shufflenet_v2", 1,
                                                                            1.0, 0.5)])
        b = self.run_doc("t2", [self.rec("shufflenet_v2", 1, 1.0, 3.0)])
        with tempfile.TemporaryDirectory() as d:
            for name, doc in (("a", a), ("b", b)):
                os.makedirs(os.path.join(d, name))
                with open(os.path.join(d, name, "run.json"), "w") as f:
                    json.dump(doc, f)
            first = os.path.join(d, "first")
            self.assertEqual(merge.main([os.path.join(d, "a"), "--out", first, "--quiet"]), 0)
            second = os.path.join(d, "second")
            self.assertEqual(merge.main([os.path.join(first, "gpu-bench.json"),
                                         os.path.join(d, "b"), "--out", second, "--quiet"]), 0)
            with open(os.path.join(second, "gpu-bench.json")) as f:
                doc = json.load(f)
            got = {w["workload"]: (w["speedup_over_best_peer"], w["run_started"])
                   for w in doc["workloads"]}
            # yolo11n kept from the earlier table with its run, shufflenet from the rerun
            self.assertEqual(got, {"yolo11n": (2.0, "t1"), "shufflenet_v2": (3.0, "t2")})

    def test_no_speedups(self):
        self.assertEqual(merge.summary_line(merge.summary([])),
                         "gpu-bench: geomean speedup over best peer n/a, min n/a, workloads 0")

    def test_geomean(self):
        s = merge.summary([{"speedup_over_best_peer": v} for v in (1.0, 4.0, None)])
        self.assertAlmostEqual(s["geomean_speedup"], 2.0)
        self.assertEqual(s["workloads"], 2)
        self.assertTrue(math.isclose(s["min_speedup"], 1.0))


class ChartTest(unittest.TestCase):
    def test_raster_png_decodes(self):
        data = [("llama3_layer b1", [1.5, 1.0, None, 5.0])]
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "c.png")
            chart.write_raster(path, data, ["vtc none", "vtc greedy", "eager", "jax jit"])
            with open(path, "rb") as f:
                blob = f.read()
        self.assertEqual(blob[:8], b"\x89PNG\r\n\x1a\n")
        w, h = struct.unpack(">II", blob[16:24])
        idat = blob.index(b"IDAT")
        n = struct.unpack(">I", blob[idat - 4:idat])[0]
        raw = zlib.decompress(blob[idat + 4: idat + 4 + n])
        self.assertEqual(len(raw), h * (1 + 3 * w))
        self.assertIn(bytes(chart.COLORS[1]), raw)


class CasesTest(unittest.TestCase):
    def test_cases(self):
        cs = make_cases(["llama3_layer", "yolo11n"], [1, 16], "full")
        self.assertEqual([c.name for c in cs], ["llama3_layer_full_bf16_b1",
                                                "llama3_layer_full_bf16_b16",
                                                "yolo11n_full_f16_b1", "yolo11n_full_f16_b16"])
        self.assertEqual(cs[0].donated, ["past_k", "past_v"])
        self.assertEqual(cs[2].donated, [])
        self.assertEqual(make_cases(["yolo11n"], [1], "small")[0].dtype, "f32")
        with self.assertRaises(ValueError):
            make_cases(["nope"], [1], "full")

    def test_rotation(self):
        self.assertEqual(rotation(34_000_000), 4)  # Llama b1: the KV cache fits in the L2
        self.assertEqual(rotation(13_000_000), 10)
        self.assertEqual(rotation(300_000), 32)  # capped
        self.assertEqual(rotation(60_000_000), 1)
        self.assertEqual(rotation(0), 1)


if __name__ == "__main__":
    unittest.main()
