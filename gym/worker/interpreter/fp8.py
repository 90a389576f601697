"""Float8 conversions in the CPU interpreter, as a GPU rounds them.

Triton's interpreter converts to and from float8 with its own bit arithmetic
(`_convert_float`), which gets float32 -> e4m3 wrong: ties round away from zero, a
rounding carry into the exponent is lost, and values past the largest finite e4m3 wrap
instead of saturating (about 3% of N(0, 100) values differ from the GPU's result). An
honest `x.to(tl.float8e4nv)` would then fail a bitwise contract on CPU only.

On a GPU (sm_89 and later), Triton lowers such a cast to `cvt.rn.satfinite`: round to
nearest, ties to even; finite values past the format's largest clamp to it; NaN stays NaN.
Here every conversion between float8 (e4m3 "nv" and e5m2) and a wider float does the
same in numpy (the op trace watches torch, so the kernel's own casts must not call it):
the source is widened to float64 (exact), clamped to the largest finite value, rounded to
the format's quantum at its binade with `np.rint` (ties to even), and looked up in the
table of the format's values. Conversions up from float8 are exact table lookups.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from typing import Any

import numpy as np


@dataclass(frozen=True)
class Float8Format:
    """One float8 layout: 1 sign bit, `exponent_bits`, `mantissa_bits`, and which codes are not finite."""

    name: str
    exponent_bits: int
    mantissa_bits: int
    bias: int
    largest_code: int  # the largest finite code (sign bit clear)
    nan_code: int  # the code a NaN becomes (sign bit clear)
    infinity_code: int | None  # e5m2 has infinities; e4m3fn does not

    def values(self) -> Any:
        """The value of every non-negative finite code 0 .. largest_code, in increasing order (float64)."""
        return _values(self)


@cache
def _values(fmt: Float8Format) -> Any:
    """`Float8Format.values`, built once per format (casts run inside every interpreted kernel call)."""
    codes = np.arange(fmt.largest_code + 1)
    exponent, mantissa = codes >> fmt.mantissa_bits, codes & ((1 << fmt.mantissa_bits) - 1)
    fraction = mantissa / float(1 << fmt.mantissa_bits)
    normal = (1.0 + fraction) * np.exp2(exponent - fmt.bias)
    subnormal = fraction * np.exp2(1 - fmt.bias)
    table = np.where(exponent == 0, subnormal, normal)
    table.setflags(write=False)
    return table


E4M3FN = Float8Format("e4m3fn", exponent_bits=4, mantissa_bits=3, bias=7, largest_code=0x7E, nan_code=0x7F, infinity_code=None)
E5M2 = Float8Format("e5m2", exponent_bits=5, mantissa_bits=2, bias=15, largest_code=0x7B, nan_code=0x7F, infinity_code=0x7C)


def to_float8(values: Any, fmt: Float8Format) -> Any:
    """Float values rounded to `fmt` as a GPU's `cvt.rn.satfinite` does; the codes as a uint8 array of the same shape."""
    table = fmt.values()
    wide = np.asarray(values, dtype=np.float64)
    negative = np.signbit(wide)
    magnitude = np.minimum(np.abs(np.nan_to_num(wide, nan=0.0)), table[-1])  # satfinite (inf included)
    smallest_normal = 2.0 ** (1 - fmt.bias)
    _, exponent = np.frexp(np.maximum(magnitude, smallest_normal))  # magnitude in [2^(e-1), 2^e)
    quantum = np.exp2(exponent - 1 - fmt.mantissa_bits)
    rounded = np.minimum(np.rint(magnitude / quantum) * quantum, table[-1])  # ties to even; exact in float64
    codes = np.searchsorted(table, rounded).astype(np.uint8)
    codes = np.where(np.isnan(wide), np.uint8(fmt.nan_code), codes)
    return (codes | (negative.astype(np.uint8) << np.uint8(7))).astype(np.uint8).reshape(np.shape(values))


def from_float8(codes: Any, fmt: Float8Format) -> Any:
    """uint8 codes of `fmt` as exact float64 values (NaN codes NaN, e5m2's infinities infinite)."""
    raw = np.asarray(codes, dtype=np.uint8)
    magnitude_code = raw & np.uint8(0x7F)
    table = np.concatenate([fmt.values(), np.full(0x80 - fmt.largest_code - 1, np.nan)])
    if fmt.infinity_code is not None:
        table[fmt.infinity_code] = np.inf
    magnitude = table[magnitude_code]
    return np.where(raw >= 0x80, -magnitude, magnitude)


def install(patch: Callable[[Any, str, Any], None]) -> None:
    """Route the interpreter's float8 conversions through `to_float8` / `from_float8` (`patch` is setattr)."""
    import triton.language as tl
    from triton.runtime import interpreter

    formats = {tl.float8e4nv: E4M3FN, tl.float8e5: E5M2}
    original = interpreter.InterpreterBuilder.create_fp_to_fp
    handle_class = interpreter.TensorHandle
    numpy_dtype = interpreter._get_np_dtype

    def create_fp_to_fp(self: Any, src: Any, dst_type: Any, rounding_mode: Any) -> Any:
        source, target = src.dtype.scalar, dst_type.scalar
        if target in formats and source not in formats:
            data = src.data
            if source == tl.bfloat16:  # the interpreter keeps bfloat16 as its uint16 bits
                data = (np.asarray(data, dtype=np.uint16).astype(np.uint32) << np.uint32(16)).view(np.float32)
            return handle_class(to_float8(data, formats[target]), target)
        if source in formats and target not in formats:
            wide = from_float8(src.data, formats[source])
            if target == tl.bfloat16:  # exact: every float8 value is a bfloat16 value
                bits = wide.astype(np.float32).view(np.uint32) >> np.uint32(16)
                return handle_class(bits.astype(np.uint16), target)
            return handle_class(wide.astype(numpy_dtype(dst_type)), target)
        return original(self, src, dst_type, rounding_mode)

    patch(interpreter.InterpreterBuilder, "create_fp_to_fp", create_fp_to_fp)
