"""The reward presets and episode returns of gym.harness.reward, on hand-made grades (no grading).

Every expected number is worked out by hand in the comment beside it, from the formulas in
gym/harness/reward.py's docstring.
"""

from __future__ import annotations

import json

import pytest
from pydantic import ValidationError

from gym.harness.reward import (
    PRESETS,
    PROVOKABLE,
    RETURN_PRESETS,
    ReturnConfig,
    RewardConfig,
    as_return_config,
    as_reward_config,
    episode_return,
    is_masked,
    pass_floor,
    payout_table,
    preset_names,
    reward_for,
    reward_preset,
    status_payout,
    turn_returns,
)
from gym.harness.run_folder import RunConfig
from gym.schema.result import GradeResult, Status
from tests.support.fake_grades import fake_grade

FAILURES = (Status.compile_error, Status.runtime_error, Status.timeout, Status.wrong_answer)


def grade(
    status: Status = Status.passed,
    eager: float | None = None,
    compile: float | None = None,
    share: float | None = None,
    modelled: float | None = None,
    flags: list[str] | None = None,
) -> GradeResult:
    """A GradeResult with exactly the fields the reward reads set (even on a failure); the rest plausible and fixed."""
    made = fake_grade("l1/x", "", status, flags=flags)
    return made.model_copy(update={"speedup_vs_eager": eager, "speedup_vs_compile": compile, "triton_time_share": share, "modelled_speedup_vs_eager": modelled})


def test_grade_helper_sets_the_fields_the_reward_reads() -> None:
    g = grade(eager=2.0, compile=0.5, share=0.25, modelled=3.0, flags=["f"])
    assert (g.speedup_vs_eager, g.speedup_vs_compile, g.triton_time_share, g.modelled_speedup_vs_eager, g.integrity_flags) == (2.0, 0.5, 0.25, 3.0, ["f"])


# ---------------------------------------------------------------- default


def test_default_preset_is_unchanged() -> None:
    config = RewardConfig()
    assert config.preset == "default" and config.name == "default"
    assert reward_for(grade(eager=2.0)) == pytest.approx(1.5)  # 1 + 0.5 * log2(2) = 1 + 0.5
    assert reward_for(grade(eager=2.0), config) == pytest.approx(1.5)
    assert reward_for(grade(eager=16.0)) == pytest.approx(2.5)  # log2 16 = 4, clipped to 3: 1 + 1.5
    assert reward_for(grade(eager=8.0)) == pytest.approx(2.5)  # log2 8 = 3 (the clip itself)
    assert reward_for(grade(eager=0.25)) == pytest.approx(0.5)  # log2 0.25 = -2, clipped to -1: 1 - 0.5
    assert reward_for(grade(eager=0.5)) == pytest.approx(0.5)  # log2 0.5 = -1 (the lower clip itself)
    assert reward_for(grade(eager=1.0)) == pytest.approx(1.0)  # log2 1 = 0
    assert reward_for(grade(eager=None)) == 1.0  # no speedup measured: correct alone
    for status in FAILURES:
        assert reward_for(grade(status)) == 0.0, status
    assert reward_for(grade(Status.rejected, flags=["input_mutated:x"])) == -1.0
    assert reward_for(grade(Status.infra_error)) == 0.0


def test_default_preset_ignores_the_other_presets_fields() -> None:
    # compile speedup, triton share and modelled speedup do not enter the default formula.
    g = grade(eager=2.0, compile=100.0, share=1.0, modelled=100.0)
    assert reward_for(g) == pytest.approx(1.5)  # 1 + 0.5 * log2(2), as without them


def test_integrity_flags_earn_rejected_under_every_preset() -> None:
    flagged = grade(Status.passed, eager=10.0, compile=10.0, share=1.0, modelled=10.0, flags=["below_speed_of_light"])
    for name in [*preset_names(), "kernelbench-fast-1.5"]:
        assert reward_for(flagged, RewardConfig(preset=name)) == -1.0, name
    assert reward_for(flagged, RewardConfig(rejected=-3.0)) == -3.0
    assert reward_for(grade(Status.rejected), RewardConfig(preset="kernrl", rejected=-0.75)) == -0.75


def test_infra_error_earns_infra_under_every_preset() -> None:
    # infra: None means the same as failed (kernrl -0.25); kernelgym sets 0, its lowest tier.
    expected = {"default": 0.0, "kernelbench-fast-p": 0.0, "kernrl": -0.25, "kernelgym": 0.0, "modelled": 0.0}
    assert set(expected) == set(preset_names())
    for name in preset_names():
        assert reward_for(grade(Status.infra_error), RewardConfig(preset=name)) == expected[name], name
    assert reward_for(grade(Status.infra_error), RewardConfig(preset="kernelgym", infra=0.05)) == 0.05
    assert reward_for(grade(Status.infra_error), RewardConfig(preset="kernrl", failed=-0.1)) == -0.1  # follows failed


# ---------------------------------------------------------------- kernelbench-fast-p


def test_fast_p_rewards_only_a_pass_faster_than_p() -> None:
    fast_1 = RewardConfig(preset="kernelbench-fast-p")
    assert fast_1.fast_p == 1.0 and fast_1.correct == 1.0 and fast_1.failed == 0.0
    assert reward_for(grade(eager=1.2), fast_1) == 1.0  # 1.2 > 1
    assert reward_for(grade(eager=0.9), fast_1) == 0.0  # 0.9 <= 1: a slow pass earns failed
    assert reward_for(grade(eager=1.0), fast_1) == 0.0  # s must be > p, not >=
    assert reward_for(grade(eager=None), fast_1) == 0.0  # no speedup measured: not fast
    assert reward_for(grade(Status.wrong_answer, eager=10.0), fast_1) == 0.0  # a fast wrong kernel is never fast
    fast_15 = RewardConfig(preset="kernelbench-fast-1.5")
    assert fast_15.preset == "kernelbench-fast-p" and fast_15.fast_p == 1.5
    assert reward_for(grade(eager=1.2), fast_15) == 0.0  # 1.2 <= 1.5
    assert reward_for(grade(eager=1.6), fast_15) == 1.0  # 1.6 > 1.5
    assert reward_for(grade(eager=1.6), reward_preset("kernelbench-fast-1.5")) == 1.0


def test_fast_p_mean_reward_is_the_fast_p_metric() -> None:
    # Four tasks: 2x pass, 0.5x pass, wrong answer, 1.1x pass -> fast_1 = 2 / 4 = 0.5.
    grades = [grade(eager=2.0), grade(eager=0.5), grade(Status.wrong_answer), grade(eager=1.1)]
    config = reward_preset("kernelbench-fast-p")
    assert sum(reward_for(g, config) for g in grades) / len(grades) == 0.5


def test_fast_p_name_round_trips() -> None:
    config = RewardConfig(preset="kernelbench-fast-1.5")
    assert config.name == "kernelbench-fast-1.5"
    assert RewardConfig(preset=config.name) == config
    assert RewardConfig(preset="kernelbench-fast-p", fast_p=1.5).name == "kernelbench-fast-1.5"
    assert RewardConfig(preset="kernelbench-fast-p").name == "kernelbench-fast-1"  # default p = 1
    assert RewardConfig(preset="kernelbench-fast-2").fast_p == 2.0
    # Giving the same p the name sets is not a conflict.
    assert RewardConfig(preset="kernelbench-fast-1.5", fast_p=1.5) == config


def test_fast_p_conflicting_with_the_named_p_raises() -> None:
    with pytest.raises(ValidationError, match="fast_p"):
        RewardConfig(preset="kernelbench-fast-1.5", fast_p=2.0)
    with pytest.raises(ValueError, match="fast_p"):
        reward_preset("kernelbench-fast-1.5", fast_p=1.2)
    with pytest.raises(ValidationError):
        RewardConfig(preset="kernelbench-fast-0")  # p must be > 0


def test_fast_p_is_exempt_from_the_slow_pass_rule() -> None:
    config = RewardConfig(preset="kernelbench-fast-p")  # a slow pass earns failed (0) on purpose
    assert pass_floor(config) is None
    assert reward_for(grade(eager=0.1), config) == reward_for(grade(Status.wrong_answer), config) == 0.0


# ---------------------------------------------------------------- kernrl


def test_kernrl_preset() -> None:
    config = RewardConfig(preset="kernrl")
    assert reward_for(grade(Status.compile_error), config) == -0.5
    assert reward_for(grade(Status.wrong_answer), config) == -0.25
    assert reward_for(grade(Status.runtime_error), config) == -0.25
    assert reward_for(grade(Status.timeout), config) == -0.25
    assert reward_for(grade(eager=0.5), config) == 0.0  # at or below 1x: correct (0), no penalty
    assert reward_for(grade(eager=1.0), config) == 0.0  # exactly 1x: correct alone
    assert reward_for(grade(eager=1.5), config) == pytest.approx(0.5)  # 0 + 1 * min(1.5 - 1, 2) = 0.5
    assert reward_for(grade(eager=3.0), config) == pytest.approx(2.0)  # 0 + min(2, 2): the cap is reached at 3x
    assert reward_for(grade(eager=10.0), config) == pytest.approx(2.0)  # 0 + min(9, 2) = 2: capped
    assert reward_for(grade(eager=None), config) == 0.0  # no speedup: correct alone
    assert reward_for(grade(eager=10.0), reward_preset("kernrl")) == pytest.approx(2.0)


def test_kernrl_a_pass_always_beats_any_failure() -> None:
    config = RewardConfig(preset="kernrl")
    passes = [reward_for(grade(eager=s), config) for s in (None, 1e-6, 0.01, 0.3, 0.5, 0.99, 1.0, 1.01, 10.0)]
    failures = [reward_for(grade(status), config) for status in FAILURES]
    assert min(passes) == 0.0 and max(failures) == -0.25  # 0 > -0.25
    assert min(passes) > max(failures)
    assert min(passes) > reward_for(grade(Status.rejected), config)
    assert pass_floor(config) == 0.0


# ---------------------------------------------------------------- kernelgym


def test_kernelgym_preset_tiers() -> None:
    config = RewardConfig(preset="kernelgym")
    assert reward_for(grade(Status.compile_error), config) == 0.0
    assert reward_for(grade(Status.wrong_answer), config) == pytest.approx(0.1)
    assert reward_for(grade(Status.runtime_error), config) == pytest.approx(0.1)
    assert reward_for(grade(Status.timeout), config) == pytest.approx(0.1)
    assert reward_for(grade(eager=0.5, compile=0.3), config) == 1.0  # slower than eager: correct alone
    assert reward_for(grade(eager=1.04, compile=1.04), config) == 1.0  # 1.04 <= 1 + 0.05: noise, no bonus
    assert reward_for(grade(eager=1.05, compile=1.05), config) == 1.0  # 1.05 is not > 1.05
    assert reward_for(grade(eager=1.2, compile=0.9), config) == pytest.approx(1.5)  # 1 + 0.5 (eager) + 0 (compile)
    assert reward_for(grade(eager=0.9, compile=1.2), config) == pytest.approx(1.5)  # 1 + 0 + 0.5 (compile)
    assert reward_for(grade(eager=2.0, compile=1.5), config) == pytest.approx(2.0)  # 1 + 0.5 + 0.5
    assert reward_for(grade(eager=2.0, compile=None), config) == pytest.approx(1.5)  # no compile figure: no compile bonus
    assert reward_for(grade(eager=None, compile=None), config) == 1.0


def test_kernelgym_coverage_term() -> None:
    config = RewardConfig(preset="kernelgym")
    assert reward_for(grade(eager=0.5, share=0.2), config) == pytest.approx(1.1)  # 1 + 0.5 * 0.2
    assert reward_for(grade(eager=2.0, compile=2.0, share=0.2), config) == pytest.approx(2.1)  # 1 + 0.5 + 0.5 + 0.1
    assert reward_for(grade(eager=2.0, compile=2.0, share=1.0), config) == pytest.approx(2.5)  # 1 + 0.5 + 0.5 + 0.5
    assert reward_for(grade(eager=0.5, share=None), config) == 1.0  # None (CPU): adds nothing
    assert reward_for(grade(eager=0.5, share=0.0), config) == 1.0  # 1 + 0.5 * 0
    assert reward_for(grade(eager=1.2, compile=0.9, share=None), config) == pytest.approx(1.5)
    # The coverage term only enters a pass.
    assert reward_for(grade(Status.wrong_answer, share=1.0), config) == pytest.approx(0.1)


def test_kernelgym_a_pass_always_beats_any_failure() -> None:
    config = RewardConfig(preset="kernelgym")
    passes = [reward_for(grade(eager=s, compile=s, share=share), config) for s in (None, 0.01, 1.0, 5.0) for share in (None, 0.0, 0.5)]
    failures = [reward_for(grade(status), config) for status in FAILURES]
    assert min(passes) == 1.0 and max(failures) == pytest.approx(0.1)
    assert pass_floor(config) == 1.0


# ---------------------------------------------------------------- modelled


def test_modelled_preset_uses_the_modelled_speedup() -> None:
    config = RewardConfig(preset="modelled")
    # Measured 0.001x (an interpreted CPU timing) is ignored; modelled 2x: 1 + 0.5 * log2(2) = 1.5.
    assert reward_for(grade(eager=0.001, modelled=2.0), config) == pytest.approx(1.5)
    # The same grade under default uses the measured one: log2(0.001) clipped to -1: 1 - 0.5 = 0.5.
    assert reward_for(grade(eager=0.001, modelled=2.0)) == pytest.approx(0.5)
    # No modelled speedup (a failed count): the pass floor, 1 - 0.5, never more than a counted pass,
    # whatever the measured speedup says: making the count fail pays nothing.
    assert reward_for(grade(eager=4.0, modelled=None), config) == pytest.approx(0.5)
    assert reward_for(grade(eager=4.0, modelled=float("nan")), config) == pytest.approx(0.5)
    assert reward_for(grade(eager=4.0, modelled=None), config) <= reward_for(grade(eager=4.0, modelled=0.01), config)
    assert reward_for(grade(eager=1.0, modelled=100.0), config) == pytest.approx(2.5)  # log2 100 ~ 6.6, clipped to 3: 1 + 1.5
    assert reward_for(grade(eager=1.0, modelled=0.1), config) == pytest.approx(0.5)  # log2 0.1 ~ -3.3, clipped to -1: 1 - 0.5
    assert reward_for(grade(Status.wrong_answer, modelled=8.0), config) == 0.0
    assert pass_floor(config) == 0.5


# ---------------------------------------------------------------- overrides, names, validation


def test_an_explicit_field_overrides_the_preset() -> None:
    config = RewardConfig(preset="kernrl", failed=-0.1)
    assert config.preset == "kernrl" and config.failed == -0.1
    assert config.compile_failed == -0.5 and config.correct == 0.0 and config.speed_cap == 2.0  # the rest stays kernrl's
    assert reward_for(grade(Status.wrong_answer), config) == -0.1
    assert reward_for(grade(Status.compile_error), config) == -0.5
    assert reward_for(grade(eager=10.0), RewardConfig(preset="kernrl", speed_cap=1.0)) == pytest.approx(1.0)  # 0 + min(9, 1)
    assert reward_preset("kernelgym", compile_weight=0.25).compile_weight == 0.25
    assert reward_for(grade(eager=2.0, compile=2.0), reward_preset("kernelgym", compile_weight=0.25)) == pytest.approx(1.75)  # 1 + 0.5 + 0.25


def test_preset_values_match_the_docstring() -> None:
    assert preset_names() == ["default", "kernelbench-fast-p", "kernrl", "kernelgym", "modelled"]
    kernrl = RewardConfig(preset="kernrl")
    assert (kernrl.compile_failed, kernrl.failed, kernrl.correct, kernrl.speedup_weight, kernrl.speed_cap) == (-0.5, -0.25, 0.0, 1.0, 2.0)
    kernelgym = RewardConfig(preset="kernelgym")
    assert (kernelgym.compile_failed, kernelgym.failed, kernelgym.correct) == (0.0, 0.1, 1.0)
    assert (kernelgym.speedup_weight, kernelgym.compile_weight, kernelgym.coverage_weight, kernelgym.faster_margin) == (0.5, 0.5, 0.5, 0.05)
    default = RewardConfig()
    assert (default.correct, default.speedup_weight, default.max_log2_speedup) == (1.0, 0.5, 3.0)
    assert (default.failed, default.infra, default.rejected) == (0.0, None, -1.0)  # infra None: as failed
    assert kernrl.infra is None and kernelgym.infra == 0.0
    assert default.compile_failed is None
    assert RewardConfig(preset="modelled").model_dump(exclude={"preset"}) == default.model_dump(exclude={"preset"})
    assert set(PRESETS) == set(preset_names())


def test_unknown_preset_raises_with_the_names() -> None:
    with pytest.raises(ValidationError, match="default, kernelbench-fast-p, kernrl, kernelgym, modelled"):
        RewardConfig(preset="kernelbench")
    with pytest.raises(ValueError, match="unknown reward preset 'nope'"):
        reward_preset("nope")
    with pytest.raises(ValueError, match="unknown reward preset"):
        as_reward_config("nope")
    with pytest.raises(ValueError, match="unknown reward preset"):
        RewardConfig.model_validate("kernelbench-fast-x")
    with pytest.raises(ValidationError):
        RewardConfig(preset="kernrl", bogus=1.0)  # type: ignore[call-arg]


def test_a_bare_preset_name_is_accepted() -> None:
    assert RewardConfig.model_validate("kernrl") == RewardConfig(preset="kernrl")
    assert RewardConfig.model_validate("kernrl").failed == -0.25
    assert RewardConfig.model_validate("kernelbench-fast-1.5").fast_p == 1.5
    assert as_reward_config("kernelgym") == RewardConfig(preset="kernelgym")
    assert as_reward_config({"preset": "kernrl", "failed": -0.1}).failed == -0.1
    assert as_reward_config(None) == RewardConfig()
    config = RewardConfig(preset="kernrl")
    assert as_reward_config(config) is config


def test_name_is_the_preset_for_the_named_presets() -> None:
    for name in ("default", "kernrl", "kernelgym", "modelled"):
        config = RewardConfig(preset=name)
        assert config.name == name
        assert RewardConfig(preset=config.name) == config


def test_a_slow_pass_earning_no_more_than_a_failure_is_refused() -> None:
    with pytest.raises(ValidationError, match="slow pass"):
        RewardConfig(correct=0.5, speedup_weight=0.5)  # floor 0.5 - 0.5 = 0 <= failed 0
    with pytest.raises(ValidationError, match="slow pass"):
        RewardConfig(preset="modelled", speedup_weight=1.0)  # floor 1 - 1 = 0 <= 0
    with pytest.raises(ValidationError, match="slow pass"):
        RewardConfig(failed=0.6)  # floor 0.5 <= 0.6
    with pytest.raises(ValidationError, match="kernrl"):
        RewardConfig(preset="kernrl", failed=0.0)  # floor 0 <= 0
    with pytest.raises(ValidationError, match="kernrl"):
        RewardConfig(preset="kernrl", compile_failed=0.5)  # floor 0 <= 0.5
    with pytest.raises(ValidationError, match="kernelgym"):
        RewardConfig(preset="kernelgym", failed=1.0)  # floor 1 <= 1
    with pytest.raises(ValidationError):
        RewardConfig(rejected=0.5)  # rejected must be <= 0
    # Just above the line is fine.
    assert pass_floor(RewardConfig(correct=0.6, speedup_weight=0.5)) == pytest.approx(0.1)  # 0.1 > 0
    assert pass_floor(RewardConfig(preset="kernrl", failed=-0.01)) == 0.0


# ---------------------------------------------------------------- returns


def test_turn_returns_discount_the_later_turns() -> None:
    # G_2 = 2; G_1 = 0 + 0.4 * 2 = 0.8; G_0 = 1 + 0.4 * 0 + 0.16 * 2 = 1.32.
    assert turn_returns([1.0, 0.0, 2.0], 0.4) == pytest.approx([1 + 0.4 * 0 + 0.16 * 2, 0 + 0.8, 2.0])
    assert turn_returns([1.0, 0.0, 2.0], 0.4) == pytest.approx([1.32, 0.8, 2.0])
    assert turn_returns([1.0, 0.0, 2.0], 1.0) == pytest.approx([3.0, 2.0, 2.0])  # undiscounted suffix sums
    assert turn_returns([1.0, 0.0, 2.0], 0.0) == [1.0, 0.0, 2.0]  # gamma 0: each turn's own reward
    assert turn_returns([], 0.4) == []
    assert turn_returns([5.0], 0.4) == [5.0]


def test_episode_return_aggregates() -> None:
    rewards = [1.0, 3.0, 2.0]
    assert episode_return(rewards) == 3.0  # best, the default
    assert episode_return(rewards, "best") == 3.0
    assert episode_return(rewards, "last") == 2.0
    assert episode_return(rewards, "discounted") == pytest.approx(6.0)  # gamma 1: 1 + 3 + 2
    assert episode_return(rewards, "kevin") == pytest.approx(2.52)  # 1 + 0.4 * 3 + 0.16 * 2 = 1 + 1.2 + 0.32
    assert episode_return(rewards, ReturnConfig(aggregate="discounted", discount=0.5)) == pytest.approx(3.0)  # 1 + 1.5 + 0.5
    assert episode_return(rewards, ReturnConfig(preset="kevin")) == pytest.approx(2.52)


def test_return_presets() -> None:
    kevin = ReturnConfig(preset="kevin")
    assert kevin.discount == 0.4 and kevin.aggregate == "discounted"
    assert ReturnConfig.model_validate("kevin") == kevin
    assert ReturnConfig.model_validate("kevin").discount == 0.4
    assert ReturnConfig(preset="kevin", discount=0.9).discount == 0.9  # a field given overrides the preset
    assert ReturnConfig().aggregate == "best"
    assert ReturnConfig(preset="last").aggregate == "last"
    assert ReturnConfig(preset="discounted").discount == 1.0
    assert set(RETURN_PRESETS) == {"best", "last", "discounted", "kevin"}
    with pytest.raises(ValidationError):
        ReturnConfig(aggregate="discounted", discount=1.5)  # gamma in [0, 1]


def test_as_return_config() -> None:
    assert as_return_config(None) == ReturnConfig()
    assert as_return_config(None).aggregate == "best"
    alone = as_return_config(None, discount=0.5)  # a discount alone means the discounted sum
    assert alone.aggregate == "discounted" and alone.discount == 0.5
    assert episode_return([1.0, 3.0, 2.0], alone) == pytest.approx(3.0)  # 1 + 0.5 * 3 + 0.25 * 2
    kevin_05 = as_return_config("kevin", discount=0.5)
    assert kevin_05.aggregate == "discounted" and kevin_05.discount == 0.5
    assert as_return_config("kevin").discount == 0.4
    assert as_return_config({"aggregate": "last"}).aggregate == "last"
    config = ReturnConfig(preset="kevin")
    assert as_return_config(config) is config


def test_unknown_return_preset_raises() -> None:
    with pytest.raises(ValidationError, match="unknown return preset 'nope'"):
        ReturnConfig(preset="nope")
    with pytest.raises(ValueError, match="best, last, discounted, kevin"):
        as_return_config("nope")
    with pytest.raises(ValueError, match="unknown return preset"):
        episode_return([1.0], "nope")


def test_empty_episode_returns_empty() -> None:
    assert episode_return([]) == 0.0
    assert episode_return([], "kevin", empty=-7.0) == -7.0
    assert episode_return([], "best", empty=-1.0) == -1.0
    assert episode_return([], "last", empty=0.25) == 0.25


def test_rewards_feed_returns() -> None:
    # A three-turn kernrl episode: wrong (-0.25), compile error (-0.5), pass at 2x (0 + min(1, 2) = 1).
    config = RewardConfig(preset="kernrl")
    rewards = [reward_for(g, config) for g in (grade(Status.wrong_answer), grade(Status.compile_error), grade(eager=2.0))]
    assert rewards == pytest.approx([-0.25, -0.5, 1.0])
    assert episode_return(rewards) == pytest.approx(1.0)  # best
    assert episode_return(rewards, "kevin") == pytest.approx(-0.29)  # -0.25 + 0.4 * -0.5 + 0.16 * 1 = -0.25 - 0.2 + 0.16


# ---------------------------------------------------------------- the preset is recorded in the run


def run_config(**fields: object) -> RunConfig:
    return RunConfig(agent="solutions", tasks=["l1/x"], attempts=1, concurrency=1, sandbox="bwrap", device="cpu", **fields)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("reward", "name"),
    [
        (RewardConfig(preset="kernelbench-fast-1.5"), "kernelbench-fast-1.5"),
        (RewardConfig(preset="kernrl", failed=-0.1), "kernrl"),
        (RewardConfig(preset="kernelgym"), "kernelgym"),
        (RewardConfig(preset="modelled"), "modelled"),
        (RewardConfig(), "default"),
    ],
)
def test_run_config_reward_round_trips_through_json(reward: RewardConfig, name: str) -> None:
    config = run_config(reward=reward)
    text = config.model_dump_json()
    assert json.loads(text)["reward"]["preset"] == reward.preset
    back = RunConfig.model_validate_json(text)
    assert back == config
    assert back.reward == reward and back.reward.name == name


def test_run_config_reward_keeps_overrides_and_fast_p_through_json() -> None:
    back = RunConfig.model_validate_json(run_config(reward=RewardConfig(preset="kernrl", failed=-0.1)).model_dump_json())
    assert back.reward.failed == -0.1 and back.reward.compile_failed == -0.5
    fast = RunConfig.model_validate_json(run_config(reward=RewardConfig(preset="kernelbench-fast-1.5")).model_dump_json()).reward
    assert fast.preset == "kernelbench-fast-p" and fast.fast_p == 1.5
    assert reward_for(grade(eager=1.2), fast) == 0.0 and reward_for(grade(eager=1.6), fast) == 1.0


def test_run_config_takes_a_bare_preset_name() -> None:
    config = run_config(reward="kernrl")
    assert config.reward == RewardConfig(preset="kernrl")
    assert RunConfig.model_validate_json(config.model_dump_json()).reward.name == "kernrl"


def test_run_config_without_reward_reads_back_as_default() -> None:
    data = json.loads(run_config(reward=RewardConfig(preset="kernrl")).model_dump_json())
    del data["reward"]  # a run.json written before the reward was recorded
    back = RunConfig.model_validate_json(json.dumps(data))
    assert back.reward == RewardConfig()
    assert back.reward.preset == "default" and back.reward.name == "default"
    assert reward_for(grade(eager=2.0), back.reward) == pytest.approx(1.5)


def test_run_config_reward_without_preset_reads_back_as_default() -> None:
    # A run made before presets existed recorded the default's fields without "preset".
    data = json.loads(run_config().model_dump_json())
    data["reward"] = {"correct": 1.0, "speedup_weight": 0.5, "max_log2_speedup": 3.0, "failed": 0.0, "infra": 0.0, "rejected": -1.0}
    back = RunConfig.model_validate_json(json.dumps(data))
    assert back.reward == RewardConfig() and back.reward.name == "default"


def test_a_fast_pass_under_fast_p_must_still_beat_a_failure() -> None:
    with pytest.raises(ValidationError, match="faster than p"):
        RewardConfig(preset="kernelbench-fast-p", correct=-1.0, failed=0.0)


@pytest.mark.parametrize("p", [1.23456789, 1e-05, 2.0])
def test_a_fast_p_name_reads_back_as_the_same_p(p: float) -> None:
    config = RewardConfig(preset="kernelbench-fast-p", fast_p=p)
    assert RewardConfig(preset=config.name).fast_p == p


# ---------------------------------------------------------------- fail closed: no provokable status beats a wrong answer

# Every preset by name, kernelbench-fast-P variants included (iterated, never hand-picked).
ALL_PRESETS = [*preset_names(), "kernelbench-fast-1.5", "kernelbench-fast-2"]


def test_provokable_statuses_are_every_status_but_a_pass_and_a_wrong_answer() -> None:
    assert set(PROVOKABLE) == set(Status) - {Status.passed, Status.wrong_answer}


@pytest.mark.parametrize("name", ALL_PRESETS)
def test_no_provokable_status_pays_more_than_a_wrong_answer(name: str) -> None:
    config = RewardConfig(preset=name)
    wrong = reward_for(grade(Status.wrong_answer), config)
    for status in PROVOKABLE:
        # The payout the table shows is what a grade of that status earns (with or without a mask).
        payout = reward_for(grade(status), config)
        assert payout == status_payout(config, status), (name, status)
        assert payout <= wrong, (name, status, payout, wrong)
        assert reward_for(grade(status, flags=["f"]), config) <= wrong, (name, status)
    # A degenerate task's infra_error (masked) too, and a timeout the witness ran into.
    degenerate = grade(Status.infra_error).model_copy(update={"degenerate_task": "float32 public #1: nontrivial: zeros pass"})
    assert reward_for(degenerate, config) <= wrong


def test_payout_table_covers_every_preset_and_status() -> None:
    table = payout_table()
    assert list(table) == preset_names()
    for name, payouts in table.items():
        assert list(payouts) == [Status.wrong_answer, *PROVOKABLE]
        assert max(payouts.values()) == payouts[Status.wrong_answer], name
    assert table["kernrl"][Status.infra_error] == -0.25  # was 0 (above its wrong answer's -0.25) before the rule


@pytest.mark.parametrize(
    ("overrides", "status"),
    [
        ({"infra": 0.5}, "infra_error"),
        ({"preset": "kernrl", "infra": 0.0}, "infra_error"),
        ({"preset": "kernelgym", "infra": 0.3}, "infra_error"),
        ({"compile_failed": 0.2}, "compile_error"),
        ({"preset": "kernelgym", "compile_failed": 0.2}, "compile_error"),
        ({"failed": -2.0}, "rejected"),
    ],
)
def test_a_config_paying_a_provokable_status_above_a_wrong_answer_is_refused(overrides: dict[str, object], status: str) -> None:
    with pytest.raises(ValidationError, match=f"{status} would earn .* more than wrong_answer"):
        RewardConfig.model_validate(overrides)


def test_infra_follows_failed_and_an_explicit_copy_reads_as_the_default() -> None:
    assert RewardConfig(preset="kernelbench-fast-p", failed=-0.5).infra is None  # rejected -1 <= -0.5: allowed
    assert RewardConfig(failed=-0.5, rejected=-1.0).model_copy().infra is None
    assert reward_for(grade(Status.infra_error), RewardConfig(failed=-0.5, correct=1.0)) == -0.5
    assert RewardConfig(infra=0.0) == RewardConfig()  # infra given as failed: the default
    assert RewardConfig(preset="kernelgym", infra=0.0) == RewardConfig(preset="kernelgym")


def test_a_run_recorded_with_the_old_kernrl_infra_still_reads() -> None:
    data = json.loads(run_config().model_dump_json())
    data["reward"] = {**RewardConfig(preset="kernrl").model_dump(), "infra": 0.0}
    back = RunConfig.model_validate_json(json.dumps(data))
    assert back.reward == RewardConfig(preset="kernrl")


def test_masked_only_for_an_infra_error_without_integrity_flags() -> None:
    assert is_masked(grade(Status.infra_error))
    assert grade(Status.infra_error).masked
    assert not is_masked(grade(Status.infra_error, flags=["input_mutated:x"]))
    for status in (Status.passed, *FAILURES, Status.rejected):
        assert not is_masked(grade(status)), status
    # An infra_error a producer marked as the submission's doing is not masked, and stays paid as a failure.
    caused = grade(Status.infra_error).model_copy(update={"masked": False})
    assert not is_masked(caused)
    # A stale mask on a status changed by model_copy never masks a non-infra grade.
    assert not is_masked(grade(Status.infra_error).model_copy(update={"status": Status.wrong_answer}))
    # Older results (no `masked` key) read the same.
    data = json.loads(grade(Status.infra_error).model_dump_json())
    del data["masked"]
    assert GradeResult.model_validate(data).masked


def test_the_rl_docs_payout_table_is_the_presets() -> None:
    """docs/guide/rl/index.md's table, row for row, is payout_table() (the same lines build_docs generates)."""
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    sys.path.insert(0, str(root / "scripts"))
    try:
        import build_docs
    finally:
        sys.path.remove(str(root / "scripts"))
    text = (root / "docs" / "guide" / "rl" / "index.md").read_text()
    for line in build_docs.payout_lines():
        assert line in text, line
