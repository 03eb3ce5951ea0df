"""Errors: what vtc reports is vtc.Error (a RuntimeError) carrying vtc's one-line message --
a missing or unknown input, a wrong shape, a dimension size no input uses, a file that is not
there; bad arguments (a target, strategy or library vtc does not know, an input of another
kind) are ValueError."""

import numpy as np
import pytest

import vtc
from helpers import decode_feed


def test_run_errors_name_the_tensor(llama_session):
    feed = decode_feed(3, np.random.default_rng(7))
    missing = {k: v for k, v in feed.items() if k != "pos"}
    with pytest.raises(vtc.Error, match=r"^missing input 'pos' \(i64\[1\]\)$"):
        llama_session.run(missing)
    with pytest.raises(vtc.Error,
                       match=r"^input 'x' is f32\[1,2,64\], the model expects f32\[1,1,64\]$"):
        llama_session.run({**feed, "x": np.zeros((1, 2, 64), np.float32)})
    with pytest.raises(vtc.Error, match=r"^unknown input 'z' \(the model's inputs: x, past_k"):
        llama_session.run({**feed, "z": np.zeros(1)})
    with pytest.raises(ValueError, match=r"input 'pos' is float64, the model expects int64"):
        llama_session.run({**feed, "pos": np.array([1.5])})
    assert issubclass(vtc.Error, RuntimeError)


def test_session_errors(llama_f32, tmp_path):
    with pytest.raises(vtc.Error, match="dimension 'heads' is given a size, but no graph input"):
        vtc.Session(llama_f32, target="ref", dims={"heads": 2}, quiet=True)
    with pytest.raises(vtc.Error, match="donated input 'cache' is not a graph input"):
        vtc.Session(llama_f32, target="ref", donate=["cache"], quiet=True)
    with pytest.raises(vtc.Error, match="nothing.onnx"):
        vtc.Session(tmp_path / "nothing.onnx", quiet=True)


@pytest.mark.parametrize("argument, message", [
    ({"target": "tpu"}, r"unknown target 'tpu' \(cpu, cuda, ref\)"),
    ({"strategy": "best"}, r"unknown strategy 'best' \(none, type1, greedy\)"),
    ({"library": "mkl"}, r"unknown library 'mkl' \(auto, never, always\)"),
    ({"threads": -1}, r"threads must be >= 0, got -1"),
])
def test_bad_arguments_are_value_errors(llama_f32, argument, message):
    with pytest.raises(ValueError, match=message):
        vtc.Session(llama_f32, quiet=True, **argument)
