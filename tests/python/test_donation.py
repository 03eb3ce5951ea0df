"""Donated inputs (Options::donate): the small Llama layer's KV cache updated in place across
decode steps, each step's outputs fed back as the next step's inputs, against the reference
interpreter run without donation; and a donated input that had to be converted, whose caller
array is then left as it was."""

import numpy as np

import vtc
from helpers import decode_feed, relative_l2


def mask_at(pos, cache_len=32):
    return np.where(np.arange(cache_len) <= pos, 0.0, -32768.0).astype(np.float32).reshape(
        1, 1, 1, cache_len)


def test_kv_cache_fed_back_matches_the_reference(llama_f32):
    session = vtc.Session(llama_f32, donate=["past_k", "past_v"], quiet=True)
    reference = vtc.Session(llama_f32, target="ref", quiet=True)
    assert {i.name for i in session.inputs if i.donated} == {"past_k", "past_v"}
    assert {o.name: o.aliased_input for o in session.outputs} == {
        "present_k": "past_k", "present_v": "past_v", "y": None}

    feed = decode_feed(16, np.random.default_rng(3))
    x, cache_k, cache_v = feed["x"], feed["past_k"], feed["past_v"]
    ref_x, ref_k, ref_v = x.copy(), cache_k.copy(), cache_v.copy()
    start_k = cache_k.copy()
    for pos in range(16, 24):
        step = {"pos": np.array([pos]), "mask": mask_at(pos)}
        out = session.run({"x": x, "past_k": cache_k, "past_v": cache_v, **step})
        assert out["present_k"] is cache_k and out["present_v"] is cache_v  # in place
        ref = reference.run({"x": ref_x, "past_k": ref_k, "past_v": ref_v, **step})
        for name in ("y", "present_k", "present_v"):
            assert relative_l2(out[name], ref[name]) < 1e-5, (pos, name)
        x, ref_x, ref_k, ref_v = out["y"], ref["y"], ref["present_k"], ref["present_v"]
    # the caller's cache holds the steps' rows, the earlier context untouched
    assert np.array_equal(cache_k[:, :, :16], start_k[:, :, :16])
    assert not np.array_equal(cache_k[:, :, 16:24], start_k[:, :, 16:24])
    assert relative_l2(cache_k, ref_k) < 1e-5


def test_a_converted_donated_input_is_left_alone(llama_f32):
    session = vtc.Session(llama_f32, donate=["past_k", "past_v"], quiet=True)
    feed = decode_feed(7, np.random.default_rng(4))
    wide = feed["past_k"].astype(np.float64)  # converted to float32: the copy is updated
    before = wide.copy()
    out = session.run({**feed, "past_k": wide})
    assert np.array_equal(wide, before)
    assert out["present_k"].dtype == np.float32 and not np.shares_memory(out["present_k"], wide)
    assert not np.array_equal(out["present_k"], before.astype(np.float32))  # row 7 written
