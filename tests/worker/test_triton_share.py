"""Triton's share of a call's GPU time: the classification of profiled device kernels (fake
profiler rows: there is no GPU here), and no figure on CPU."""

from __future__ import annotations

import pytest

from gym.worker.triton_share import profiled_share, share_of


def test_device_time_of_launched_triton_kernels_over_all_device_kernels() -> None:
    kernels = [("_fused_relu_bias", 30.0), ("_fused_relu_bias_0d1d2", 10.0), ("cudnn::conv2d_fprop", 60.0), ("idle", 0.0)]
    assert share_of(kernels, {"_fused_relu_bias"}) == pytest.approx(0.4)
    assert share_of(kernels, set()) == 0.0
    assert share_of([], {"k"}) is None


def test_no_figure_without_a_gpu() -> None:
    ran: list[int] = []
    assert profiled_share(lambda: ran.append(1), {"k"}) is None
