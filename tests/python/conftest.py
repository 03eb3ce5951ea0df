"""Fixtures of the Python package's tests: a work directory (the build tree's python-test/
under ctest, $VTC_TEST_WORK) and the small models generated there by models/generate.py."""

import os
from pathlib import Path

import pytest

from helpers import generate


@pytest.fixture(scope="session")
def work_dir(tmp_path_factory):
    given = os.environ.get("VTC_TEST_WORK")
    if not given:
        return tmp_path_factory.mktemp("vtc-python")
    Path(given).mkdir(parents=True, exist_ok=True)
    return Path(given)


@pytest.fixture(scope="session")
def llama_f32(work_dir):
    return generate(work_dir, "llama3_layer", "f32")


@pytest.fixture(scope="session")
def llama_bf16(work_dir):
    return generate(work_dir, "llama3_layer", "bf16")


@pytest.fixture(scope="session")
def llama_session(llama_f32):
    """The small Llama layer compiled for cpu with the greedy strategy (the defaults)."""
    import vtc

    return vtc.Session(llama_f32, quiet=True)
