"""vtc.InferenceSession against onnxruntime.InferenceSession on the same model and feed:
the same descriptions of inputs and outputs, the same outputs in the order asked; providers
mapped to targets, unknown ones refused; SessionOptions' threads."""

import warnings

import numpy as np
import onnxruntime as ort
import pytest

import vtc
from helpers import decode_feed, relative_l2


def describe(args):
    return [(a.name, list(a.shape), a.type) for a in args]


def test_same_as_onnxruntime(llama_f32):
    ours = vtc.InferenceSession(str(llama_f32), providers=["CPUExecutionProvider"])
    theirs = ort.InferenceSession(str(llama_f32), providers=["CPUExecutionProvider"])
    assert describe(ours.get_inputs()) == describe(theirs.get_inputs())
    assert describe(ours.get_outputs()) == describe(theirs.get_outputs())
    assert ours.get_providers() == ["CPUExecutionProvider"]

    feed = decode_feed(11, np.random.default_rng(5))
    asked = ["y", "present_k"]
    got, want = ours.run(asked, feed), theirs.run(asked, feed)
    assert len(got) == 2
    for name, a, b in zip(asked, got, want):
        assert a.shape == b.shape and a.dtype == b.dtype, name
        assert relative_l2(a, b) < 1e-5, name
    every = ours.run(None, feed)
    assert [a.shape for a in every] == [tuple(o.shape) for o in ours.get_outputs()]


def test_unknown_provider_and_output_refused(llama_f32):
    with pytest.raises(ValueError, match="unknown execution provider 'TensorrtExecutionProvider'"):
        vtc.InferenceSession(str(llama_f32), providers=["TensorrtExecutionProvider"])
    session = vtc.InferenceSession(str(llama_f32))
    with pytest.raises(ValueError, match="unknown output 'z'"):
        session.run(["z"], decode_feed(1, np.random.default_rng(6)))


def test_later_provider_used_when_the_first_cannot_run(llama_f32):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        session = vtc.InferenceSession(
            str(llama_f32), providers=["CUDAExecutionProvider", "CPUExecutionProvider"])
    provider = session.get_providers()
    assert provider in (["CUDAExecutionProvider"], ["CPUExecutionProvider"])
    if provider == ["CPUExecutionProvider"]:  # no GPU here: the reason is given
        assert any("CUDAExecutionProvider not used" in str(w.message) for w in caught)


@pytest.mark.parametrize("options_type", [vtc.SessionOptions, ort.SessionOptions])
def test_session_options_threads(llama_f32, options_type):
    options = options_type()
    options.intra_op_num_threads = 1
    session = vtc.InferenceSession(str(llama_f32), sess_options=options)
    assert session._session.threads == 1
    assert session.get_session_options() is options


def test_model_given_as_bytes(llama_f32):
    session = vtc.InferenceSession(llama_f32.read_bytes())
    assert [i.name for i in session.get_inputs()] == ["x", "past_k", "past_v", "pos", "mask"]
