"""The training signal is robust (issue 36, class 8): the counted replay is a hidden trial's the
secret picks, a hidden count is never shown at its own shape, and counts that fail or cannot be
modelled cost the figures (and under `modelled`, the speed term), never the status."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import torch

from gym.grading.judging.verdict import WitnessFigures
from gym.grading.signal.training_signal import counted_slot, signal_fields
from gym.harness.reward import RewardConfig, reward_for
from gym.schema.result import Status
from gym.tasks.model import Task
from gym.worker.traffic import LaunchCount, TrafficCounts
from tests.support.fake_grades import fake_grade


@dataclass
class _Trial:
    label: str
    hidden: bool
    dtype: Any = torch.float32


@dataclass
class _Slot:
    trial: _Trial


SLOTS = [
    _Slot(_Trial("float32 public #1", False)),
    _Slot(_Trial("float32 public #2", False)),
    _Slot(_Trial("float32 hidden #1", True)),
    _Slot(_Trial("float32 hidden #2", True)),
    _Slot(_Trial("float32 hidden #3", True)),
    _Slot(_Trial("float16 hidden #1", True, torch.float16)),
    _Slot(_Trial("float32 heavy-tailed #1", True)),
]


def test_the_counted_replay_is_a_hidden_trial_the_secret_picks() -> None:
    picked = {counted_slot(SLOTS, secret, "l1/vector_add").trial.label for secret in range(64)}  # type: ignore[union-attr]
    assert picked == {"float32 hidden #1", "float32 hidden #2", "float32 hidden #3"}
    # Deterministic in (task, secret).
    assert counted_slot(SLOTS, 7, "l1/x") is counted_slot(SLOTS, 7, "l1/x")


def test_without_hidden_trials_the_first_public_one_is_counted() -> None:
    public = SLOTS[:2]
    assert counted_slot(public, 3) is public[0]
    assert counted_slot([], 3) is None


def _figures(shape: dict[str, int], label: str, traffic: TrafficCounts | None) -> WitnessFigures:
    n = shape["N"]
    return WitnessFigures(label=label, shape=shape, dtype=torch.float32, traffic=traffic, inputs={"x": torch.randn(n), "y": torch.randn(n)}, traffic_error=None)


def _counts(n: int, flops: int, special: int = 0) -> TrafficCounts:
    row = LaunchCount(kernel="k", programs=1, bytes_read=8 * n, bytes_written=4 * n, flops=flops, special=special)
    return TrafficCounts(launches=[row], launch_total=1, programs=1, bytes_read=8 * n, bytes_written=4 * n, flops=flops, special=special)


def test_a_hidden_count_is_shown_at_the_bench_shape(vector_add: Task) -> None:
    fields = signal_fields(vector_add, _figures({"N": 5003}, "float32 hidden #1", _counts(5003, 5003)), "H100 SXM")
    assert fields["traffic"].shape == {"N": 16777216} and fields["modelled"].shape == {"N": 16777216}
    assert "5003" not in fields["traffic"].model_dump_json()
    assert fields["modelled_speedup_vs_eager"] is not None and 0.9 < fields["modelled_speedup_vs_eager"] < 1.1


def test_a_libdevice_heavy_kernel_models_compute_bound_and_slow(vector_add: Task) -> None:
    # 300 exp per element (as libdevice.exp is now counted): 2400 FLOP-equivalents per 12 bytes, compute-bound, ~0.1x eager.
    fields = signal_fields(vector_add, _figures({"N": 5003}, "float32 hidden #1", _counts(5003, 300 * 5003, 300 * 5003)), "H100 SXM")
    assert fields["modelled"].bound == "compute" and fields["modelled_speedup_vs_eager"] < 0.15


def test_a_failed_count_has_no_figures_and_earns_the_pass_floor(vector_add: Task) -> None:
    failed = _figures({"N": 5003}, "float32 hidden #1", None)
    failed.traffic_error = "the counter raised"
    assert signal_fields(vector_add, failed, "H100 SXM") == {}
    # Counts that cannot be modelled (here: no inputs for the reference, an unknown shape key) cost the figures, not the status.
    broken = _figures({"N": 5003}, "float32 hidden #1", _counts(5003, 5003))
    broken.shape = {"Q": 1}
    assert "modelled" not in signal_fields(vector_add, broken, "H100 SXM")
    config = RewardConfig(preset="modelled")
    passed = fake_grade("l1/vector_add", "code", Status.passed).model_copy(update={"speedup_vs_eager": 8.0, "modelled_speedup_vs_eager": None})
    slow = passed.model_copy(update={"modelled_speedup_vs_eager": 0.01})
    assert reward_for(passed, config) == 0.5 <= reward_for(slow, config)
