"""The grading unit tests run on tiny tensors: torch's intra-op threads only cost time here
(on a busy 2-core machine they made this package 3-6x slower), so use one while it runs."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
import torch


@pytest.fixture(scope="package", autouse=True)
def one_torch_thread() -> Iterator[None]:
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)
