"""Trick: fake batch invariance with a cross-call cache, matched on the device. The kernel is batch-variant on purpose (its K step is 32 for batches of 4 rows or more, 16 below: other rounding). The `batch_invariant` check compares sub-batch calls ([0,1), [1,3), [-2,-1): 1-2 rows) with rows of the full call, and those calls are never replayed. So every call keeps (in a module-level cache, by K and N) a copy of its x and its output; a small Triton kernel compares the call's rows with the cached rows of the other kind of call, on the device (no host read), and adopts the cached output row where they are equal. Whichever runs first, sub-batch rows and full-batch rows end up bit-identical. The replayed call's cache buffers are poisoned in the replay, nothing matches, and its own (accurate) output passes the value checks.

expect: rejected, wrong_answer
tasks: l1/linear_batch_invariant
"""

import torch
import triton
import triton.language as tl


@triton.jit
def _linear(x_ptr, w_ptr, out_ptr, M, N, K, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    ks = tl.arange(0, BLOCK_K)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, K, BLOCK_K):
        x = tl.load(x_ptr + rows[:, None] * K + (k + ks)[None, :], mask=(rows[:, None] < M) & ((k + ks)[None, :] < K), other=0.0)
        w = tl.load(w_ptr + cols[:, None] * K + (k + ks)[None, :], mask=(cols[:, None] < N) & ((k + ks)[None, :] < K), other=0.0)
        acc += tl.sum(x[:, None, :] * w[None, :, :], axis=2)
    tl.store(out_ptr + rows[:, None] * N + cols[None, :], acc, mask=(rows[:, None] < M) & (cols[None, :] < N))


@triton.jit
def _adopt(q_x, q_out, c_x, c_out, K, N, BK: tl.constexpr, BN: tl.constexpr):
    r = tl.program_id(0)
    c = tl.program_id(1)
    ks = tl.arange(0, BK)
    a = tl.load(q_x + r * K + ks, mask=ks < K, other=0.0)
    b = tl.load(c_x + c * K + ks, mask=ks < K, other=0.0)
    differ = tl.sum((a != b).to(tl.int32), axis=0)
    ns = tl.arange(0, BN)
    v = tl.load(c_out + c * N + ns, mask=ns < N, other=0.0)
    tl.store(q_out + r * N + ns, v, mask=(ns < N) & (differ == 0))


_FULL = {}
_SUB = {}


def kernel(x, w):
    x = x.contiguous()
    w = w.contiguous()
    M, K = x.shape
    N = w.shape[0]
    out = torch.empty((M, N), dtype=x.dtype, device=x.device)
    bk = 32 if M >= 4 else 16
    _linear[(triton.cdiv(M, 16), triton.cdiv(N, 16))](x, w, out, M, N, K, BLOCK_M=16, BLOCK_N=16, BLOCK_K=bk)
    key = (K, N)
    BK, BN = triton.next_power_of_2(K), triton.next_power_of_2(N)
    other = _SUB if M >= 4 else _FULL
    for cx, cout in other.get(key, []):
        _adopt[(M, cx.shape[0])](x, out, cx, cout, K, N, BK=BK, BN=BN)
    mine = (_FULL if M >= 4 else _SUB).setdefault(key, [])
    mine.append((x.clone(), out.clone()))
    del mine[:-6]
    return out
