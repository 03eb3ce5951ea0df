"""Element types between numpy and vtc.

vtc names its dtypes "f32", "bf16", "i64", ...; this module maps them to numpy dtypes and to
onnxruntime's type strings, and turns the arrays a caller gives into the arrays bound to the
compiled program: the caller's own array whenever its dtype and C-contiguous layout already
match (no copy), else one conversion. bfloat16 is ml_dtypes.bfloat16 when ml_dtypes is
installed; without it a bf16 tensor is given and returned as float32, rounded to the nearest
bfloat16 on the way in and exact on the way out (as `vtc run` writes bf16 .npy files). Either
way the program sees the 16-bit patterns, bound as uint16.
"""

import numpy as np

try:
    import ml_dtypes

    bfloat16 = np.dtype(ml_dtypes.bfloat16)
except ImportError:  # bf16 tensors then cross as float32
    bfloat16 = None

_NUMPY = {
    "f32": np.dtype(np.float32),
    "f16": np.dtype(np.float16),
    "f64": np.dtype(np.float64),
    "i64": np.dtype(np.int64),
    "i32": np.dtype(np.int32),
    "i8": np.dtype(np.int8),
    "u8": np.dtype(np.uint8),
    "bool": np.dtype(np.bool_),
}

ONNXRUNTIME_TYPE = {
    "f32": "tensor(float)",
    "f16": "tensor(float16)",
    "bf16": "tensor(bfloat16)",
    "f64": "tensor(double)",
    "i64": "tensor(int64)",
    "i32": "tensor(int32)",
    "i8": "tensor(int8)",
    "u8": "tensor(uint8)",
    "bool": "tensor(bool)",
}


def numpy_dtype(name):
    """The numpy dtype callers use for vtc dtype `name` (bf16: see the module's note)."""
    if name == "bf16":
        return bfloat16 if bfloat16 is not None else np.dtype(np.float32)
    return _NUMPY[name]


def _round_to_bf16_bits(values):
    """float32 values as bfloat16 bit patterns, rounded to nearest even (NaN stays NaN)."""
    f32 = np.asarray(values, dtype=np.float32, order="C")
    bits = f32.view(np.uint32).astype(np.uint64)
    rounded = ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16).astype(np.uint16)
    rounded[np.isnan(f32)] = 0x7FC0
    return rounded


def bind_input(what, name, value, dtype, writable):
    """(array bound to the program, the caller-dtype array sharing its memory or None).

    The bound array is `value` itself when nothing needs converting (and, when `writable` --
    a donated input the program may overwrite -- when it is writeable), else one converted
    copy. A value of another kind (a float for an integer input) raises ValueError."""
    array = np.asarray(value)
    if dtype == "bf16" and bfloat16 is None:
        if array.dtype.kind not in "fiub":
            raise ValueError(f"{what} '{name}' is {array.dtype}, the model expects bf16 (as float32)")
        return _round_to_bf16_bits(array), None
    want = numpy_dtype(dtype)
    if array.dtype != want:
        if not np.can_cast(array.dtype, want, casting="same_kind"):
            raise ValueError(f"{what} '{name}' is {array.dtype}, the model expects {want}")
        array = array.astype(want)
    if not array.flags.c_contiguous or (writable and not array.flags.writeable):
        array = np.array(array, order="C")
    bound = array.view(np.uint16) if dtype == "bf16" else array
    return bound, array


def new_output(shape, dtype):
    """(array the program writes, the caller-dtype array sharing its memory or None)."""
    if dtype == "bf16" and bfloat16 is None:
        return np.empty(shape, dtype=np.uint16), None
    array = np.empty(shape, dtype=numpy_dtype(dtype))
    return (array.view(np.uint16) if dtype == "bf16" else array), array


def caller_array(bound, same_memory, dtype):
    """What the caller gets back for a bound array after the run."""
    if same_memory is not None:
        return same_memory
    assert dtype == "bf16" and bfloat16 is None
    values = np.empty(bound.shape, dtype=np.float32)
    values.view(np.uint32)[...] = bound.astype(np.uint32) << 16
    return values
