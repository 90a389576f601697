"""Reward: a documented, configurable function of a grade, with named presets, and returns over an episode's turns.

Every preset shares four rules: a rejected grade (status `rejected`, or any integrity flag) earns `rejected`
(default -1, validated <= 0: never positive); an `infra_error` earns `infra` (default: the same as `failed`);
no status a submission can provoke (`timeout`, `runtime_error`, `compile_error`, `infra_error`, `rejected`)
pays more than `wrong_answer` (`failed`), validated for every config (`provokable_payouts`); and a field given
explicitly overrides the preset's value for it (`RewardConfig(preset="kernrl", failed=-0.1)`).

Masking: an `infra_error` the submission could not have caused (the sandbox failed before it ran, the gym's own
exception, a task found degenerate at grade time) is `masked` (`is_masked`): the RL adapters drop such a sample
instead of rewarding it, and `infra` (never above a failure) is only what surfaces that cannot drop a sample
(`kgym run`, the Env's `reward`) record. A preset is chosen by name everywhere a RewardConfig is
accepted: `RewardConfig(preset=NAME)`, `reward_preset(NAME)`, or the bare name string where a RewardConfig
is validated (`kgym run --reward NAME`, the adapters' `reward=` settings).

Presets (s is the speedup vs eager PyTorch; "a failure" is compile_error, runtime_error, timeout, wrong_answer):

- `default` (today's reward, unchanged): a failure `failed` (0); a pass `correct` (1) + `speedup_weight` (0.5)
  x log2(s), the log clipped to [-1, `max_log2_speedup`] (3, i.e. 8x): 0.5 to 2.5, `correct` alone when no
  speedup was measured. A slow pass always beats a failure (validated).
- `kernelbench-fast-p` (`kernelbench-fast-1.5` etc. set `fast_p`; default p = 1.0): KernelBench's fast_p
  metric as a reward (Ouyang et al. 2025, "KernelBench: Can LLMs Write Efficient GPU Kernels?"): `correct`
  (1) when the grade passed and s > p, else `failed` (0). A slow pass earns the same as a failure ON PURPOSE:
  the metric does not count it, and the mean reward over tasks is then fast_p (when nothing was rejected). It
  is the one preset exempt from the slow-pass rule; use it to score, or to train once passes are common.
- `kernrl` (the kernrl OpenEnv environment, `envs/kernrl/server/kernrl_environment.py`, `_calculate_reward`):
  compile_error `compile_failed` (-0.5); runtime_error, timeout, wrong_answer `failed` (-0.25); a pass
  `correct` (0) + `speedup_weight` (1) x min(s - 1, `speed_cap`) above 1x, so the reward is capped at 2.0
  (reached at 3x). kernrl gives a pass at or below 1x a penalty of 0.5 x (s - 1); here it earns `correct` (0)
  instead ("reward only above 1x"): under kernrl's penalty a pass below 0.5x earns less than a wrong answer,
  and every interpreted (CPU) timing is far below 0.5x, so it would teach an agent that a wrong answer beats
  a correct slow kernel. A pass therefore still beats any failure.
- `kernelgym` (KernelGYM / Dr.Kernel's tiered reward, hkust-nlp/KernelGYM
  `drkernel/kernel/rewards/reward_client.py`: compile / correctness / speedup tiers plus its profiling
  "time coverage" term, the custom kernels' share of the profiled device time): compile_error
  `compile_failed` (0); compiled but not correct (runtime_error, timeout, wrong_answer) `failed` (0.1); a
  pass `correct` (1) + `speedup_weight` (0.5) when faster than eager (s > 1 + `faster_margin`, 0.05: a tiny
  speedup is noise) + `compile_weight` (0.5) when faster than torch.compile by the same margin +
  `coverage_weight` (0.5) x `triton_time_share` (the Triton kernels' share of the candidate's device time):
  a fusion task solved by a trivial Triton kernel beside torch ops earns up to 0.5 less. `triton_time_share`
  is GPU only: None (CPU) adds nothing. A pass (>= 1) always beats a failure.
- `modelled` (for CPU training): the `default` formula with the speedup modelled on a GPU profile
  (`modelled_speedup_vs_eager`, from the counted memory traffic) instead of the measured one, which on CPU is
  an interpreted timing. A pass without a modelled speedup (a count that failed, a reference without an eager
  model) earns the least a pass can (`correct - speedup_weight`, 0.5), never more than a counted pass: a count
  a submission makes fail pays nothing extra.

Episode returns (`ReturnConfig`, `episode_return`, `turn_returns`): an episode's turns earn r_0 ... r_{T-1};
its return is the best turn's (`best`, the default everywhere, as before), the last turn's (`last`), or the
discounted sum (`discounted`) G_0, where turn t's return is G_t = sum_{k >= t} gamma^(k - t) r_k.
The `kevin` return preset is the discounted sum with gamma = 0.4 (Kevin-32B, Cognition and Stanford 2025:
"Kevin-32B: Multi-Turn RL for Writing CUDA Kernels": each refinement turn is credited with its own score
plus the discounted scores of the turns after it).
"""

from __future__ import annotations

import math
import re
from typing import Any, Literal

from pydantic import Field, model_validator

from gym.schema.episode import HarnessModel
from gym.schema.result import GradeResult, Status

DEFAULT_PRESET = "default"
FAST_P_PRESET = "kernelbench-fast-p"
# "kernelbench-fast-1.5": the fast_p preset with p = 1.5.
_FAST_P_NAME = re.compile(r"kernelbench-fast-(?P<p>[0-9]+(?:\.[0-9]+)?(?:[eE][-+]?[0-9]+)?)")

# Each preset's values of RewardConfig's fields; a field not named keeps its default (the `default` preset's).
PRESETS: dict[str, dict[str, float]] = {
    DEFAULT_PRESET: {},
    FAST_P_PRESET: {"correct": 1.0, "failed": 0.0, "fast_p": 1.0},
    "kernrl": {"compile_failed": -0.5, "failed": -0.25, "correct": 0.0, "speedup_weight": 1.0, "speed_cap": 2.0},
    "kernelgym": {
        # An infra_error earns the lowest tier, as a compile_error does (not the "compiled" tier's 0.1).
        "infra": 0.0,
        "compile_failed": 0.0,
        "failed": 0.1,
        "correct": 1.0,
        "speedup_weight": 0.5,
        "compile_weight": 0.5,
        "coverage_weight": 0.5,
        "faster_margin": 0.05,
    },
    "modelled": {},
}

# One line per preset: its formula and where it comes from (README's table, `kgym run --help`).
PRESET_SOURCES: dict[str, str] = {
    DEFAULT_PRESET: "1 + 0.5 x clip(log2 s, -1, 3) for a pass, 0 for a failure, -1 rejected (Kernel Gym)",
    FAST_P_PRESET: "1 if passed and s > p (default p = 1; kernelbench-fast-1.5 sets p), else 0 (KernelBench fast_p, Ouyang et al. 2025)",
    "kernrl": "pass: min(s - 1, 2) above 1x, else 0; wrong/runtime/timeout -0.25; compile -0.5 (kernrl, OpenEnv)",
    "kernelgym": "pass: 1 + 0.5 [s > 1.05] + 0.5 [s_compile > 1.05] + 0.5 triton_time_share; compiled 0.1; compile 0 (KernelGYM / Dr.Kernel)",
    "modelled": "the default formula on modelled_speedup_vs_eager (GPU roofline from counted traffic), for CPU training",
}


def _canonical_infra(values: dict[str, Any], preset: dict[str, float]) -> dict[str, Any]:
    """`infra` given as what None means (the same as `failed`) reads as None, unless the preset sets it: a config
    recorded with `infra = 0.0` before None meant "as failed" equals today's default."""
    infra = values.get("infra")
    if "infra" in preset or infra is None or isinstance(infra, str):
        return values
    try:
        same = float(infra) == float(values.get("failed", 0.0))
    except (TypeError, ValueError):
        return values  # field validation reports it
    return {key: value for key, value in values.items() if key != "infra"} if same else values


def preset_names() -> list[str]:
    """The reward presets' names (`kernelbench-fast-P` also takes any p, e.g. `kernelbench-fast-1.5`)."""
    return list(PRESETS)


def _parse_preset(name: str) -> tuple[str, dict[str, float]]:
    """(canonical preset name, the field values the name itself sets); ValueError for an unknown name."""
    if name in PRESETS:
        return name, {}
    match = _FAST_P_NAME.fullmatch(name)
    if match is not None:
        return FAST_P_PRESET, {"fast_p": float(match["p"])}
    raise ValueError(f"unknown reward preset {name!r}: one of {', '.join(PRESETS)}, or kernelbench-fast-P (e.g. kernelbench-fast-1.5)")


class RewardConfig(HarnessModel):
    preset: str = Field(
        default=DEFAULT_PRESET,
        description=(
            "The reward's formula, by name: default, kernelbench-fast-p (or kernelbench-fast-P, e.g. kernelbench-fast-1.5, "
            "setting fast_p), kernrl, kernelgym, modelled (gym.harness.reward's docstring: formulas and sources). "
            "Fields not given take the preset's values."
        ),
    )
    correct: float = Field(
        default=1.0, description="Reward for a pass, before the speed terms (fast_p: for a pass faster than p; kernrl: for a pass at or below 1x)."
    )
    speedup_weight: float = Field(
        default=0.5,
        ge=0,
        description=(
            "Weight of the speed term: default / modelled: of clip(log2 speedup vs eager); kernrl: of min(speedup - 1, speed_cap) above 1x; "
            "kernelgym: the bonus for beating eager."
        ),
    )
    max_log2_speedup: float = Field(
        default=3.0,
        ge=0,
        description="default / modelled: upper clip of log2(speedup vs eager) (the lower clip is -1).",
    )
    failed: float = Field(
        default=0.0,
        description="Reward for compile_error (unless compile_failed is set), runtime_error, timeout and wrong_answer (fast_p: also a pass not faster than p).",
    )
    compile_failed: float | None = Field(default=None, description="Reward for compile_error; None: the same as failed (kernrl -0.5, kernelgym 0).")
    infra: float | None = Field(
        default=None,
        description=(
            "Reward for infra_error (the gym's fault, not the agent's); None: the same as failed (kernelgym 0). Never more than "
            "failed (validated). RL adapters drop a masked infra_error sample (GradeResult.masked) instead of rewarding it."
        ),
    )
    rejected: float = Field(
        default=-1.0,
        le=0,
        description=("Reward for a rejected submission; must be <= 0: a rejected submission never earns a positive reward."),
    )
    fast_p: float = Field(default=1.0, gt=0, description="kernelbench-fast-p: the speedup vs eager a pass must beat to earn `correct`.")
    speed_cap: float = Field(default=2.0, ge=0, description="kernrl: the cap of the speed term min(speedup - 1, speed_cap).")
    compile_weight: float = Field(default=0.0, ge=0, description="kernelgym: the bonus for beating torch.compile (speedup_vs_compile > 1 + faster_margin).")
    coverage_weight: float = Field(
        default=0.0, ge=0, description="kernelgym: weight of triton_time_share (the Triton kernels' share of device time; GPU only)."
    )
    faster_margin: float = Field(default=0.0, ge=0, description="kernelgym: a speedup counts as faster only above 1 + faster_margin.")

    @model_validator(mode="before")
    @classmethod
    def _apply_preset(cls, data: Any) -> Any:
        if isinstance(data, str):
            data = {"preset": data}
        if not isinstance(data, dict):
            return data
        if "preset" not in data:
            return _canonical_infra(data, {})
        name, named = _parse_preset(str(data["preset"]))
        given = dict(data)
        if "fast_p" in named and "fast_p" in given and float(given["fast_p"]) != named["fast_p"]:
            raise ValueError(f"preset {data['preset']!r} sets fast_p = {named['fast_p']:g}, but fast_p = {given['fast_p']} was also given")
        return _canonical_infra({**PRESETS[name], **named, **given, "preset": name}, PRESETS[name])

    @model_validator(mode="after")
    def _no_provokable_status_beats_a_wrong_answer(self) -> RewardConfig:
        for status, payout in provokable_payouts(self).items():
            if payout > self.failed:
                raise ValueError(
                    f"{status.value} would earn {payout:g} under preset {self.name}, more than wrong_answer (failed = {self.failed:g}): "
                    f"a submission can provoke {status.value}, so it must never pay more than a wrong answer "
                    f"(set {_PAYOUT_FIELD[status]} <= failed)"
                )
        return self

    @model_validator(mode="after")
    def _pass_beats_failure(self) -> RewardConfig:
        lowest = pass_floor(self)
        worst_failure = max(self.failed, *provokable_payouts(self).values())
        if lowest is None:
            # kernelbench-fast-p: a slow pass earns `failed` on purpose, but a fast one must earn more than any failure.
            if self.correct <= worst_failure:
                raise ValueError(f"a pass faster than p (correct = {self.correct:g}) must still earn more than a failure ({worst_failure:g})")
            return self
        if lowest <= worst_failure:
            if self.preset in (DEFAULT_PRESET, "modelled"):
                raise ValueError("a slow pass (correct - speedup_weight) must still earn more than a failure")
            raise ValueError(f"a pass (at least {lowest:g} under preset {self.preset}) must still earn more than a failure")
        return self

    @property
    def name(self) -> str:
        """The preset's name as a user would write it (`kernelbench-fast-1.5` for fast_p = 1.5)."""
        if self.preset == FAST_P_PRESET:
            short = f"{self.fast_p:g}"
            # The short form only when it reads back as the same p (1.5, 2); else every digit (1.23456789, 1e-05).
            return f"kernelbench-fast-{short if float(short) == self.fast_p else repr(self.fast_p)}"
        return self.preset


def reward_preset(name: str, **overrides: float) -> RewardConfig:
    """The RewardConfig of preset `name` (see PRESETS), with `overrides` of its fields; ValueError for an unknown name."""
    return RewardConfig.model_validate({"preset": name, **overrides})


def as_reward_config(value: RewardConfig | str | dict[str, Any] | None) -> RewardConfig:
    """A RewardConfig from itself, a preset name, a dict of its fields (a "preset" key among them), or None (the default)."""
    if value is None:
        return RewardConfig()
    if isinstance(value, RewardConfig):
        return value
    return RewardConfig.model_validate(value)


# The statuses a submission can provoke (or choose) besides a wrong answer, and the field that pays each.
PROVOKABLE: tuple[Status, ...] = (Status.timeout, Status.runtime_error, Status.compile_error, Status.infra_error, Status.rejected)
_PAYOUT_FIELD: dict[Status, str] = {
    Status.timeout: "failed",
    Status.runtime_error: "failed",
    Status.compile_error: "compile_failed",
    Status.infra_error: "infra",
    Status.rejected: "rejected",
}


def status_payout(config: RewardConfig, status: Status) -> float:
    """What a grade of `status` (other than passed) earns under `config`, without integrity flags."""
    if status == Status.passed:
        raise ValueError("a pass earns a formula of its speedup, not a fixed payout (pass_floor)")
    if status == Status.rejected:
        return min(config.rejected, 0.0)
    if status == Status.infra_error:
        return config.failed if config.infra is None else config.infra
    if status == Status.compile_error and config.compile_failed is not None:
        return config.compile_failed
    return config.failed


def provokable_payouts(config: RewardConfig) -> dict[Status, float]:
    """Each provokable status's payout under `config` (validated: none above `failed`, a wrong answer's)."""
    return {status: status_payout(config, status) for status in PROVOKABLE}


def payout_table(names: list[str] | None = None) -> dict[str, dict[Status, float]]:
    """Every preset's payout per non-passing status (wrong_answer first), by preset name (the docs' reward table)."""
    table: dict[str, dict[Status, float]] = {}
    for name in names or preset_names():
        config = RewardConfig(preset=name)
        table[name] = {Status.wrong_answer: config.failed, **provokable_payouts(config)}
    return table


def is_masked(grade: GradeResult) -> bool:
    """True when an RL trainer should drop this grade's sample rather than reward it: an `infra_error` the
    submission could not have caused (GradeResult.masked; never with an integrity flag, which earns `rejected`)."""
    return grade.status == Status.infra_error and grade.masked and not grade.integrity_flags


def pass_floor(config: RewardConfig) -> float | None:
    """The least a pass can earn under `config`; None under kernelbench-fast-p (a slow pass earns `failed`)."""
    if config.preset == FAST_P_PRESET:
        return None
    if config.preset in (DEFAULT_PRESET, "modelled"):
        return config.correct - config.speedup_weight
    return config.correct


def _usable(speedup: float | None) -> float | None:
    return speedup if speedup is not None and math.isfinite(speedup) and speedup > 0 else None


def _log_term(config: RewardConfig, speedup: float | None) -> float:
    if speedup is None:
        return config.correct
    log2 = min(max(math.log2(speedup), -1.0), config.max_log2_speedup)
    return config.correct + config.speedup_weight * log2


def reward_for(grade: GradeResult, config: RewardConfig | None = None) -> float:
    config = config or RewardConfig()
    if grade.status == Status.rejected or grade.integrity_flags:
        return min(config.rejected, 0.0)
    if grade.status != Status.passed:
        return status_payout(config, grade.status)
    speedup = _usable(grade.speedup_vs_eager)
    if config.preset == FAST_P_PRESET:
        return config.correct if speedup is not None and speedup > config.fast_p else config.failed
    if config.preset == "kernrl":
        if speedup is None or speedup <= 1.0:
            return config.correct
        return config.correct + config.speedup_weight * min(speedup - 1.0, config.speed_cap)
    if config.preset == "kernelgym":
        threshold = 1.0 + config.faster_margin
        vs_compile = _usable(grade.speedup_vs_compile)
        reward = config.correct
        if speedup is not None and speedup > threshold:
            reward += config.speedup_weight
        if vs_compile is not None and vs_compile > threshold:
            reward += config.compile_weight
        share = grade.triton_time_share
        if share is not None and math.isfinite(share):
            reward += config.coverage_weight * min(max(share, 0.0), 1.0)
        return reward
    if config.preset == "modelled":
        modelled = _usable(grade.modelled_speedup_vs_eager)
        # No figure (a failed count) earns the pass floor, never the `correct` of a 1x speedup: failing the count must not pay.
        return _log_term(config, modelled) if modelled is not None else config.correct - config.speedup_weight
    return _log_term(config, speedup)


# ---------------------------------------------------------------- returns over an episode's turns

Aggregate = Literal["best", "last", "discounted"]

# Each return preset's values of ReturnConfig's fields.
RETURN_PRESETS: dict[str, dict[str, Any]] = {
    "best": {"aggregate": "best", "discount": 1.0},
    "last": {"aggregate": "last", "discount": 1.0},
    "discounted": {"aggregate": "discounted", "discount": 1.0},
    "kevin": {"aggregate": "discounted", "discount": 0.4},
}


class ReturnConfig(HarnessModel):
    """How an episode's turn rewards become one return: its best turn's, its last turn's, or the discounted sum."""

    preset: str | None = Field(
        default=None,
        description='A return preset by name: "best" (the default), "last", "discounted" (gamma 1), "kevin" (discounted, gamma 0.4, Kevin-32B); fields given override it.',
    )
    aggregate: Aggregate = Field(
        default="best",
        description="best: the best turn's reward; last: the last turn's; discounted: G_0 = sum_k discount^k r_k (turn t's return is sum_{k>=t} discount^(k-t) r_k).",
    )
    discount: float = Field(default=1.0, ge=0, le=1, description="gamma of the discounted return (Kevin-32B: 0.4); unused by best and last.")

    @model_validator(mode="before")
    @classmethod
    def _apply_preset(cls, data: Any) -> Any:
        if isinstance(data, str):
            data = {"preset": data}
        if not isinstance(data, dict) or data.get("preset") is None:
            return data
        name = str(data["preset"])
        if name not in RETURN_PRESETS:
            raise ValueError(f"unknown return preset {name!r}: one of {', '.join(RETURN_PRESETS)}")
        return {**RETURN_PRESETS[name], **data}


def as_return_config(value: ReturnConfig | str | dict[str, Any] | None, discount: float | None = None) -> ReturnConfig:
    """A ReturnConfig from itself, a preset or aggregate name ("best", "last", "discounted", "kevin"), a dict, or None
    (best); `discount`, when given, sets gamma (and alone, with `value` None, means the discounted sum)."""
    if value is None:
        config = ReturnConfig(aggregate="discounted") if discount is not None else ReturnConfig()
    elif isinstance(value, ReturnConfig):
        config = value
    else:
        config = ReturnConfig.model_validate(value)
    if discount is not None:
        config = ReturnConfig.model_validate({**config.model_dump(), "discount": discount})
    return config


def turn_returns(rewards: list[float], discount: float) -> list[float]:
    """Each turn's discounted return: G_t = sum_{k >= t} discount^(k - t) r_k (Kevin-32B's per-turn credit)."""
    returns = [0.0] * len(rewards)
    following = 0.0
    for index in range(len(rewards) - 1, -1, -1):
        following = rewards[index] + discount * following
        returns[index] = following
    return returns


def episode_return(rewards: list[float], config: ReturnConfig | str | None = None, empty: float = 0.0) -> float:
    """The episode's return under `config` (default: the best turn's reward); `empty` when there were no turns."""
    config = as_return_config(config)
    if not rewards:
        return empty
    if config.aggregate == "best":
        return max(rewards)
    if config.aggregate == "last":
        return rewards[-1]
    return turn_returns(rewards, config.discount)[0]
