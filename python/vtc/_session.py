"""vtc.Session: compile an ONNX model once, then run it on numpy arrays.

    session = vtc.Session("llama.onnx", donate=["past_k", "past_v"], dims={"batch": 1})
    outputs = session.run({"x": x, "past_k": k, "past_v": v})   # dict of numpy arrays

Options are those of vtc::Options (include/vtc/options.h) in the command line's spellings.
Inputs are bound without copies where their dtype and C-contiguous layout match the model
(else converted once); outputs are new numpy arrays owning their memory.

Donation follows the C++ API: a donated input may be overwritten by the run. When the program
computes an output in that input's buffer (a KV cache updated in place: `outputs` of
`session.outputs` with `aliased_input` set), the run writes it into the caller's array and
returns that same array as the output -- feed it back on the next step and the cache never
moves. When the input had to be converted (another dtype, not C-contiguous, read-only) the
copy is updated instead and the caller's array is left as it was.
"""

import os
from dataclasses import dataclass
from typing import Optional, Tuple

import numpy as np

from . import _dtypes, _vtc


@dataclass(frozen=True)
class TensorInfo:
    """A graph input or output: name, numpy dtype, shape; `vtc_dtype` is vtc's name for it
    ("f32", "bf16", ...). Inputs say whether they are donated; outputs name the donated input
    whose buffer holds them, if any."""

    name: str
    dtype: np.dtype
    shape: Tuple[int, ...]
    vtc_dtype: str
    donated: bool = False
    aliased_input: Optional[str] = None


def _tensor_infos(specs):
    return [
        TensorInfo(name, _dtypes.numpy_dtype(dtype), tuple(shape), dtype, donated, alias or None)
        for name, dtype, shape, donated, alias in specs
    ]


def _kernel_source_dir():
    """The installed package carries the kernel templates the JIT compiles (kernels/); a build
    tree's module uses the source tree it was built from (and $VTC_SOURCE_DIR wins)."""
    here = os.path.dirname(os.path.abspath(__file__))
    if os.path.isdir(os.path.join(here, "kernels")) and not os.environ.get("VTC_SOURCE_DIR"):
        return here
    return ""


class Session:
    """A compiled model. See the module's documentation."""

    def __init__(
        self,
        path,
        target="cpu",
        strategy="greedy",
        donate=(),
        dims=None,
        cache_dir=None,
        threads=0,
        library="auto",
        quiet=False,
        source_dir=None,
    ):
        if isinstance(donate, str):
            donate = [donate]
        self._core = _vtc.Session(
            os.fspath(path),
            target=target,
            strategy=strategy,
            donate=list(donate),
            dims=dict(dims or {}),
            cache_dir=os.fspath(cache_dir) if cache_dir else "",
            threads=threads,
            library=library,
            quiet=quiet,
            source_dir=os.fspath(source_dir) if source_dir else _kernel_source_dir(),
        )
        self._inputs = _tensor_infos(self._core.inputs)
        self._outputs = _tensor_infos(self._core.outputs)

    @property
    def inputs(self):
        """The graph inputs (TensorInfo), in the model's order."""
        return list(self._inputs)

    @property
    def outputs(self):
        """The graph outputs (TensorInfo), in the model's order."""
        return list(self._outputs)

    @property
    def peak_bytes(self):
        """Bytes of the intermediate arena (0 for target ref)."""
        return self._core.peak_bytes

    @property
    def constant_bytes(self):
        """Bytes of the model's constants."""
        return self._core.constant_bytes

    @property
    def compile_seconds(self):
        """Seconds the JIT compiler ran (0 when the code came from the cache)."""
        return self._core.compile_seconds

    @property
    def threads(self):
        """Threads the kernels run on."""
        return self._core.threads

    @property
    def last_step_times(self):
        """Seconds each step of the program took in the last run (empty for target ref)."""
        return list(self._core.last_step_times)

    def explain(self):
        """What the strategy made of each data-movement node, in schedule order: a list of
        dicts with node, op, became ("physical", "virtual read side", ...), eliminated,
        mapping_type, saving_seconds and held_back (moves not taken because they would raise
        peak memory) -- the data `vtc explain` prints."""
        return self._core.explain()

    def run(self, feed):
        """Runs the model on `feed` (input name -> array) and returns output name -> array."""
        inputs = {info.name: info for info in self._inputs}
        bound, same_memory = {}, {}
        for name, value in feed.items():
            info = inputs.get(name)
            if info is None:  # Session::run names the model's inputs in its error
                bound[name] = np.asarray(value)
                continue
            bound[name], same_memory[name] = _dtypes.bind_input(
                "input", name, value, info.vtc_dtype, writable=info.donated
            )
        written, caller_memory = {}, {}
        for info in self._outputs:
            source = info.aliased_input
            if source in bound and source in inputs:  # computed in place in the donated input
                written[info.name], caller_memory[info.name] = bound[source], same_memory[source]
            else:
                written[info.name], caller_memory[info.name] = _dtypes.new_output(
                    info.shape, info.vtc_dtype
                )
        self._core.run(bound, written)
        return {
            info.name: _dtypes.caller_array(
                written[info.name], caller_memory[info.name], info.vtc_dtype
            )
            for info in self._outputs
        }
