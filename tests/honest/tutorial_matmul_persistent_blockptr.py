"""Persistent matmul after Triton's persistent-matmul tutorial: one program per SM loops over output tiles,
operands read through block pointers.

Style: Triton tutorials
Task: l1/matmul
Idioms: persistent kernel (grid = number of SMs, loop over tiles), block pointers (tl.make_block_ptr, tl.advance), torch.cuda.is_available() branch
"""

import torch
import triton
import triton.language as tl


def num_sms() -> int:
    if torch.cuda.is_available():
        return torch.cuda.get_device_properties("cuda").multi_processor_count
    return 4  # interpreter: a small fixed number of "SMs"


@triton.jit
def matmul_kernel_persistent(
    a_ptr, b_ptr, c_ptr, M, N, K,
    stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
    BLOCK_SIZE_M: tl.constexpr, BLOCK_SIZE_N: tl.constexpr, BLOCK_SIZE_K: tl.constexpr,
    GROUP_SIZE_M: tl.constexpr, NUM_SMS: tl.constexpr, IEEE: tl.constexpr,
):
    start_pid = tl.program_id(axis=0)
    num_pid_m = tl.cdiv(M, BLOCK_SIZE_M)
    num_pid_n = tl.cdiv(N, BLOCK_SIZE_N)
    num_tiles = num_pid_m * num_pid_n
    num_pid_in_group = GROUP_SIZE_M * num_pid_n

    for tile_id in range(start_pid, num_tiles, NUM_SMS):
        group_id = tile_id // num_pid_in_group
        first_pid_m = group_id * GROUP_SIZE_M
        group_size_m = min(num_pid_m - first_pid_m, GROUP_SIZE_M)
        pid_m = first_pid_m + ((tile_id % num_pid_in_group) % group_size_m)
        pid_n = (tile_id % num_pid_in_group) // group_size_m

        a_block = tl.make_block_ptr(
            a_ptr, shape=(M, K), strides=(stride_am, stride_ak), offsets=(pid_m * BLOCK_SIZE_M, 0),
            block_shape=(BLOCK_SIZE_M, BLOCK_SIZE_K), order=(1, 0),
        )
        b_block = tl.make_block_ptr(
            b_ptr, shape=(K, N), strides=(stride_bk, stride_bn), offsets=(0, pid_n * BLOCK_SIZE_N),
            block_shape=(BLOCK_SIZE_K, BLOCK_SIZE_N), order=(1, 0),
        )
        accumulator = tl.zeros((BLOCK_SIZE_M, BLOCK_SIZE_N), dtype=tl.float32)
        for _ in range(0, tl.cdiv(K, BLOCK_SIZE_K)):
            # Out-of-range rows, columns and the K tail are padded with zeros.
            a = tl.load(a_block, boundary_check=(0, 1), padding_option="zero")
            b = tl.load(b_block, boundary_check=(0, 1), padding_option="zero")
            if IEEE:
                accumulator = tl.dot(a, b, accumulator, input_precision="ieee")
            else:
                accumulator = tl.dot(a, b, accumulator)
            a_block = tl.advance(a_block, (0, BLOCK_SIZE_K))
            b_block = tl.advance(b_block, (BLOCK_SIZE_K, 0))

        c_block = tl.make_block_ptr(
            c_ptr, shape=(M, N), strides=(stride_cm, stride_cn), offsets=(pid_m * BLOCK_SIZE_M, pid_n * BLOCK_SIZE_N),
            block_shape=(BLOCK_SIZE_M, BLOCK_SIZE_N), order=(1, 0),
        )
        tl.store(c_block, accumulator.to(c_ptr.dtype.element_ty), boundary_check=(0, 1))


def matmul_persistent(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    assert a.shape[1] == b.shape[0], "Incompatible dimensions"
    M, K = a.shape
    K, N = b.shape
    c = torch.empty((M, N), device=a.device, dtype=a.dtype)
    BLOCK_SIZE_M, BLOCK_SIZE_N, BLOCK_SIZE_K = 32, 32, 32
    NUM_SMS = num_sms()
    num_tiles = triton.cdiv(M, BLOCK_SIZE_M) * triton.cdiv(N, BLOCK_SIZE_N)
    grid = (min(NUM_SMS, num_tiles),)
    matmul_kernel_persistent[grid](
        a, b, c, M, N, K,
        a.stride(0), a.stride(1), b.stride(0), b.stride(1), c.stride(0), c.stride(1),
        BLOCK_SIZE_M=BLOCK_SIZE_M, BLOCK_SIZE_N=BLOCK_SIZE_N, BLOCK_SIZE_K=BLOCK_SIZE_K,
        GROUP_SIZE_M=8, NUM_SMS=NUM_SMS, IEEE=a.dtype == torch.float32,
    )
    return c


def kernel(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    return matmul_persistent(a, b)
