"""Scaling a problem's sizes for CPU grading: the budget, the problem's own constraints, and the
hidden-shape rule; the original sizes are the benchmark shape."""

from __future__ import annotations

import pytest

from gym.errors import ProblemError
from gym.tasks.kernelbench.problem import parse_problem
from gym.tasks.kernelbench.scaling import PUBLIC_BUDGET, footprint, is_size_name, scale, scale_public
from gym.tasks.model import ShapeSets, hidden_shape_problems

from .conftest import FIXTURES


def scaled(name: str):
    path = next(FIXTURES.glob(f"KernelBench/level*/{name}.py"))
    problem = parse_problem(path.read_text())
    return problem, scale(problem, name)


def test_config_constants_and_small_values_are_never_sizes() -> None:
    assert not any(is_size_name(name, 64) for name in ("kernel_size", "stride", "padding", "dilation", "groups", "num_heads", "k"))
    assert not is_size_name("dim", 1) and not is_size_name("in_channels", 3)
    assert all(is_size_name(name, 4096) for name in ("batch_size", "dim", "in_features", "hidden_dim", "seq_len", "M"))


def test_sizes_shrink_to_the_budget_and_the_original_is_the_bench_shape() -> None:
    problem, result = scaled("1_ReLU")
    assert result.bench == {"batch_size": 16, "dim": 16384}
    assert footprint(problem.source, result.public, "t").elements <= PUBLIC_BUDGET < footprint(problem.source, result.bench, "t").elements


def test_a_divisibility_constraint_survives_scaling() -> None:
    # groups = 8: channel counts must stay multiples of 8 at every shape (halving to 4 would break the problem).
    problem, result = scaled("12_Grouped_conv2d")
    for shape in [result.public, *result.hidden]:
        assert shape["in_channels"] % 8 == 0 and shape["out_channels"] % 8 == 0, shape
        footprint(problem.source, shape, "t")
    # Pushed below what the problem allows, the scaler keeps the constraint and says why it stopped.
    public, notes = scale_public(result.bench, lambda sizes: footprint(problem.source, sizes, "t"), budget=64)
    assert public["in_channels"] % 8 == 0 and public["in_channels"] >= 8
    assert any("in_channels stays" in note and "divisible by groups" in note for note in notes), notes


def test_the_spatial_size_never_drops_below_the_kernel() -> None:
    problem, result = scaled("15_Avg_pool_kernel_vs_spatial")
    assert all(shape["height"] >= 11 and shape["width"] >= 11 for shape in [result.public, *result.hidden])


@pytest.mark.parametrize("name", ["1_ReLU", "4_Linear", "5_Conv2d_standard", "12_Grouped_conv2d", "1_MLP", "2_Residual_block"])
def test_hidden_shapes_obey_the_integrity_rule(name: str) -> None:
    _, result = scaled(name)
    shapes = ShapeSets(public=[result.public], hidden=result.hidden, bench=[result.bench], exempt=result.exempt)
    assert hidden_shape_problems(shapes) == []
    # And one hidden shape is small: the grade's late calls run on the cheapest trial.
    assert min(sum(shape.values()) for shape in result.hidden) < sum(result.public.values())


def test_list_sizes_scale_element_by_element() -> None:
    _, result = scaled("1_MLP")
    assert {"layer_sizes_0", "layer_sizes_1"} <= set(result.public) and result.public["layer_sizes_1"] < 800


def test_a_problem_that_fails_at_its_own_sizes_is_refused() -> None:
    source = (FIXTURES / "KernelBench/level1/1_ReLU.py").read_text().replace("return torch.relu(x)", "return x.view(7, -1, 3)")
    with pytest.raises(ProblemError, match="RuntimeError"):
        scale(parse_problem(source), "broken")
