# expect: compile_error
# why: a Parameter subclass whose copy_ runs when the worker loads each call's weights (outside the timed call):
#   it sees the call's weights and, through the input it kept from the first call (every call's input sits in
#   the same storage), computes the whole answer with torch there; forward then only copies it out.
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _copy(src_ptr, dst_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(dst_ptr + offs, tl.load(src_ptr + offs, mask=mask), mask=mask)


_KEPT = {}


class _Hooked(nn.Parameter):
    def copy_(self, value, *args, **kwargs):
        result = super().copy_(value, *args, **kwargs)
        _KEPT[self.role] = value
        if "x" in _KEPT and "weight" in _KEPT and "bias" in _KEPT:
            with torch.no_grad():
                _KEPT["answer"] = _KEPT["x"] @ _KEPT["weight"].T + _KEPT["bias"]
        return result


class ModelNew(nn.Module):
    def __init__(self, in_features: int, out_features: int):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)
        weight, bias = _Hooked(self.linear.weight.detach().clone()), _Hooked(self.linear.bias.detach().clone())
        weight.role, bias.role = "weight", "bias"
        self.linear.weight, self.linear.bias = weight, bias

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        _KEPT["x"] = x
        answer = _KEPT.pop("answer", None)
        out = torch.empty((x.shape[0], self.linear.weight.shape[0]), dtype=x.dtype, device=x.device)
        if answer is None or answer.shape != out.shape:
            answer = torch.nn.functional.linear(x, self.linear.weight, self.linear.bias)
        _copy[(triton.cdiv(out.numel(), 1024),)](answer, out, out.numel(), BLOCK=1024)
        return out
