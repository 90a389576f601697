"""What the prompt says about the torch calls of an imported reference and about its tensors' layouts.

An imported problem calls one op with the positional arguments a trace or an OpInfo sample
gave it (`torch.ops.aten.native_batch_norm.default(x, y, z, w, u, False, 0.1, 1e-05)`). The
prompt names each argument from the op's schema (`torch.ops.aten.<op>.<overload>._schema`, or
for a `torch.<name>` call the overload its arguments bind to, or a Python function's own
signature) and gives it a one-line meaning: the op's entry in `OP_ARG_MEANINGS`, else the
`Args:` section of the op's torch docstring, else `ARG_MEANINGS` by argument name, else the
schema type in words. The op itself gets one line from `OP_DESCRIPTIONS` or its docstring.

`describe_layout` states a tensor's strides in words (contiguous, channels-last, a transposed
or permuted view, broadcast dimensions), so a prompt never leaves contiguity implicit.
"""

from __future__ import annotations

import ast
import functools
import inspect
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import torch

# At most this many distinct ops are described, each with at most this many of its calls listed (a
# KernelBench level-3 forward makes dozens).
MAX_CALLS = 8

# What an op computes, by aten name (the overload packet), for ops whose torch docstring is
# missing or does not fit the aten form (the native_* norms, the private softmaxes, convolution).
OP_DESCRIPTIONS: dict[str, str] = {
    "mm": "matrix product `self @ mat2` of an (n, k) and a (k, m) matrix",
    "bmm": "batched matrix product: `out[b] = self[b] @ mat2[b]` for (b, n, k) and (b, k, m) tensors",
    "addmm": "`beta * self + alpha * (mat1 @ mat2)`, `self` broadcast to (n, m) (a linear layer: `self` is its bias)",
    "baddbmm": "`beta * self + alpha * (batch1 @ batch2)` per batch: `out[b] = beta * self[b] + alpha * (batch1[b] @ batch2[b])`",
    "addbmm": "`beta * self + alpha * sum_b(batch1[b] @ batch2[b])`",
    "matmul": "matrix product with numpy semantics (1-D operands promoted, leading batch dims broadcast)",
    "linear": "`input @ weight.T + bias` (a fully connected layer)",
    "add": "elementwise `self + alpha * other`, broadcast",
    "sub": "elementwise `self - alpha * other`, broadcast",
    "rsub": "elementwise `other - alpha * self`, broadcast",
    "mul": "elementwise product `self * other`, broadcast",
    "div": "elementwise `self / other`, broadcast (rounding_mode None: true division; 'trunc' or 'floor': rounded)",
    "pow": "elementwise `self ** exponent`",
    "neg": "elementwise `-self`",
    "relu": "elementwise `max(self, 0)`",
    "silu": "elementwise `x * sigmoid(x)` (SiLU, swish)",
    "gelu": "elementwise GELU `x * Phi(x)` (Phi the standard normal CDF; approximate='tanh': its tanh approximation)",
    "tanh": "elementwise hyperbolic tangent",
    "sigmoid": "elementwise `1 / (1 + exp(-x))`",
    "rsqrt": "elementwise `1 / sqrt(x)`",
    "convolution": (
        "N-d convolution (cross-correlation, as torch.nn.Conv*d) of input (N, C_in, *spatial) with weight "
        "(C_out, C_in / groups, *kernel), plus bias per output channel; transposed=True: the transposed convolution"
    ),
    "native_batch_norm": (
        "batch normalisation per channel (dim 1): `(x - mean) / sqrt(var + eps) * weight + bias`, with the batch's own "
        "statistics over every dim but 1 (training=True) or with running_mean and running_var (training=False)"
    ),
    "_native_batch_norm_legit_no_training": "batch normalisation per channel (dim 1) with running_mean and running_var: `(x - mean) / sqrt(var + eps) * weight + bias`",
    "native_layer_norm": (
        "layer normalisation over the last len(normalized_shape) dims: `(x - mean) / sqrt(var + eps) * weight + bias` "
        "(biased variance), weight and bias of shape normalized_shape"
    ),
    "native_group_norm": (
        "group normalisation: the C channels split into `group` groups, each (sample, group) normalised over its "
        "channels and positions with `(x - mean) / sqrt(var + eps)` (biased variance), then per-channel weight and bias"
    ),
    "embedding": "row lookup: `out[..., :] = weight[indices[...], :]`",
    "cat": "concatenation of `tensors` along `dim`",
    "mean": "mean over the dims in `dim` (over every element when there is no `dim` or it is None)",
    "sum": "sum over the dims in `dim` (over every element when there is no `dim` or it is None)",
    "_softmax": "softmax along `dim`: `exp(x - max) / sum(exp(x - max))`",
    "_safe_softmax": "softmax along `dim` (`exp(x - max) / sum(exp(x - max))`), except that a slice that is all -inf gives zeros, not NaN",
    "_log_softmax": "log-softmax along `dim`: `x - max - log(sum(exp(x - max)))`",
    "softmax": "softmax along `dim`: `exp(x - max) / sum(exp(x - max))`",
    "index": "advanced indexing `self[indices[0], indices[1], ...]` (a None entry takes that whole dim)",
    "where": "elementwise `condition ? self : other`, broadcast",
    "max_pool2d_with_indices": (
        "2-D max pooling over kernel_size windows, returning each window's maximum and its flat index `h * W + w` within its (sample, channel) plane"
    ),
    "avg_pool2d": "2-D average pooling over kernel_size windows",
    "log": "elementwise natural logarithm",
    "exp": "elementwise exponential",
    "clamp": "elementwise `min(max(self, min), max)`",
    "scaled_dot_product_attention": "attention `softmax(query @ key.T * scale + mask) @ value` over the last two dims",
    "clamp_min": "elementwise `max(self, min)`",
    "clamp_max": "elementwise `min(self, max)`",
    "constant_pad_nd": "`self` padded with `value`: `pad` lists (before, after) counts for the last dim, then the one before it, ...",
    "_native_batch_norm_legit": (
        "batch normalisation per channel (dim 1): `(x - mean) / sqrt(var + eps) * weight + bias`, with the batch's own "
        "statistics (training=True, updating running_mean and running_var) or the running ones"
    ),
    "_batch_norm_with_update": "batch normalisation per channel (dim 1) with the batch's own statistics, updating running_mean and running_var",
    "_softmax_backward_data": "the gradient of softmax: `grad_input = output * (grad_output - sum(grad_output * output, dim, keepdim=True))`",
    "_log_softmax_backward_data": "the gradient of log-softmax: `grad_input = grad_output - exp(output) * sum(grad_output, dim, keepdim=True)`",
    "_upsample_bilinear2d_aa": "bilinear resize of the last two dims with antialiasing (a wider, triangle filter when downsampling)",
}

# Meanings of one op's arguments, where the generic ones below would mislead.
_NORM_COMMON = {
    "input": "the input, channels in dim 1: (N, C, *)",
    "weight": "per-channel scale (gamma), shape (C,); None means 1",
    "bias": "per-channel shift (beta), shape (C,); None means 0",
}
_BATCH_NORM = {
    **_NORM_COMMON,
    "running_mean": "per-channel running mean (C,): the mean used when training is False; updated in place when training is True",
    "running_var": "per-channel running variance (C,): the variance used when training is False; updated in place when training is True",
    "training": "True: normalise with the batch's own mean and biased variance (and update the running ones); False: with running_mean and running_var",
    "momentum": "weight of the batch statistics in the running-statistics update (only when training is True; no effect on the output)",
    "eps": "added to the variance before the square root",
}
_CONV = {
    "input": "the input (N, C_in, *spatial)",
    "weight": "the filters (C_out, C_in / groups, *kernel) (transposed: (C_in, C_out / groups, *kernel))",
    "bias": "added per output channel (C_out,); None: no bias",
    "stride": "the step between windows, one per spatial dim",
    "padding": "implicit zero padding on both sides, one per spatial dim",
    "dilation": "the spacing between kernel taps, one per spatial dim",
    "transposed": "True: a transposed convolution (the gradient of a convolution with respect to its input)",
    "output_padding": "extra size added to one side of each spatial output dim (transposed only)",
    "groups": "input and output channels split into this many independent groups",
}
_LAYER_NORM = {
    "input": "the input; the trailing dims given by normalized_shape are normalised together",
    "normalized_shape": "the sizes of the trailing dims normalised over",
    "weight": "elementwise scale of shape normalized_shape; None means 1",
    "bias": "elementwise shift of shape normalized_shape; None means 0",
    "eps": "added to the variance before the square root",
}
_GROUP_NORM = {
    **_NORM_COMMON,
    "N": "the batch size (input.shape[0])",
    "C": "the number of channels (input.shape[1])",
    "HxW": "the number of positions per channel (the product of input.shape[2:])",
    "group": "the number of groups the channels split into (C / group channels each)",
    "num_groups": "the number of groups the channels split into (C / num_groups channels each)",
    "eps": "added to the variance before the square root",
}
OP_ARG_MEANINGS: dict[str, dict[str, str]] = {
    "native_batch_norm": _BATCH_NORM,
    "batch_norm": _BATCH_NORM,
    "instance_norm": {**_BATCH_NORM, "use_input_stats": "True: normalise each (sample, channel) with its own statistics; False: with the running ones"},
    "_native_batch_norm_legit": _BATCH_NORM,
    "_native_batch_norm_legit_no_training": _BATCH_NORM,
    "_batch_norm_with_update": _BATCH_NORM,
    "native_layer_norm": _LAYER_NORM,
    "layer_norm": _LAYER_NORM,
    "native_group_norm": _GROUP_NORM,
    "group_norm": _GROUP_NORM,
    "div": {
        "self": "the dividend",
        "input": "the dividend",
        "other": "the divisor",
        "rounding_mode": "None: true division; 'trunc': rounded toward zero; 'floor': rounded down",
    },
    "convolution": _CONV,
    "conv1d": _CONV,
    "conv2d": _CONV,
    "conv3d": _CONV,
    "embedding": {
        "weight": "the embedding table (num_embeddings, embedding_dim)",
        "indices": "integer row numbers into weight, any shape",
        "input": "integer row numbers into weight, any shape",
        "padding_idx": "a row that gets no gradient (-1: none); the forward is a plain lookup either way",
        "scale_grad_by_freq": "backward only: no effect on the forward",
        "sparse": "backward only: no effect on the forward",
    },
    "addmm": {
        "self": "the term added to the product, broadcast to (n, m) (a linear layer's bias)",
        "input": "the term added to the product, broadcast to (n, m) (a linear layer's bias)",
        "mat1": "the left matrix (n, k)",
        "mat2": "the right matrix (k, m)",
        "beta": "multiplier of self",
        "alpha": "multiplier of mat1 @ mat2",
    },
    "baddbmm": {
        "self": "the term added to each product, broadcast to (b, n, m)",
        "input": "the term added to each product, broadcast to (b, n, m)",
        "batch1": "the left matrices (b, n, k)",
        "batch2": "the right matrices (b, k, m)",
        "beta": "multiplier of self",
        "alpha": "multiplier of batch1 @ batch2",
    },
    "linear": {
        "input": "the input (*, in_features)",
        "weight": "the weight (out_features, in_features): the output is `input @ weight.T`",
        "bias": "added to each output row (out_features,); None: no bias",
    },
    "mm": {"self": "the left matrix (n, k)", "input": "the left matrix (n, k)", "mat2": "the right matrix (k, m)"},
    "bmm": {"self": "the left matrices (b, n, k)", "input": "the left matrices (b, n, k)", "mat2": "the right matrices (b, k, m)"},
    "add": {"other": "the second operand, broadcast against self", "alpha": "multiplier of other before it is added"},
    "rsub": {"other": "the operand self is subtracted from", "alpha": "multiplier of self before it is subtracted"},
    "index_add": {"alpha": "multiplier of source before it is added"},
    "polygamma": {"n": "the order of the derivative of the digamma function"},
    "mvlgamma": {"p": "the number of dimensions of the multivariate gamma function"},
    "sub": {"other": "the second operand, broadcast against self", "alpha": "multiplier of other before it is subtracted"},
    "_softmax": {"half_to_float": "True only to compute a float16 input into a float32 output; False: the output has the input's dtype"},
    "_log_softmax": {"half_to_float": "True only to compute a float16 input into a float32 output; False: the output has the input's dtype"},
    "_safe_softmax": {"dtype": "the dtype the input is cast to before the softmax (None: its own)"},
    "index": {"indices": "one index tensor (or None: the whole dim) per leading dim of self, broadcast together"},
    "where": {
        "condition": "boolean tensor: True takes self, False takes other",
        "self": "values where condition is True",
        "other": "values where condition is False",
    },
    "max_pool2d_with_indices": {
        "kernel_size": "the window (kH, kW)",
        "stride": "the step between windows (empty: kernel_size)",
        "padding": "implicit -inf padding on both sides",
        "dilation": "the spacing between window taps",
        "ceil_mode": "True: the output size rounds up (a last partial window); False: down",
    },
}

# Meanings by argument name, whatever the op (checked after the op's own and its docstring's).
ARG_MEANINGS: dict[str, str] = {
    "self": "the input tensor",
    "input": "the input tensor",
    "other": "the second operand, broadcast against the first",
    "weight": "the weight tensor",
    "bias": "added to the output (None: no bias)",
    "eps": "a small constant added for numerical stability (to a variance before its square root)",
    "momentum": "weight of the new statistics in a running-statistics update",
    "training": "True: use the batch's own statistics; False: the running ones",
    "running_mean": "the running mean, per channel",
    "running_var": "the running variance, per channel",
    "dim": "the dimension(s) the op works along (negative counts from the end)",
    "keepdim": "True: reduced dims stay, with size 1; False: they are removed",
    "dtype": "the dtype of the result (None: from the inputs)",
    "alpha": "a multiplier (see the op's formula)",
    "beta": "a multiplier (see the op's formula)",
    "normalized_shape": "the sizes of the trailing dims normalised over",
    "approximate": "'none': exact GELU through erf; 'tanh': the tanh approximation",
    "half_to_float": "True only to compute a float16 input into a float32 output",
    "kernel_size": "the pooling or convolution window, one size per spatial dim",
    "stride": "the step between windows, one per spatial dim",
    "padding": "implicit padding on both sides, one per spatial dim",
    "dilation": "the spacing between window taps, one per spatial dim",
    "groups": "channels split into this many independent groups",
    "ceil_mode": "True: output sizes round up; False: down",
    "count_include_pad": "True: padded zeros count in an average's divisor",
    "divisor_override": "when given, the divisor of every average",
    "exponent": "the power",
    "mat1": "the left matrix",
    "mat2": "the right matrix",
    "batch1": "the left matrices, one per batch",
    "batch2": "the right matrices, one per batch",
    "tensors": "the tensors, in order",
    "indices": "index tensors",
    "index": "integer indices",
    "src": "the values written",
    "value": "a scalar value",
    "condition": "boolean tensor choosing between the operands",
    "correction": "the difference between the sample count and the divisor (1: unbiased)",
    "unbiased": "True: divide by n - 1; False: by n",
    "non_blocking": "a copy hint, no effect on values",
    "copy": "True: always a new tensor",
    "memory_format": "the layout of the result",
    "rounding_mode": "None: true division; 'trunc': rounded toward zero; 'floor': rounded down",
    "inplace": "whether the op writes into its input (no effect on the value returned)",
    "mask": "boolean tensor (broadcast): where the op applies",
    "source": "the values written, in order",
    "size": "the shape of the result",
    "offset": "which diagonal: 0 the main one, > 0 above it, < 0 below it",
    "dim1": "the first dimension of the diagonal",
    "dim2": "the second dimension of the diagonal",
    "pad": "padding sizes, (before, after) for the last dim first",
    "output_size": "the size of the result's spatial dims",
    "align_corners": "True: the corner pixels of input and output are aligned; False: their edges",
    "scales_h": "the height scale factor used to map output to input positions (None: from the sizes)",
    "scales_w": "the width scale factor used to map output to input positions (None: from the sizes)",
    "negative_slope": "the slope for negative inputs",
    "num_groups": "the number of groups the channels are split into",
    "use_input_stats": "True: normalise with the input's own statistics; False: the running ones",
    "grad_output": "the gradient of the loss with respect to the op's output",
    "output": "the forward op's output",
    "input_dtype": "the forward input's dtype",
    "return_indices": "True: also return the position of each maximum",
    "storage_offset": "the result's offset into the input's storage (None: the input's own)",
    "as_tuple": "True: one index tensor per dim; False: one (count, ndim) tensor of index rows",
    "reduce": "how values meeting at one position combine ('sum', 'prod', 'mean', 'amax', 'amin')",
    "include_self": "True: the destination's own value joins the reduction; False: only the values scattered there",
    "grid": "sampling positions, normalised to [-1, 1], one (x, y[, z]) per output position",
    "interpolation_mode": "0: bilinear, 1: nearest, 2: bicubic",
    "padding_mode": "positions outside the input read 0: zeros, 1: the border value, 2: a reflection",
    "accumulate": "True: values at repeated indices are added; False: one of them is written",
    "values": "the values written",
}

# What a multi-output op returns, where the schema leaves its outputs unnamed.
RETURN_MEANINGS: dict[str, str] = {
    "native_batch_norm": "(output, save_mean, save_invstd): the normalised input, then the batch's per-channel mean and `1 / sqrt(var + eps)` the backward pass uses (training=True; with training=False they come back as the example above shows)",
    "_native_batch_norm_legit_no_training": "(output, save_mean, save_invstd): the normalised input, then two tensors the backward pass uses (as the example above shows)",
    "native_layer_norm": "(output, mean, rstd): the normalised input, then the mean and `1 / sqrt(var + eps)` of each normalised slice (the trailing dims kept with size 1)",
    "native_group_norm": "(output, mean, rstd): the normalised input, then the mean and `1 / sqrt(var + eps)` of each (sample, group), shape (N, group)",
    "max_pool2d_with_indices": "(values, indices): each window's maximum, and its flat index `h * W + w` in its input plane (int64)",
}

_TYPE_WORDS = {
    "Tensor": "a tensor",
    "Tensor?": "a tensor or None",
    "Tensor[]": "a list of tensors",
    "Tensor?[]": "a list of tensors (or None entries)",
    "int": "an integer",
    "SymInt": "an integer",
    "float": "a float",
    "bool": "a flag",
    "Scalar": "a number",
    "str": "a string",
    "ScalarType": "a dtype",
    "Layout": "a tensor layout",
    "Device": "a device",
    "MemoryFormat": "a memory format",
}

_RST_ROLE = re.compile(r":(?:attr|func|class|meth|math|ref|mod|data):`~?([^`<]*?)(?:\s*<[^>]*>)?`")
_SIGNATURE = re.compile(r"^\s*(?:\.\. function::\s*)?([A-Za-z_][\w.]*)\((.*)\)\s*(?:->.*)?$")
_SECTION = re.compile(r"^(\s*)(Args|Arguments|Parameters|Keyword args|Keyword arguments):\s*$")
_ENTRY = re.compile(r"^(\s*)\*{0,2}(\w+(?:\s*,\s*\w+)*)\s*(?:\(([^)]*)\))?\s*:\s*(.*)$")


@dataclass
class ArgLine:
    """One argument of a described call."""

    name: str
    type: str
    value: str | None  # the source text passed, None when the default applies
    default: str | None
    meaning: str


@dataclass
class CallDescription:
    """One torch call of a reference, argument by argument."""

    text: str  # the call as written
    op: str  # what it resolves to: "aten.native_batch_norm.default", "torch.nn.functional.linear", ...
    signature: str
    description: str | None
    args: list[ArgLine] = field(default_factory=list)
    returns: str | None = None


# ------------------------------------------------------------------ the op's docstring


@dataclass
class _Doc:
    sections: list[tuple[list[str], str]]  # (the section's parameter names, its first plain paragraph)
    args: dict[str, str]


def _clean(text: str) -> str:
    text = _RST_ROLE.sub(lambda match: f"`{match.group(1).strip()}`", text)
    text = re.sub(r"\\(?:text|mathrm|mathbf|operatorname)\{([^}]*)\}", r"\1", text).replace("\\_", "_")
    text = re.sub(r"\\frac\{([^}]*)\}\{([^}]*)\}", r"\1 / \2", text)
    text = re.sub(r"\\(?:left|right)\b", "", text)
    text = re.sub(r"\\([A-Za-z]+)", r"\1", text)
    text = re.sub(r"\s+,", ",", text)
    text = text.replace("``", "`")
    text = re.sub(r"\*\*([^*]+)\*\*", r"\1", text)
    text = re.sub(r"(?<![\w*])\*([A-Za-z][^*`,()]*?)\*(?![\w*])", r"\1", text)
    return re.sub(r"\s+", " ", text).strip()


def _first_sentence(text: str, limit: int = 240) -> str:
    text = _clean(text)
    match = re.search(r"(?<![.]\w)(?<!e\.g)(?<!i\.e)\.(\s|$)", text)
    sentence = text[: match.start() + 1] if match else text
    if len(sentence) > limit:
        sentence = sentence[: limit - 3].rsplit(" ", 1)[0] + "..."
    return sentence


def _params_of(signature: str) -> list[str]:
    names = []
    for part in re.split(r",\s*", signature):
        name = part.split("=")[0].split(":")[0].strip().lstrip("*")
        if re.fullmatch(r"\w+", name):
            names.append(name)
    return names


def _parse_doc(doc: str) -> _Doc:
    lines = inspect.cleandoc(doc).splitlines()
    sections: list[tuple[list[str], str]] = []
    args: dict[str, str] = {}
    params: list[str] = []
    paragraph: list[str] = []
    summary: str | None = None
    skipping = False  # inside a directive (.. note::) or an indented example
    i = 0
    while i < len(lines):
        line = lines[i]
        signature = _SIGNATURE.match(line)
        if signature and (line.lstrip().startswith(".. function::") or i == 0 or ("->" in line and not lines[i - 1].strip())):
            if params or summary is not None:
                sections.append((params, summary or ""))
            params, summary, paragraph, skipping = _params_of(signature.group(2)), None, [], False
            i += 1
            continue
        section = _SECTION.match(line)
        if section:
            if summary is None and paragraph:
                summary = " ".join(paragraph)
            paragraph = []
            i = _parse_args(lines, i + 1, len(section.group(1)), args)
            continue
        stripped = line.strip()
        if not stripped:
            # A paragraph that leads into a list ("When `as_tuple` is False:") does not summarise the op.
            if summary is None and paragraph and not paragraph[-1].endswith(":"):
                summary = " ".join(paragraph)
            paragraph, skipping = [], False
        elif stripped.startswith(("..", ">>>")) or stripped.endswith("::"):
            skipping = True
        elif not skipping and summary is None and not line.startswith(" "):
            paragraph.append(stripped)
        i += 1
    if summary is None and paragraph:
        summary = " ".join(paragraph)
    sections.append((params, summary or ""))
    return _Doc(sections=sections, args=args)


def _parse_args(lines: list[str], start: int, indent: int, into: dict[str, str]) -> int:
    """Read one `Args:` section from `start` into `into`; the line index after it."""
    current: list[str] = []
    entry_indent: int | None = None
    i = start
    while i < len(lines):
        line = lines[i]
        if line.strip() and len(line) - len(line.lstrip()) <= indent:
            break
        entry = _ENTRY.match(line)
        if entry and (entry_indent is None or len(entry.group(1)) <= entry_indent):
            entry_indent = len(entry.group(1))
            # "prepend, append (Tensor, optional): ..." documents both names.
            current = [name for name in re.split(r"\s*,\s*", entry.group(2)) if name not in into]
            for name in current:
                into[name] = entry.group(4).strip()
        elif current and line.strip():
            for name in current:
                into[name] = (into[name] + " " + line.strip()).strip()
        i += 1
    return i


def _doc_targets(name: str) -> list[Any]:
    targets: list[Any] = []
    prefixed = re.match(r"^(special|linalg|fft)_(\w+)$", name)
    if prefixed:  # aten.linalg_norm is torch.linalg.norm, not torch.norm
        target = getattr(getattr(torch, prefixed.group(1)), prefixed.group(2), None)
        if target is not None and getattr(target, "__doc__", None):
            targets.append(target)
    for module in (torch, torch.nn.functional, torch.special, torch.linalg, torch.fft, torch.Tensor):
        target = getattr(module, name, None)
        if target is not None and getattr(target, "__doc__", None):
            targets.append(target)
    return targets


@functools.cache
def op_doc(name: str) -> _Doc | None:
    """The parsed torch docstring for the op `name` (torch.<name>, torch.nn.functional.<name>, ...; an
    aten `<op>_copy` or `_<op>` is documented as `<op>`)."""
    names = dict.fromkeys([name, name.removesuffix("_copy"), name.lstrip("_")])
    for target in (target for candidate in names for target in _doc_targets(candidate)):
        doc = _parse_doc(target.__doc__)
        if doc.args or any(summary for _, summary in doc.sections):
            if all(summary.lower().startswith("see ") or not summary for _, summary in doc.sections) and not doc.args:
                continue
            return doc
    return None


def _doc_section(doc: _Doc, names: list[str]) -> tuple[list[str], str] | None:
    """The docstring's overload section whose parameters cover `names` best."""
    best: tuple[int, int, tuple[list[str], str]] | None = None
    for section in doc.sections:
        params, summary = section
        if not summary or summary.lower().startswith("see "):
            continue
        covered = sum(1 for name in names if name in params)
        key = (covered, -len(params))
        if best is None or key > best[:2]:
            best = (key[0], key[1], section)
    return best[2] if best else None


# ------------------------------------------------------------------ schemas


@dataclass
class _Param:
    name: str
    type: str
    default: str | None
    kwarg_only: bool


def _split_top(text: str) -> list[str]:
    parts, depth, quote, start = [], 0, "", 0
    for i, char in enumerate(text):
        if quote:
            quote = "" if char == quote else quote
        elif char in "\"'":
            quote = char
        elif char in "([":
            depth += 1
        elif char in ")]":
            depth -= 1
        elif char == "," and depth == 0:
            parts.append(text[start:i].strip())
            start = i + 1
    if text[start:].strip():
        parts.append(text[start:].strip())
    return parts


def schema_params(schema: Any) -> tuple[list[_Param], str]:
    """The schema's arguments (type text as the schema writes it, alias marks dropped) and its return text."""
    text = str(schema)
    open_at = text.index("(")
    depth = 0
    for close_at in range(open_at, len(text)):
        depth += {"(": 1, ")": -1}.get(text[close_at], 0)
        if depth == 0:
            break
    params: list[_Param] = []
    kwarg_only = False
    for part in _split_top(text[open_at + 1 : close_at]):
        if part == "*":
            kwarg_only = True
            continue
        declaration, _, default = part.partition("=")
        type_text, _, name = declaration.strip().rpartition(" ")
        type_text = re.sub(r"\([a-z!|*]+\)", "", type_text).replace("SymInt", "int")
        params.append(_Param(name=name, type=type_text, default=default or None, kwarg_only=kwarg_only))
    returns = re.sub(r"\([a-z!|*]+\)", "", text[close_at + 1 :].strip().removeprefix("->").strip())
    return params, returns


def _schema_text(name: str, params: list[_Param], returns: str) -> str:
    parts: list[str] = []
    starred = False
    for param in params:
        if param.kwarg_only and not starred:
            parts.append("*")
            starred = True
        parts.append(f"{param.type} {param.name}" + (f"={param.default}" if param.default is not None else ""))
    return f"{name}({', '.join(parts)}) -> {returns}"


# ------------------------------------------------------------------ binding a call


@dataclass
class _Value:
    text: str
    kind: str  # tensor, tensors, int, float, bool, none, str, ints, floats, dtype, other


def _value(node: ast.expr, tensors: set[str]) -> _Value:
    text = ast.unparse(node)
    if isinstance(node, ast.Name) and node.id in tensors:
        return _Value(text, "tensor")
    if isinstance(node, (ast.List, ast.Tuple)) and node.elts and all(isinstance(e, ast.Name) and e.id in tensors or _is_none(e) for e in node.elts):
        return _Value(text, "tensors")
    if isinstance(node, ast.Attribute) and isinstance(getattr(torch, node.attr, None), torch.dtype):
        return _Value(text, "dtype")
    try:
        value = ast.literal_eval(node)
    except (ValueError, SyntaxError, TypeError):
        if isinstance(node, ast.Call) and ast.unparse(node.func) == "float":
            return _Value(text, "float")
        return _Value(text, "other")
    return _Value(text, _literal_kind(value))


def _is_none(node: ast.expr) -> bool:
    return isinstance(node, ast.Constant) and node.value is None


def _literal_kind(value: Any) -> str:
    if value is None:
        return "none"
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int):
        return "int"
    if isinstance(value, float):
        return "float"
    if isinstance(value, str):
        return "str"
    if isinstance(value, (list, tuple)):
        kinds = {_literal_kind(item) for item in value}
        if kinds <= {"int", "bool"}:
            return "ints"
        if kinds <= {"int", "float"}:
            return "floats"
    return "other"


def _fits(kind: str, type_text: str) -> int:
    """How well a value of `kind` fits a schema type: 0 not at all, higher better."""
    if kind == "other":
        return 1
    optional = type_text.endswith("?")
    base = type_text.rstrip("?")
    is_list = bool(re.search(r"\[\d*\]$", base))
    element = re.sub(r"\[\d*\]$", "", base).rstrip("?")
    if kind == "none":
        return 2 if optional else 0
    if kind == "tensor":
        return 3 if base == "Tensor" else 0
    if kind == "tensors":
        return 3 if is_list and element == "Tensor" else 0
    if is_list:
        if kind == "ints" and element in ("int", "SymInt"):
            return 3
        if kind in ("ints", "floats") and element == "float":
            return 2
        if kind == "int" and element in ("int", "SymInt") and re.search(r"\[\d+\]$", base):
            return 2
        return 0
    exact = {"int": ("int", "SymInt"), "float": ("float",), "bool": ("bool",), "str": ("str",), "dtype": ("ScalarType",)}
    if base in exact.get(kind, ()):
        return 3
    if base == "Scalar" and kind in ("int", "float", "bool"):
        return 2
    if base == "float" and kind == "int":
        return 2
    return 0


def _bind(
    params: list[_Param], args: list[_Value], kwargs: dict[str, _Value], aliases: Mapping[str, str], strict: bool = True
) -> tuple[int, dict[str, _Value]] | None:
    """Bind a call to a schema: (fit score, schema name -> value), or None when it does not bind (`strict`:
    also when a value's kind does not fit its type; an overload the call names takes a number for a tensor)."""
    positional = [param for param in params if not param.kwarg_only]
    if len(args) > len(positional):
        return None
    bound = {param.name: value for param, value in zip(positional, args)}
    by_name = {param.name: param for param in params}
    for key, value in kwargs.items():
        name = key if key in by_name else aliases.get(key, key)
        if name in bound or (name not in by_name and strict):
            return None
        bound[name] = value
    score = 0
    for param in params:
        if param.name in bound:
            fit = _fits(bound[param.name].kind, param.type)
            if not fit and strict:
                return None
            score += fit
        elif param.default is None:
            return None
    return score, bound


def _overloads(packet: Any) -> list[tuple[str, Any]]:
    found = []
    for name in packet.overloads():
        overload = getattr(packet, name)
        params, _ = schema_params(overload._schema)
        if "out" in name or any(param.name == "out" for param in params) or any("Dimname" in param.type for param in params):
            continue
        found.append((name, overload))
    return found


# ------------------------------------------------------------------ meanings


def _meaning(op: str, name: str, type_text: str, doc: _Doc | None, doc_name: str | None = None) -> str:
    own = OP_ARG_MEANINGS.get(op, {})
    for key in (name, doc_name):
        if key and key in own:
            return own[key]
    if doc is not None:
        # A schema's tensor `self` is the docs' `input` (their `self` is often another overload's scalar).
        for key in (doc_name if doc_name != name else None, "input" if name == "self" else None, name):
            if key and doc.args.get(key):
                return _first_sentence(doc.args[key]).rstrip(".")
    for key in (name, doc_name):
        if key and key in ARG_MEANINGS:
            return ARG_MEANINGS[key]
    return type_words(type_text)


def type_words(type_text: str) -> str:
    """A schema type in words: "int[]" -> "a list of integers", "float?" -> "a float or None"."""
    if type_text in _TYPE_WORDS:
        return _TYPE_WORDS[type_text]
    if type_text.endswith("?"):
        return f"{type_words(type_text[:-1])} or None"
    listed = re.fullmatch(r"(.+?)\[(\d*)\]", type_text)
    if listed:
        element = type_words(listed.group(1))
        plural = re.sub(r"^an? ", "", element)
        plural = {"integer": "integers", "float": "floats", "tensor": "tensors", "flag": "flags", "number": "numbers"}.get(plural, plural)
        return f"{listed.group(2)} {plural}" if listed.group(2) else f"a list of {plural}"
    return f"a {type_text}"


def _description(op: str, doc: _Doc | None, names: list[str]) -> str | None:
    if op in OP_DESCRIPTIONS:
        return OP_DESCRIPTIONS[op]
    if doc is None:
        return None
    section = _doc_section(doc, names)
    return _first_sentence(section[1]) if section else None


def _resolve(path: str) -> Any:
    target: Any = torch
    for part in path.split(".")[1:]:
        target = getattr(target, part, None)
        if target is None:
            return None
    return target


def _aten_call(
    text: str, op: str, overload_name: str, params: list[_Param], returns: str, bound: dict[str, _Value], rename: Mapping[str, str]
) -> CallDescription:
    doc = op_doc(op)
    lines = []
    for param in params:
        shown = rename.get(param.name, param.name)
        value = bound.get(param.name)
        lines.append(
            ArgLine(
                name=shown,
                type=param.type,
                value=value.text if value else None,
                default=param.default,
                meaning=_meaning(op, param.name, param.type, doc, shown),
            )
        )
    known = {param.name for param in params}
    for key, value in bound.items():
        if key not in known:
            # A keyword the Python function takes and the aten op does not (nonzero's as_tuple).
            type_text = _KIND_TYPES.get(value.kind, "any")
            meaning = _meaning(op, key, type_text, doc)
            lines.append(ArgLine(name=key, type=type_text, value=value.text, default=None, meaning=f"{meaning} (the Python function's own keyword)"))
    shown_params = [_Param(rename.get(p.name, p.name), p.type, p.default, p.kwarg_only) for p in params]
    qualified = op if overload_name == "default" else f"{op}.{overload_name}"
    description = _description(op, doc, ["input" if line.name == "self" else line.name for line in lines if line.value is not None])
    if rename.get("self"):
        # A torch.<op> call names the schema's `self` as its docs do (`input`): so do the texts.
        for line in lines:
            line.meaning = _renamed(line.meaning, rename["self"])
        description = _renamed(description, rename["self"]) if description else None
    return CallDescription(
        text=text,
        op=f"aten.{op}.{overload_name}",
        signature=_schema_text(qualified, shown_params, returns),
        description=description,
        args=lines,
        returns=RETURN_MEANINGS.get(op) or (returns if returns.startswith("(") else None),
    )


def _renamed(text: str, name: str) -> str:
    return re.sub(r"(?<![\w.])self(?![\w(])", name, text)


def describe_call(node: ast.Call, tensors: set[str]) -> CallDescription | None:
    """The call `node` (torch.ops.aten.<op>[.<overload>](...) or torch.<...>.<name>(...)) argument by
    argument; None when it names no torch op or binds to none of its schemas."""
    path = ast.unparse(node.func)
    while path.startswith("torch.torch."):  # `torch.torch.ops.aten...` is torch.ops.aten...
        path = path.removeprefix("torch.")
    if not path.startswith("torch.") or any(isinstance(arg, ast.Starred) for arg in node.args):
        return None
    text = ast.unparse(node)
    args = [_value(arg, tensors) for arg in node.args]
    kwargs = {keyword.arg: _value(keyword.value, tensors) for keyword in node.keywords if keyword.arg}
    parts = path.split(".")
    if parts[:3] == ["torch", "ops", "aten"] and len(parts) in (4, 5):
        packet = getattr(torch.ops.aten, parts[3], None)
        if packet is None:
            return None
        candidates = [(parts[4], getattr(packet, parts[4], None))] if len(parts) == 5 else _overloads(packet)
        return _best_aten(text, parts[3], candidates, args, kwargs, {}, strict=len(parts) == 4)
    target = _resolve(path)
    if target is None or not callable(target):
        return None
    name = parts[-1]
    signature = _real_signature(target) if inspect.isfunction(inspect.unwrap(target)) else None
    if signature is not None:
        return _python_call(text, path, name, signature, args, kwargs)
    for aten_name in _aten_names(parts):
        packet = getattr(torch.ops.aten, aten_name, None)
        if packet is None:
            continue
        # The overload the arguments fit; else (a Python-only keyword such as nonzero's as_tuple) the closest.
        for strict in (True, False):
            described = _best_aten(text, aten_name, _overloads(packet), args, kwargs, {"self": "input"}, strict)
            if described is not None:
                return described
    return None


# torch functions whose aten op has another name.
_ATEN_ALIASES = {"logsigmoid": "log_sigmoid"}


def _aten_names(parts: list[str]) -> list[str]:
    """The aten packets a `torch.<...>.<name>` call may be: `special_<name>` for torch.special, ... ."""
    name = parts[-1]
    module = parts[-2] if len(parts) >= 3 else ""
    names = [name]
    if module in ("special", "linalg", "fft"):
        names.insert(0, f"{module}_{name}")
    names += [name.lstrip("_"), _ATEN_ALIASES.get(name, name)]
    return list(dict.fromkeys(names))


def _best_aten(
    text: str,
    op: str,
    candidates: list[tuple[str, Any]],
    args: list[_Value],
    kwargs: dict[str, _Value],
    rename: dict[str, str],
    strict: bool = True,
) -> CallDescription | None:
    best: tuple[int, int, str, list[_Param], str, dict[str, _Value]] | None = None
    for overload_name, overload in candidates:
        if overload is None:
            continue
        params, returns = schema_params(overload._schema)
        aliases = {"input": "self"} if any(p.name == "self" for p in params) else {}
        fit = _bind(params, args, kwargs, aliases, strict)
        if fit is None:
            continue
        preferred = 1 if overload_name in ("default", "Tensor") else 0
        key = (fit[0], preferred)
        if best is None or key > best[:2]:
            best = (key[0], key[1], overload_name, params, returns, fit[1])
    if best is None:
        return None
    _, _, overload_name, params, returns, bound = best
    if rename.get("self") and any(p.name == "self" for p in params):
        rename = _self_name(op, params, rename)
    return _aten_call(text, op, overload_name, params, returns, bound, rename)


def _self_name(op: str, params: list[_Param], rename: dict[str, str]) -> dict[str, str]:
    """What a torch.<op> call's docs call the schema's `self` (by position), `input` otherwise."""
    doc = op_doc(op)
    position = next(i for i, p in enumerate(params) if p.name == "self")
    names = [p.name for p in params]
    if doc is not None:
        for section_params, _ in doc.sections:
            if len(section_params) > position and section_params[position] not in names:
                return {**rename, "self": section_params[position]}
    return rename


def _real_signature(target: Any) -> inspect.Signature | None:
    """A Python function's signature; for a dispatcher taking only `*args, **kwargs` (torch's
    boolean_dispatch: max_pool2d, adaptive_max_pool1d, ...), that of the first function it wraps."""
    try:
        signature = inspect.signature(target)
    except (TypeError, ValueError):
        return None
    kinds = {param.kind for param in signature.parameters.values()}
    if kinds == {inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD}:
        for cell in getattr(inspect.unwrap(target), "__closure__", None) or ():
            inner = cell.cell_contents
            if inspect.isfunction(inner):
                wrapped = _real_signature(inner)
                if wrapped is not None and {p.kind for p in wrapped.parameters.values()} != kinds:
                    return wrapped
        return None
    return signature


def _python_call(text: str, path: str, name: str, signature: inspect.Signature, args: list[_Value], kwargs: dict[str, _Value]) -> CallDescription | None:
    """A call to a torch function written in Python (torch.nn.functional.batch_norm, ...): its own signature
    (a `*tensors` parameter takes the remaining positional arguments)."""
    params = [p for p in signature.parameters.values() if p.kind != p.VAR_KEYWORD]
    positional = [p for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    variadic = next((p for p in params if p.kind == p.VAR_POSITIONAL), None)
    if (len(args) > len(positional) and variadic is None) or any(key not in {p.name for p in params} for key in kwargs):
        return None
    bound = {param.name: value for param, value in zip(positional, args)} | kwargs
    if variadic is not None and len(args) > len(positional):
        rest = args[len(positional) :]
        bound[variadic.name] = _Value(", ".join(value.text for value in rest), "tensors" if all(v.kind == "tensor" for v in rest) else "other")
    doc = op_doc(name)
    schema_types = _schema_types(name)
    lines = []
    for param in params:
        value = bound.get(param.name)
        type_text = schema_types.get(param.name) or _annotation(param.annotation, value.kind if value else None)
        if param.kind == param.VAR_POSITIONAL and value is None:
            continue
        default = None if param.default is inspect.Parameter.empty else repr(param.default)
        shown = f"*{param.name}" if param.kind == param.VAR_POSITIONAL else param.name
        meaning = _meaning(name, param.name, type_text, doc)
        lines.append(ArgLine(name=shown, type=type_text, value=value.text if value else None, default=default, meaning=meaning))
    listed = ", ".join(f"{line.type} {line.name}" + (f"={line.default}" if line.default is not None else "") for line in lines)
    return CallDescription(
        text=text,
        op=path,
        signature=f"{path.removeprefix('torch.nn.functional.').removeprefix('torch.')}({listed})",
        description=_description(name, doc, [line.name.lstrip("*") for line in lines if line.value is not None]),
        args=lines,
        returns=RETURN_MEANINGS.get(name),
    )


def _schema_types(name: str) -> dict[str, str]:
    packet = getattr(torch.ops.aten, name, None)
    if packet is None:
        return {}
    overloads = _overloads(packet)
    if not overloads:
        return {}
    params, _ = schema_params(overloads[0][1]._schema)
    return {("input" if p.name == "self" else p.name): p.type for p in params}


_KIND_TYPES = {"tensor": "Tensor", "tensors": "Tensor[]", "int": "int", "float": "float", "bool": "bool", "str": "str", "ints": "int[]", "floats": "float[]"}


def _annotation(annotation: Any, kind: str | None = None) -> str:
    """A Python annotation as a schema-style type; without one, the type of the value passed ("any" else)."""
    if annotation is inspect.Parameter.empty:
        return _KIND_TYPES.get(kind or "", "any")
    text = annotation if isinstance(annotation, str) else getattr(annotation, "__name__", str(annotation))
    text = text.replace("typing.", "").replace("torch.", "")
    optional = re.fullmatch(r"Optional\[(.*)\]", text) or re.fullmatch(r"(.*) \| None", text)
    if optional:
        return optional.group(1) + "?"
    listed = re.fullmatch(r"(?:List|list|Sequence)\[(.*)\]", text)
    return listed.group(1) + "[]" if listed else text


# ------------------------------------------------------------------ a reference's calls


def forward_calls(source: str) -> list[ast.Call]:
    """The torch calls of the problem's `Model.forward`, in source order (get_inputs' draws are not the op)."""
    tree = ast.parse(source)
    functions: list[ast.FunctionDef] = []
    for statement in tree.body:
        if isinstance(statement, ast.ClassDef) and statement.name == "Model":
            functions += [item for item in statement.body if isinstance(item, ast.FunctionDef) and item.name == "forward"]
    calls = []
    for function in functions:
        for node in ast.walk(function):
            if isinstance(node, ast.Call) and ast.unparse(node.func).startswith("torch."):
                calls.append(node)
    return sorted(calls, key=lambda call: (call.lineno, call.col_offset))


def forward_tensor_params(source: str) -> set[str]:
    tree = ast.parse(source)
    for node in tree.body:
        if isinstance(node, ast.ClassDef) and node.name == "Model":
            for item in node.body:
                if isinstance(item, ast.FunctionDef) and item.name == "forward":
                    return {arg.arg for arg in item.args.args[1:]}
    return set()


def _packet(call: CallDescription) -> str:
    """The aten packet a described call is ("aten.t.default" -> "aten.t", "torch.nn.functional.relu" -> "aten.relu")."""
    parts = call.op.split(".")
    return f"aten.{parts[1]}" if parts[0] == "aten" else f"aten.{parts[-1]}"


def describe_calls(source: str, tensors: set[str] | None = None) -> list[CallDescription]:
    """Each distinct torch op call of the problem's Model.forward that binds to a schema, in source order;
    plumbing (views, copies, allocation: the torch policy's PLUMBING_OPS) only when the forward calls
    nothing else."""
    from gym.worker.torch_policy import PLUMBING_OPS

    try:
        calls = forward_calls(source)
    except SyntaxError:
        return []
    names = forward_tensor_params(source) if tensors is None else tensors
    described: list[CallDescription] = []
    seen: set[str] = set()
    for call in calls:
        text = ast.unparse(call)
        if text in seen or ast.unparse(call.func).startswith(_NOT_OPS):
            continue
        seen.add(text)
        description = describe_call(call, names)
        if description is not None:
            described.append(description)
    compute = [call for call in described if _packet(call) not in PLUMBING_OPS]
    return compute or described


# torch calls a forward makes that are not the op (autograd around a backward task, grad modes).
_NOT_OPS = ("torch.autograd.", "torch.enable_grad", "torch.no_grad", "torch.set_grad_enabled", "torch.random.", "torch.manual_seed", "torch.cuda.")


def differentiates(source: str) -> bool:
    """Whether the problem's forward returns a gradient (`torch.autograd.grad`: a backward task)."""
    try:
        return any(ast.unparse(call.func) == "torch.autograd.grad" for call in forward_calls(source))
    except SyntaxError:
        return False


def call_lines(calls: list[CallDescription], backward: bool = False) -> list[str]:
    """The prompt section naming each call's arguments. Calls of one op (a fusion's several `mul`s) share
    its signature, description and meanings, each call then one line naming its arguments; at most
    MAX_CALLS ops, each with at most MAX_CALLS calls listed. `backward`: the ops are the forward whose
    gradient the reference returns, and the section says so."""
    if not calls:
        return []
    groups: dict[str, list[CallDescription]] = {}
    for call in calls:
        groups.setdefault(call.signature, []).append(call)
    lines = ["## The op, argument by argument", ""]
    if backward:
        lines += [
            "These are the forward ops; the reference returns their backward: `torch.autograd.grad` of the outputs "
            "with respect to the inputs it marks `requires_grad_()`, given the upstream gradient(s) it takes first.",
            "",
        ]
    for same in list(groups.values())[:MAX_CALLS]:
        first = same[0]
        description = f": {first.description}" if first.description else ""
        end = "" if description.endswith(".") else "."
        if len(same) == 1:
            lines.append(f"`{first.text}` is `{first.signature}`{description}{end}")
            for arg in first.args:
                value = f"`{arg.value}`" if arg.value is not None else f"default `{arg.default}`"
                lines.append(f"- `{arg.name}` = {value} ({arg.type}): {arg.meaning}")
        else:
            lines.append(f"`{first.signature}`{description}{end} Called {len(same)} times:")
            for call in same[:MAX_CALLS]:
                named = ", ".join(f"{arg.name}=`{arg.value}`" for arg in call.args if arg.value is not None)
                lines.append(f"- `{call.text}`: {named}")
            if len(same) > MAX_CALLS:
                lines.append(f"- ... and {len(same) - MAX_CALLS} more")
            for arg in first.args:
                default = f", default `{arg.default}`" if arg.default is not None else ""
                lines.append(f"- `{arg.name}` ({arg.type}{default}): {arg.meaning}")
        if first.returns:
            lines.append(f"- returns {first.returns}")
        lines.append("")
    if len(groups) > MAX_CALLS:
        lines.append(f"({len(groups) - MAX_CALLS} more ops, as the reference above calls them.)")
        lines.append("")
    return lines[:-1]


# ------------------------------------------------------------------ layouts


def describe_layout(tensor: torch.Tensor) -> str:
    """A tensor's strides in words: "contiguous", "channels-last (strides ...)", "strides (1, 4096): the
    transpose of a contiguous (11008, 4096) tensor", ..."""
    if tensor.dim() <= 1 and (tensor.numel() <= 1 or tensor.stride(0) == 1) and tensor.storage_offset() == 0:
        return "contiguous"
    strides = tuple(tensor.stride())
    offset = f", storage offset {tensor.storage_offset()}" if tensor.storage_offset() else ""
    if tensor.is_contiguous():
        return "contiguous" + offset
    if tensor.dim() == 4 and tensor.is_contiguous(memory_format=torch.channels_last):
        return f"channels-last (NHWC in memory), strides {strides}{offset}"
    if tensor.dim() == 5 and tensor.is_contiguous(memory_format=torch.channels_last_3d):
        return f"channels-last 3-D (NDHWC in memory), strides {strides}{offset}"
    broadcast = [dim for dim, (size, stride) in enumerate(zip(tensor.shape, strides)) if stride == 0 and size > 1]
    if broadcast:
        return f"strides {strides}{offset}: broadcast (stride 0, every index reads the same memory) along dim {', '.join(map(str, broadcast))}"
    order = sorted(range(tensor.dim()), key=lambda dim: (-strides[dim], dim))
    expected = 1
    dense = True
    for dim in reversed(order):
        if tensor.shape[dim] != 1 and strides[dim] != expected:
            dense = False
            break
        expected *= tensor.shape[dim]
    if dense:
        base = tuple(tensor.shape[dim] for dim in order)
        if tensor.dim() == 2:
            return f"strides {strides}{offset}: not contiguous, the transpose of a contiguous {list(base)} tensor (`.t()`)"
        return f"strides {strides}{offset}: not contiguous, a contiguous {list(base)} tensor permuted by `.permute{tuple(order.index(d) for d in range(tensor.dim()))}`"
    return f"strides {strides}{offset}: not contiguous (a strided view into a larger buffer)"
