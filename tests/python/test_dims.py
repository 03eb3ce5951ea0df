"""Symbolic dimensions through the Python API, on the tiny transformer block PyTorch exported
with symbolic `batch` and `seq` (models/testdata, both exporters): two bindings match
onnxruntime, each compiles to its own cache entry, an unbound dimension is refused naming
--dim, and InferenceSession takes the sizes as onnxruntime's free dimension overrides."""

import numpy as np
import onnxruntime as ort
import pytest

import vtc
from helpers import REPO, relative_l2

EXPORTERS = ["torchscript", "dynamo"]
BINDINGS = [(1, 4), (3, 7)]


def model(exporter):
    return REPO / "models" / "testdata" / f"tiny_block_dynamic_{exporter}.onnx"


@pytest.mark.parametrize("exporter", EXPORTERS)
def test_bindings_match_onnxruntime_and_are_cached_apart(exporter, tmp_path):
    reference = ort.InferenceSession(str(model(exporter)), providers=["CPUExecutionProvider"])
    entries = 0
    for batch, seq in BINDINGS:
        session = vtc.Session(model(exporter), dims={"batch": batch, "seq": seq},
                              cache_dir=tmp_path, quiet=True)
        assert session.inputs[0].shape == (batch, seq, 32)
        assert session.outputs[0].shape == (batch, seq, 32)
        assert session.compile_seconds > 0
        # The binding's parts are cache entries of their own.
        assert len(list(tmp_path.glob("*.so"))) > entries
        entries = len(list(tmp_path.glob("*.so")))
        x = np.random.default_rng(batch).standard_normal((batch, seq, 32)).astype(np.float32)
        y = session.run({"x": x})["y"]
        assert relative_l2(y, reference.run(None, {"x": x})[0]) < 1e-5
    again = vtc.Session(model(exporter), dims={"batch": 1, "seq": 4}, cache_dir=tmp_path,
                        quiet=True)
    assert again.compile_seconds == 0
    assert len(list(tmp_path.glob("*.so"))) == entries


@pytest.mark.parametrize("exporter", EXPORTERS)
def test_an_unbound_dimension_names_the_flag(exporter):
    with pytest.raises(vtc.Unsupported,
                       match=r"input 'x' has a symbolic dimension 'seq': give its size "
                             r"\(Options::dims, --dim seq=N\)"):
        vtc.Session(model(exporter), target="ref", dims={"batch": 2}, quiet=True)
    with pytest.raises(vtc.Error, match="dimension 'heads' is given a size, but no graph input"):
        vtc.Session(model(exporter), target="ref", dims={"batch": 2, "seq": 3, "heads": 4},
                    quiet=True)


def test_inference_session_takes_free_dimension_overrides():
    options = vtc.SessionOptions()
    options.add_free_dimension_override_by_name("batch", 2)
    options.add_free_dimension_override_by_name("seq", 5)
    session = vtc.InferenceSession(str(model("dynamo")), sess_options=options)
    assert session.get_inputs()[0].shape == [2, 5, 32]
    x = np.random.default_rng(9).standard_normal((2, 5, 32)).astype(np.float32)
    reference = ort.InferenceSession(str(model("dynamo")), providers=["CPUExecutionProvider"])
    assert relative_l2(session.run(None, {"x": x})[0], reference.run(None, {"x": x})[0]) < 1e-5


def test_compiling_releases_the_gil(tmp_path):
    """Another Python thread runs while a model compiles (a binding no cache holds)."""
    import threading
    import time

    made = {}
    compiling = threading.Thread(target=lambda: made.setdefault("session", vtc.Session(
        model("torchscript"), dims={"batch": 2, "seq": 3}, cache_dir=tmp_path, quiet=True)))
    ticks = 0
    compiling.start()
    while compiling.is_alive():
        ticks += 1
        time.sleep(0.001)
    compiling.join()
    seconds = made["session"].compile_seconds
    assert seconds > 0.2
    assert ticks > 50 * seconds  # a tick every 1 ms when the thread can run; held: none
