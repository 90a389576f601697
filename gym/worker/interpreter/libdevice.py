"""libdevice (`triton.language.extra.libdevice`, `...extra.cuda.libdevice`) under the CPU interpreter.

Triton 3.7's interpreter has no libdevice: the backend-neutral stubs return None and the
CUDA functions end in `create_extern_elementwise`, which raises NotImplementedError. Here
every libdevice function runs the CUDA function's own type dispatch and broadcasting (with
the interpreter's semantic), and `create_extern_elementwise` computes the CUDA symbol with
numpy: float32 in, float32 out, as on a GPU (accurate rather than approximate results; the
`fast_*` variants keep the GPU's exp2/log2 formulation). A symbol with no CPU version raises
InterpreterLimitError.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from typing import Any

import numpy as np

from .limits import InterpreterLimitError

Array = Any  # a numpy array (TensorHandle.data)
Impl = Callable[..., Array]

_F32 = np.float32
_F64 = np.float64
_LOG2E = 1.4426950408889634
_LN2 = 0.6931471805599453
_LOG2_10 = 3.321928094887362
_LOG10_2 = 0.30102999566398120


def _f64(x: Array) -> Array:
    return np.asarray(x).astype(_F64, copy=False)


def _vectorized(function: Callable[[float], float]) -> Impl:
    """A float function of the math module over an array (in float64; domain errors give NaN/inf)."""

    def safe(value: float) -> float:
        try:
            return function(value)
        except OverflowError:
            return math.inf
        except ValueError:
            return math.nan

    vector = np.vectorize(safe, otypes=[_F64])
    return lambda x: vector(_f64(x))


_erf64 = _vectorized(math.erf)
_erfc64 = _vectorized(math.erfc)


def _gamma(value: float) -> float:
    if value == -math.inf or (value <= 0 and value == math.floor(value)):
        return math.nan if value != 0 else math.copysign(math.inf, value)
    return math.gamma(value)


def _erfinv(y: Array) -> Array:
    """Inverse error function: Giles' single-precision approximation, then two Newton steps in float64."""
    y = _f64(y)
    w = -np.log((1.0 - y) * (1.0 + y))
    small = w < 5.0
    ws = w - 2.5
    p = 2.81022636e-08
    for c in (3.43273939e-07, -3.5233877e-06, -4.39150654e-06, 0.00021858087, -0.00125372503, -0.00417768164, 0.246640727, 1.50140941):
        p = c + p * ws
    wl = np.sqrt(np.maximum(w, 5.0)) - 3.0
    q = -0.000200214257
    for c in (0.000100950558, 0.00134934322, -0.00367342844, 0.00573950773, -0.0076224613, 0.00943887047, 1.00167406, 2.83297682):
        q = c + q * wl
    x = np.where(small, p, q) * y
    finite = np.abs(y) < 1.0
    x = np.where(finite, x, 0.0)
    for _ in range(2):
        x = x - (_erf64(x) - np.where(finite, y, 0.0)) / (2.0 / math.sqrt(math.pi) * np.exp(-x * x))
    return np.where(finite, x, np.where(np.abs(y) == 1.0, np.copysign(np.inf, y), np.nan))


def _erfcx(x: Array) -> Array:
    x = _f64(x)
    with np.errstate(all="ignore"):
        direct = np.exp(x * x) * _erfc64(np.minimum(x, 25.0))
        inv = 1.0 / np.maximum(x, 25.0)
        asymptotic = inv / math.sqrt(math.pi) * (1.0 - 0.5 * inv * inv + 0.75 * inv**4)
    return np.where(x < 25.0, direct, asymptotic)


def _round_half_away(x: Array) -> Array:
    t = np.trunc(x)
    return np.where(np.abs(x - t) >= 0.5, t + np.sign(x), t)


def _round_f32(value: Array, mode: str) -> Array:
    """float64 values to float32 with a rounding mode: rn (nearest even), rz, rd, ru."""
    value = _f64(value)
    nearest = value.astype(_F32)
    if mode == "rn":
        return nearest
    back = nearest.astype(_F64)
    if mode == "rz":
        toward = np.where(np.abs(back) > np.abs(value), np.nextafter(nearest, _F32(0)), nearest)
    elif mode == "rd":
        toward = np.where(back > value, np.nextafter(nearest, _F32(-np.inf)), nearest)
    else:
        toward = np.where(back < value, np.nextafter(nearest, _F32(np.inf)), nearest)
    return np.where(np.isnan(value), nearest, toward)


def _directed(op: Callable[..., Array], mode: str) -> Impl:
    """An arithmetic op with a rounding mode: exact-ish in float64, then rounded to float32 by `mode`
    (float64 operands: computed in float64, round to nearest)."""

    def impl(*xs: Array) -> Array:
        if np.asarray(xs[0]).dtype == _F32:
            return _round_f32(op(*(_f64(x) for x in xs)), mode)
        return op(*xs)

    return impl


def _saturating_int(value: Array, dtype: Any) -> Array:
    """Float values to an integer dtype the way the GPU's cvt.sat does: clamp, NaN to 0."""
    info = np.iinfo(dtype)
    value = np.where(np.isnan(value), 0.0, _f64(value))
    high = value >= float(info.max)
    low = value <= float(info.min)
    out = np.where(high | low, 0.0, value).astype(dtype)
    out[high] = info.max
    out[low] = info.min
    return out


_ROUNDERS: dict[str, Callable[[Array], Array]] = {"rn": np.rint, "rz": np.trunc, "rd": np.floor, "ru": np.ceil}
_INT_KINDS = {"int": np.int32, "uint": np.uint32, "ll": np.int64, "ull": np.uint64}


def _convert(source: str, target: str, mode: str) -> Impl:
    """`<source>2<target>_<mode>` conversions (e.g. float2int_rz, ll2float_rd, double2float_ru)."""
    if target in _INT_KINDS:
        kind = _INT_KINDS[target]
        return lambda x: _saturating_int(_ROUNDERS[mode](_f64(x)), kind)
    if target == "float":
        return lambda x: _round_f32(_f64(x), mode)
    return _f64  # to double: exact for 32-bit sources, nearest for 64-bit integers


def _bit_length_u64(x: Array) -> Array:
    x = np.asarray(x).astype(np.uint64)
    high = (x >> np.uint64(32)).astype(_F64)
    low = (x & np.uint64(0xFFFFFFFF)).astype(_F64)
    return np.where(high > 0, 32 + np.frexp(high)[1], np.frexp(low)[1]).astype(np.int32)


def _bits(x: Array) -> tuple[Array, int]:
    """The unsigned bit pattern of an integer array and its width."""
    x = np.asarray(x)
    width = x.dtype.itemsize * 8
    return x.view(np.dtype(f"uint{width}")).astype(np.uint64), width


def _clz(x: Array) -> Array:
    bits, width = _bits(x)
    return width - _bit_length_u64(bits)


def _popc(x: Array) -> Array:
    bits, _ = _bits(x)
    return np.bitwise_count(bits).astype(np.int32)


def _ffs(x: Array) -> Array:
    bits, _ = _bits(x)
    lowest = bits & (~bits + np.uint64(1))
    return _bit_length_u64(lowest)


_BYTE_REVERSED = np.array([int(f"{i:08b}"[::-1], 2) for i in range(256)], dtype=np.uint64)


def _brev(x: Array) -> Array:
    bits, width = _bits(x)
    out = np.zeros_like(bits)
    for i in range(width // 8):
        byte = (bits >> np.uint64(8 * i)) & np.uint64(0xFF)
        out |= _BYTE_REVERSED[byte] << np.uint64(width - 8 - 8 * i)
    return out.astype(np.dtype(f"uint{width}")).view(np.asarray(x).dtype)


def _mulhi(a: Array, b: Array) -> Array:
    a, b = np.asarray(a), np.asarray(b)
    if a.dtype.itemsize == 4:
        wide = np.int64 if a.dtype.kind == "i" else np.uint64
        return (a.astype(wide) * b.astype(wide)) >> wide(32)
    vector = np.vectorize(lambda u, v: (int(u) * int(v)) >> 64, otypes=[object])
    return np.asarray(vector(a, b)).astype(a.dtype)


def _mul24(a: Array, b: Array) -> Array:
    a, b = np.asarray(a), np.asarray(b)
    if a.dtype.kind == "i":
        low_a = ((a.astype(np.int64) & 0xFFFFFF) ^ 0x800000) - 0x800000
        low_b = ((b.astype(np.int64) & 0xFFFFFF) ^ 0x800000) - 0x800000
        return (low_a * low_b).astype(np.int32)
    mask = np.uint64(0xFFFFFF)
    return ((a.astype(np.uint64) & mask) * (b.astype(np.uint64) & mask)).astype(np.uint32)


def _byte_perm(x: Array, y: Array, selector: Array) -> Array:
    pool = (np.asarray(y).astype(np.uint32).astype(np.uint64) << np.uint64(32)) | np.asarray(x).astype(np.uint32).astype(np.uint64)
    s = np.asarray(selector).astype(np.uint32).astype(np.uint64)
    out = np.zeros(np.broadcast(pool, s).shape, dtype=np.uint64)
    for i in range(4):
        pick = (s >> np.uint64(4 * i)) & np.uint64(7)
        out |= ((pool >> (np.uint64(8) * pick)) & np.uint64(0xFF)) << np.uint64(8 * i)
    return out.astype(np.uint32).view(np.int32)


def _halving(a: Array, b: Array, up: int) -> Array:
    a, b = np.asarray(a), np.asarray(b)
    wide = np.int64 if a.dtype.kind == "i" else np.uint64
    return ((a.astype(wide) + b.astype(wide) + wide(up)) >> wide(1)).astype(a.dtype)


def _sinpi(x: Array) -> Array:
    x = _f64(x)
    r = x - 2.0 * np.round(x / 2.0)
    return np.where(x == np.round(x), np.copysign(0.0, x), np.sin(math.pi * r))


def _cospi(x: Array) -> Array:
    x = _f64(x)
    r = x - 2.0 * np.round(x / 2.0)
    half = (x - 0.5) == np.round(x - 0.5)
    return np.where(half, 0.0, np.cos(math.pi * r))


def _ilogb(x: Array) -> Array:
    x = np.asarray(x)
    exponent = (np.frexp(x)[1] - 1).astype(np.int64)
    exponent = np.where(x == 0, -(2**31), exponent)
    return np.where(np.isnan(x) | np.isinf(x), 2**31 - 1, exponent).astype(np.int32)


def _logb(x: Array) -> Array:
    x = np.asarray(x)
    exponent = (np.frexp(x)[1] - 1).astype(x.dtype)
    exponent = np.where(x == 0, -np.inf, exponent)
    return np.where(np.isinf(x), np.inf, np.where(np.isnan(x), x, exponent))


def _bessel(name: str) -> Impl:
    def impl(*xs: Array) -> Array:
        raise InterpreterLimitError(f"libdevice.{name} has no CPU implementation (numpy has no Bessel functions)")

    return impl


def _hi_lo(hi: Array, lo: Array) -> Array:
    bits = (np.asarray(hi).astype(np.uint32).astype(np.uint64) << np.uint64(32)) | np.asarray(lo).astype(np.uint32).astype(np.uint64)
    return bits.view(_F64)


def _one(x: Array) -> Any:
    return np.asarray(x).dtype.type(1)


# libdevice function name (as in triton/language/extra/cuda/libdevice.py) -> numpy implementation.
IMPLEMENTATIONS: dict[str, Impl] = {
    "abs": np.abs,
    "floor": np.floor,
    "ceil": np.ceil,
    "trunc": np.trunc,
    "rint": np.rint,
    "nearbyint": np.rint,
    "round": _round_half_away,
    "llrint": lambda x: _saturating_int(np.rint(_f64(x)), np.int64),
    "llround": lambda x: _saturating_int(_round_half_away(_f64(x)), np.int64),
    "exp": np.exp,
    "exp2": np.exp2,
    "exp10": lambda x: np.power(10.0, _f64(x)),
    "expm1": np.expm1,
    "log": np.log,
    "log2": np.log2,
    "log10": np.log10,
    "log1p": np.log1p,
    "sqrt": np.sqrt,
    "cbrt": np.cbrt,
    "rcbrt": lambda x: 1.0 / np.cbrt(_f64(x)),
    "rsqrt": lambda x: 1.0 / np.sqrt(_f64(x)),
    "rsqrt_rn": lambda x: 1.0 / np.sqrt(_f64(x)),
    "rcp64h": lambda x: 1.0 / _f64(x),
    "sin": np.sin,
    "cos": np.cos,
    "tan": np.tan,
    "sinpi": _sinpi,
    "cospi": _cospi,
    "sinh": np.sinh,
    "cosh": np.cosh,
    "tanh": np.tanh,
    "asin": np.arcsin,
    "acos": np.arccos,
    "atan": np.arctan,
    "asinh": np.arcsinh,
    "acosh": np.arccosh,
    "atanh": np.arctanh,
    "atan2": lambda y, x: np.arctan2(y, x),
    "hypot": lambda x, y: np.hypot(_f64(x), _f64(y)),
    "rhypot": lambda x, y: 1.0 / np.hypot(_f64(x), _f64(y)),
    "norm3d": lambda a, b, c: np.sqrt(_f64(a) ** 2 + _f64(b) ** 2 + _f64(c) ** 2),
    "rnorm3d": lambda a, b, c: 1.0 / np.sqrt(_f64(a) ** 2 + _f64(b) ** 2 + _f64(c) ** 2),
    "norm4d": lambda a, b, c, d: np.sqrt(_f64(a) ** 2 + _f64(b) ** 2 + _f64(c) ** 2 + _f64(d) ** 2),
    "rnorm4d": lambda a, b, c, d: 1.0 / np.sqrt(_f64(a) ** 2 + _f64(b) ** 2 + _f64(c) ** 2 + _f64(d) ** 2),
    "pow": lambda x, y: np.power(_f64(x), _f64(y)),
    "fmod": np.fmod,
    "remainder": lambda x, y: _f64(x) - _f64(y) * np.rint(_f64(x) / _f64(y)),
    "copysign": np.copysign,
    "nextafter": np.nextafter,
    "fdim": lambda x, y: np.where(np.isnan(x) | np.isnan(y), x + y, np.maximum(x - y, 0)),
    "ldexp": lambda x, e: np.ldexp(_f64(x), np.asarray(e).astype(np.int32)),
    "scalbn": lambda x, e: np.ldexp(_f64(x), np.asarray(e).astype(np.int32)),
    "fma": lambda a, b, c: _f64(a) * _f64(b) + _f64(c),
    "erf": _erf64,
    "erfc": _erfc64,
    "erfinv": _erfinv,
    "erfcinv": lambda y: _erfinv(1.0 - _f64(y)),
    "erfcx": _erfcx,
    "normcdf": lambda x: 0.5 * _erfc64(-_f64(x) / math.sqrt(2.0)),
    "normcdfinv": lambda p: -math.sqrt(2.0) * _erfinv(1.0 - 2.0 * _f64(p)),
    "lgamma": _vectorized(math.lgamma),
    "tgamma": _vectorized(_gamma),
    "cyl_bessel_i0": lambda x: np.i0(_f64(x)),
    "ilogb": _ilogb,
    "logb": _logb,
    "isnan": lambda x: np.isnan(x).astype(np.int32),
    "isinf": lambda x: np.isinf(x).astype(np.int32),
    "finitef": lambda x: np.isfinite(x).astype(np.int32),
    "isfinited": lambda x: np.isfinite(x).astype(np.int32),
    "signbit": lambda x: np.signbit(x).astype(np.int32),
    "saturatef": lambda x: np.where(np.isnan(x), 0.0, np.clip(x, 0.0, 1.0)),
    # The GPU's fast_* intrinsics: ex2.approx / lg2.approx on a float32 product, sin/cos.approx.
    "fast_expf": lambda x: np.exp2(np.asarray(x, dtype=_F32) * _F32(_LOG2E)),
    "fast_exp10f": lambda x: np.exp2(np.asarray(x, dtype=_F32) * _F32(_LOG2_10)),
    "fast_logf": lambda x: np.log2(np.asarray(x, dtype=_F32)) * _F32(_LN2),
    "fast_log2f": lambda x: np.log2(np.asarray(x, dtype=_F32)),
    "fast_log10f": lambda x: np.log2(np.asarray(x, dtype=_F32)) * _F32(_LOG10_2),
    "fast_sinf": lambda x: np.sin(np.asarray(x, dtype=_F32)),
    "fast_cosf": lambda x: np.cos(np.asarray(x, dtype=_F32)),
    "fast_tanf": lambda x: np.sin(np.asarray(x, dtype=_F32)) / np.cos(np.asarray(x, dtype=_F32)),
    "fast_powf": lambda x, y: np.exp2(np.asarray(y, dtype=_F32) * np.log2(np.asarray(x, dtype=_F32))),
    "fast_dividef": lambda x, y: np.asarray(x, dtype=_F32) / np.asarray(y, dtype=_F32),
    # Integer intrinsics.
    "clz": _clz,
    "popc": _popc,
    "ffs": _ffs,
    "brev": _brev,
    "mulhi": _mulhi,
    "mul24": _mul24,
    "sad": lambda a, b, c: np.abs(np.asarray(a).astype(np.int64) - np.asarray(b).astype(np.int64)) + np.asarray(c).astype(np.int64),
    "byte_perm": _byte_perm,
    "hadd": lambda a, b: _halving(a, b, 0),
    "rhadd": lambda a, b: _halving(a, b, 1),
    # Bit casts.
    "int_as_float": lambda x: np.asarray(x).astype(np.int32).view(_F32),
    "uint_as_float": lambda x: np.asarray(x).astype(np.uint32).view(_F32),
    "float_as_int": lambda x: np.asarray(x, dtype=_F32).view(np.int32),
    "float_as_uint": lambda x: np.asarray(x, dtype=_F32).view(np.uint32),
    "longlong_as_double": lambda x: np.asarray(x).astype(np.int64).view(_F64),
    "double_as_longlong": lambda x: np.asarray(x, dtype=_F64).view(np.int64),
    "hiloint2double": _hi_lo,
    "double2loint": lambda x: np.asarray(x, dtype=_F64).view(np.uint64).astype(np.uint32).view(np.int32),
    "double2hiint": lambda x: (np.asarray(x, dtype=_F64).view(np.uint64) >> np.uint64(32)).astype(np.uint32).view(np.int32),
}
for _mode in ("rn", "rz", "rd", "ru"):
    IMPLEMENTATIONS[f"add_{_mode}"] = _directed(lambda a, b: a + b, _mode)
    IMPLEMENTATIONS[f"sub_{_mode}"] = _directed(lambda a, b: a - b, _mode)
    IMPLEMENTATIONS[f"mul_{_mode}"] = _directed(lambda a, b: a * b, _mode)
    IMPLEMENTATIONS[f"div_{_mode}"] = _directed(lambda a, b: a / b, _mode)
    IMPLEMENTATIONS[f"rcp_{_mode}"] = _directed(lambda a: _one(a) / a, _mode)
    IMPLEMENTATIONS[f"sqrt_{_mode}"] = _directed(np.sqrt, _mode)
    IMPLEMENTATIONS[f"fma_{_mode}"] = _directed(lambda a, b, c: a * b + c, _mode)
    for _source in ("double", "float", "int", "uint", "ll", "ull"):
        for _target in ("double", "float", "int", "uint", "ll", "ull"):
            if _source != _target:
                IMPLEMENTATIONS[f"{_source}2{_target}_{_mode}"] = _convert(_source, _target, _mode)
for _name in ("j0", "j1", "y0", "y1", "jn", "yn", "cyl_bessel_i1"):
    IMPLEMENTATIONS[_name] = _bessel(_name)

_DEF = re.compile(r"^def (\w+)\(", re.MULTILINE)
_SYMBOL = re.compile(r'"(__nv_\w+)"')


def symbol_names(source: str) -> dict[str, str]:
    """CUDA symbol (e.g. "__nv_rsqrtf") -> libdevice function name ("rsqrt"), from the module's source."""
    names: dict[str, str] = {}
    starts = list(_DEF.finditer(source))
    for match, following in zip(starts, starts[1:] + [None]):
        body = source[match.end() : following.start() if following else len(source)]
        for symbol in _SYMBOL.findall(body):
            names.setdefault(symbol, match.group(1))
    return names


def install(patch: Callable[[Any, str, Any], None]) -> None:
    """Make libdevice calls work inside interpreted kernels (`patch` is setattr, remembered)."""
    import inspect

    import triton.language.extra.cuda.libdevice as cuda_libdevice
    import triton.language.extra.libdevice as stub_libdevice
    from triton.language import core
    from triton.runtime import interpreter

    names = symbol_names(inspect.getsource(cuda_libdevice))
    semantic = interpreter.interpreter_semantic
    get_np_dtype = interpreter._get_np_dtype
    handle_class = interpreter.TensorHandle

    def create_extern_elementwise(self: Any, lib_name: str, lib_path: str, symbol: str, args: list[Any], ret_type: Any, is_pure: bool) -> Any:
        name = names.get(symbol, symbol)
        implementation = IMPLEMENTATIONS.get(name)
        if implementation is None:
            raise InterpreterLimitError(f"libdevice.{name} ({symbol}) has no CPU implementation")
        scalar = ret_type.scalar
        with np.errstate(all="ignore"):
            data = np.asarray(implementation(*(arg.data for arg in args)))
        return handle_class(data.astype(get_np_dtype(scalar), copy=False), scalar)

    patch(interpreter.InterpreterBuilder, "create_extern_elementwise", create_extern_elementwise)

    def create_inline_asm(self: Any, asm: str, constraints: str, values: Any, types: Any, is_pure: bool, pack: int) -> Any:
        raise InterpreterLimitError(f"tl.inline_asm_elementwise ({asm.strip()[:60]!r}) cannot run: the interpreter executes no GPU assembly")

    patch(interpreter.InterpreterBuilder, "create_inline_asm", create_inline_asm)

    def bound(function: Any) -> Any:
        def call(*args: Any, _semantic: Any = None, **kwargs: Any) -> Any:
            return function(*args, _semantic=semantic, **kwargs)

        call.__name__ = call.__qualname__ = getattr(function, "__name__", "libdevice")
        call.__doc__ = function.__doc__
        call.__module__ = stub_libdevice.__name__
        return call

    def missing(name: str) -> Any:
        def call(*args: Any, **kwargs: Any) -> Any:
            raise AttributeError(f"libdevice.{name} has no CUDA implementation in this Triton: the GPU compiler rejects it too")

        call.__name__ = call.__qualname__ = name
        call.__module__ = stub_libdevice.__name__
        return call

    for name, function in list(vars(cuda_libdevice).items()):
        if core.is_builtin(function):
            patch(cuda_libdevice, name, bound(function))
    for name, function in list(vars(stub_libdevice).items()):
        if inspect.isfunction(function) and function.__module__ == stub_libdevice.__name__ and not name.startswith("_"):
            cuda_function = vars(cuda_libdevice).get(name)
            patch(stub_libdevice, name, cuda_function if cuda_function is not None else missing(name))
