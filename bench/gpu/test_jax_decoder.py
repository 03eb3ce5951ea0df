"""The JAX decoder layers (jax_decoder.py) against onnxruntime on the generators' small f32
models, with the generators' weights: the JAX peer computes the function vtc runs.
Skipped where jax or onnxruntime is missing.

    python3 -m unittest discover -s bench/gpu -p 'test_*.py'
"""

from __future__ import annotations

import importlib.util
import os
import tempfile
import unittest

import numpy as np

import jax_peers
import outputs_check
from cases import Case

HAVE = all(importlib.util.find_spec(m) for m in ("jax", "onnxruntime"))


@unittest.skipUnless(HAVE, "needs jax and onnxruntime")
class JaxDecoderTest(unittest.TestCase):
    def check(self, workload: str):
        import generate
        import jax_decoder
        import onnxruntime as ort

        from prepare import write_inputs

        case = Case(workload, "small", "f32", 2)
        with tempfile.TemporaryDirectory() as d:
            path = generate.generate_one(d, workload, "small", "f32", 2)
            names = write_inputs(case, os.path.join(d, "inputs"))
            arrays = {n: np.load(os.path.join(d, "inputs", n + ".npy")) for n in names}
            session = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
            outs = [o.name for o in session.get_outputs()]
            expected = dict(zip(outs, session.run(outs, arrays)))
            weights = jax_decoder.params_from_onnx(path)
        r = jax_peers.run(case, arrays, expected, 2, 1, "cpu", weights)
        self.assertTrue(r["available"], r.get("reason"))
        self.assertTrue(r["check"]["ok"], r["check"])
        # The check itself is not vacuous: a wrong weight is caught (not a uniform scale,
        # which Gemma's norms after the MLP and attention would remove).
        up = weights["up_proj"]
        weights["up_proj"] = up + 0.05 * np.random.default_rng(0).standard_normal(up.shape)
        r = jax_peers.run(case, arrays, expected, 1, 0, "cpu", weights)
        self.assertFalse(r["check"]["ok"])

    def test_llama(self):
        self.check("llama3_layer")

    def test_gemma_local(self):
        self.check("gemma2_local")

    def test_gemma_global(self):
        self.check("gemma2_global")

    def test_no_version(self):
        r = jax_peers.run(Case("yolo11n", "small", "f32", 1), {}, {}, 1, 0, "cpu", {})
        self.assertEqual(r["reason"], "no JAX version of yolo11n")


if __name__ == "__main__":
    unittest.main()
