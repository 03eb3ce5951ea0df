"""bfloat16 models: with ml_dtypes, arrays of ml_dtypes.bfloat16 in and out; without it,
float32 in (rounded to the nearest bfloat16) and out (exact). Both give the same values, and
the compiled program matches the reference interpreter within the bf16 tolerance."""

import numpy as np
import pytest

import vtc
from vtc import _dtypes
from helpers import decode_feed, relative_l2

ml_dtypes = pytest.importorskip("ml_dtypes")


@pytest.fixture(scope="module")
def bf16_session(llama_bf16):
    return vtc.Session(llama_bf16, quiet=True)


def test_bf16_arrays_in_and_out(llama_bf16, bf16_session):
    assert all(i.dtype == ml_dtypes.bfloat16 for i in bf16_session.inputs if i.name != "pos")
    feed = decode_feed(12, np.random.default_rng(8), dtype=ml_dtypes.bfloat16)
    out = bf16_session.run(feed)
    assert out["y"].dtype == ml_dtypes.bfloat16 and out["y"].flags.owndata
    reference = vtc.Session(llama_bf16, target="ref", quiet=True).run(feed)
    for name in out:
        assert relative_l2(out[name].astype(np.float32), reference[name].astype(np.float32)) < 1e-2


def test_without_ml_dtypes_bf16_crosses_as_float32(bf16_session, monkeypatch):
    feed = decode_feed(12, np.random.default_rng(8), dtype=ml_dtypes.bfloat16)
    with_ml_dtypes = bf16_session.run(feed)
    as_f32 = {k: (v.astype(np.float32) if v.dtype == ml_dtypes.bfloat16 else v)
              for k, v in feed.items()}
    monkeypatch.setattr(_dtypes, "bfloat16", None)
    assert _dtypes.numpy_dtype("bf16") == np.float32
    without = bf16_session.run(as_f32)
    for name, value in with_ml_dtypes.items():
        assert without[name].dtype == np.float32 and without[name].flags.owndata
        assert np.array_equal(without[name], value.astype(np.float32)), name


def test_rounding_to_bf16_is_to_nearest_even():
    values = np.array([1.0, 1.00390625, 1.01171875, -2.5e-39, np.inf, np.nan], np.float32)
    expected = values.astype(ml_dtypes.bfloat16).view(np.uint16)
    got = _dtypes._round_to_bf16_bits(values)
    assert np.array_equal(got[:-1], expected[:-1])
    assert np.isnan(got.astype(np.uint32).__lshift__(16).view(np.float32)[-1])
