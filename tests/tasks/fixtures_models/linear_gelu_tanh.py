"""GPT-2's MLP up-projection: the matmul stays in torch (the task's anchor), the bias and the tanh
GELU (GPT-2 writes it out: 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))) run as one epilogue kernel.

Task: models/l2/gpt2/linear_gelu_tanh_<n>
"""

import torch
import triton
import triton.language as tl

MODE = "honest"


@triton.jit
def _round(x, HALF: tl.constexpr):
    if HALF:
        x = x.to(tl.float16).to(tl.float32)
    return x


@triton.jit
def _bias_gelu_tanh(acc, bias, out, N, BLOCK_N: tl.constexpr, HALF: tl.constexpr, ZERO: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    mask = cols < N
    x = _round(tl.load(acc + row * N + cols, mask=mask, other=0.0) + tl.load(bias + cols, mask=mask, other=0.0), HALF)
    inner = _round(0.7978845608028654 * _round(x + _round(0.044715 * _round(x * x * x, HALF), HALF), HALF), HALF)
    # 0.5 x (1 + tanh(z)) = x sigmoid(2 z)
    y = _round(x * _round(tl.sigmoid(2.0 * inner), HALF), HALF)
    if ZERO:
        y = y * 0.0
    tl.store(out + row * N + cols, y, mask=mask)


def kernel(c_fc_bias, y, c_fc_weight):
    k, n = c_fc_weight.shape
    acc = torch.mm(y.view(-1, k), c_fc_weight)
    m = acc.shape[0]
    if MODE == "passthrough":
        return acc.view(1, m, n)
    out = torch.empty((1, m, n), dtype=acc.dtype, device=acc.device)
    rows = m // 2 if MODE == "partial" else m
    _bias_gelu_tanh[(rows, triton.cdiv(n, 64))](acc, c_fc_bias, out, n, BLOCK_N=64, HALF=MODE == "fp16", ZERO=MODE == "zeros")
    return out
