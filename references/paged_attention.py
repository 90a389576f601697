"""Grouped-query attention decode (one new token per sequence) against a paged KV cache."""

from __future__ import annotations

from typing import Any

import torch


def _paged_decode(
    q: torch.Tensor, k_cache: torch.Tensor, v_cache: torch.Tensor, block_table: torch.Tensor, seq_lens: torch.Tensor, compute: torch.dtype
) -> torch.Tensor:
    batch, q_heads, head_dim = q.shape
    block_size, kv_heads = k_cache.shape[1], k_cache.shape[2]
    group = q_heads // kv_heads
    out = torch.empty(batch, q_heads, head_dim, dtype=compute, device=q.device)
    for b in range(batch):
        n = int(seq_lens[b])
        # Gather the sequence's blocks in table order, then keep its first n positions.
        blocks = block_table[b, : (n + block_size - 1) // block_size].long()
        k = k_cache[blocks].reshape(-1, kv_heads, head_dim)[:n].to(compute)  # [n, Hkv, D]
        v = v_cache[blocks].reshape(-1, kv_heads, head_dim)[:n].to(compute)
        # Query head h reads KV head h // group.
        k = k.repeat_interleave(group, dim=1)  # [n, Hq, D]
        v = v.repeat_interleave(group, dim=1)
        scores = torch.einsum("hd,nhd->hn", q[b].to(compute), k) * head_dim**-0.5
        out[b] = torch.einsum("hn,nhd->hd", torch.softmax(scores, dim=-1), v)
    return out


def paged_attention_decode(q: torch.Tensor, k_cache: torch.Tensor, v_cache: torch.Tensor, block_table: torch.Tensor, seq_lens: torch.Tensor) -> torch.Tensor:
    # Computed in float32 whatever the input dtype (as serving kernels do); the result is cast back.
    return _paged_decode(q, k_cache, v_cache, block_table, seq_lens, torch.float32).to(q.dtype)


def paged_attention_decode_oracle(
    q: torch.Tensor, k_cache: torch.Tensor, v_cache: torch.Tensor, block_table: torch.Tensor, seq_lens: torch.Tensor
) -> torch.Tensor:
    """The same gather and attention in float64, as float64."""
    return _paged_decode(q, k_cache, v_cache, block_table, seq_lens, torch.float64)


def make_inputs(shape: dict[str, int], dtype: torch.dtype, generator: torch.Generator, device: torch.device) -> dict[str, Any]:
    batch, kv_heads, group, head_dim = shape["B"], shape["HKV"], shape["G"], shape["D"]
    block_size, max_len = shape["BS"], shape["L"]
    q_heads = kv_heads * group

    def rand(*size: int) -> torch.Tensor:
        return torch.rand(*size, generator=generator, device=device, dtype=torch.float32)

    def randn(*size: int) -> torch.Tensor:
        return torch.randn(*size, generator=generator, device=device, dtype=torch.float32)

    # Ragged lengths in [1, L]: the first sequence is L long, the second is never a
    # multiple of the block size, the rest are uniform.
    seq_lens = 1 + (rand(batch) * max_len).to(torch.int64).clamp(max=max_len - 1)
    seq_lens[0] = max_len
    if batch > 1 and int(seq_lens[1]) % block_size == 0:
        seq_lens[1] = seq_lens[1] - 1 if int(seq_lens[1]) > 1 else 1
    blocks_needed = (seq_lens + block_size - 1) // block_size
    max_blocks = (max_len + block_size - 1) // block_size + 1
    # Physical blocks handed out in a shuffled order, with a few spare blocks nobody owns.
    num_blocks = int(blocks_needed.sum()) + 3
    physical = torch.randperm(num_blocks, generator=generator, device=device)
    # Unused table slots hold valid block ids of other sequences (stale entries): a kernel
    # that reads past a sequence's length reads someone else's keys.
    block_table = torch.randint(0, num_blocks, (batch, max_blocks), generator=generator, device=device)
    start = 0
    for b in range(batch):
        count = int(blocks_needed[b])
        block_table[b, :count] = physical[start : start + count]
        start += count

    q = randn(batch, q_heads, head_dim) * (0.5 + 2.5 * rand(batch, q_heads, 1))
    k_cache = randn(num_blocks, block_size, kv_heads, head_dim)
    v_cache = randn(num_blocks, block_size, kv_heads, head_dim)
    # Every key of the even KV heads carries the same large component along coordinate 0
    # and every query of their groups a large coefficient on it: all scores of such a
    # head get a common offset of 40..140 either way, so exp() without the running max
    # overflows (or underflows to 0/0).
    shifted = (torch.arange(kv_heads, device=device) % 2 == 0).repeat_interleave(group).to(torch.float32)  # [Hq]
    offset = (40.0 + 100.0 * rand(batch, q_heads)) * torch.where(rand(batch, q_heads) < 0.5, -1.0, 1.0) * shifted
    column = 8.0
    q[..., 0] = q[..., 0] * (1 - shifted) + offset * head_dim**0.5 / column
    kv_shifted = (torch.arange(kv_heads, device=device) % 2 == 0).to(torch.float32)
    k_cache[..., 0] = k_cache[..., 0] * (1 - kv_shifted) + column * kv_shifted
    # Stale cache slots past each sequence's end (in its last block) and the spare blocks
    # hold large garbage: keys of +-1e3 would swamp the softmax if read unmasked.
    owned_positions = torch.zeros(num_blocks, block_size, dtype=torch.bool, device=device)
    for b in range(batch):
        n = int(seq_lens[b])
        for slot in range(int(blocks_needed[b])):
            used = min(block_size, n - slot * block_size)
            owned_positions[block_table[b, slot], :used] = True
    garbage = ~owned_positions[:, :, None, None]
    k_cache = torch.where(garbage, 1000.0 * torch.sign(randn(num_blocks, block_size, kv_heads, head_dim)), k_cache)
    v_cache = torch.where(garbage, 1000.0 * randn(num_blocks, block_size, kv_heads, head_dim), v_cache)
    return {
        "q": q.to(dtype),
        "k_cache": k_cache.to(dtype),
        "v_cache": v_cache.to(dtype),
        "block_table": block_table.to(torch.int32),
        "seq_lens": seq_lens.to(torch.int32),
    }
