"""vtc.Session on the small Llama decode layer: outputs against onnxruntime, the description
of inputs and outputs, numpy arrays in (converted only where needed) and out (owning their
memory), and explain() as data."""

import numpy as np
import onnx
import onnxruntime as ort
import pytest

import vtc
from helpers import decode_feed, relative_l2


def onnxruntime_outputs(path, feed):
    session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    return dict(zip([o.name for o in session.get_outputs()], session.run(None, feed)))


def test_matches_onnxruntime(llama_f32, llama_session):
    feed = decode_feed(20, np.random.default_rng(0))
    expected = onnxruntime_outputs(llama_f32, feed)
    got = llama_session.run(feed)
    assert sorted(got) == sorted(expected)
    for name, want in expected.items():
        assert got[name].dtype == want.dtype and got[name].shape == want.shape, name
        assert relative_l2(got[name], want) < 1e-5, name


def test_describes_inputs_and_outputs(llama_session):
    inputs = {i.name: i for i in llama_session.inputs}
    assert list(inputs) == ["x", "past_k", "past_v", "pos", "mask"]
    assert inputs["x"].dtype == np.float32 and inputs["x"].shape == (1, 1, 64)
    assert inputs["pos"].dtype == np.int64 and inputs["pos"].shape == (1,)
    assert not any(i.donated for i in inputs.values())
    outputs = {o.name: o for o in llama_session.outputs}
    assert outputs["present_k"].shape == (1, 2, 32, 16)
    assert all(o.aliased_input is None for o in outputs.values())
    assert llama_session.peak_bytes > 0
    assert llama_session.compile_seconds >= 0


def test_outputs_are_new_arrays_and_inputs_are_left_alone(llama_session):
    feed = decode_feed(5, np.random.default_rng(1))
    before = {k: v.copy() for k, v in feed.items()}
    out = llama_session.run(feed)
    for name, array in out.items():
        assert array.flags.owndata and array.flags.writeable, name
        assert not any(np.shares_memory(array, v) for v in feed.values()), name
    for name, array in feed.items():
        assert np.array_equal(array, before[name]), name


def test_converts_other_dtypes_and_layouts(llama_session):
    feed = decode_feed(9, np.random.default_rng(2))
    plain = llama_session.run(feed)
    other = dict(feed)
    other["x"] = feed["x"].astype(np.float64)  # another dtype of the same kind
    other["past_k"] = np.asfortranarray(feed["past_k"])  # not C-contiguous
    other["past_v"] = feed["past_v"][:, ::-1][:, ::-1]  # a strided view
    other["pos"] = [9]  # not an array
    converted = llama_session.run(other)
    for name in plain:
        assert np.array_equal(converted[name], plain[name]), name


def test_explain_returns_the_strategy_as_data(llama_f32, llama_session):
    moves = llama_session.explain()
    ops = {n.name: n.op_type for n in onnx.load(str(llama_f32)).graph.node}
    assert moves
    for m in moves:
        assert set(m) == {"node", "op", "became", "eliminated", "mapping_type", "saving_seconds",
                          "held_back"}
        assert ops.get(m["node"]) == m["op"], m
        if m["eliminated"]:
            assert m["became"].startswith("virtual"), m
    assert any(m["eliminated"] for m in moves)
    assert {m["op"] for m in moves} >= {"Reshape", "Transpose"}


def test_explain_of_strategy_none_keeps_everything_physical(llama_f32):
    session = vtc.Session(llama_f32, strategy="none", quiet=True)
    moves = session.explain()
    assert moves and all(m["became"] == "physical" and not m["eliminated"] for m in moves)
    with pytest.raises(vtc.Error, match="target ref runs the reference interpreter"):
        vtc.Session(llama_f32, target="ref", quiet=True).explain()
