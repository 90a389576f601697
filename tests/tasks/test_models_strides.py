"""Model tasks are the model's own calls: inputs are the tensors the model holds and the reference
replays its views, so a transposed weight stays transposed (and the task says so); scaled-down
shapes keep the op's structure (a patchify convolution's kernel stays its stride, a GQA attention's
query heads stay a multiple of its key heads)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import torch

from gym.grading.validation.task_validation import validate_task
from gym.tasks.kernelbench.problem import forward_inputs, instantiate, parse_problem
from gym.tasks.kernelbench.scaling import scale
from gym.tasks.loader import find_task
from gym.tasks.models.architectures import ARCHITECTURES
from gym.tasks.models.fusion import cut_of, pattern, regions
from gym.tasks.models.importer import Traced, _write, forward_candidates, trace_architecture
from gym.tasks.models.render import render_cut


@pytest.fixture(scope="module")
def mistral() -> Traced:
    return trace_architecture(ARCHITECTURES["mistral_7b"], layers=1)[0]


@pytest.fixture(scope="module")
def vit() -> Traced:
    return trace_architecture(ARCHITECTURES["vit_b16"], layers=1)[0]


def _inputs_at(source: str, sizes: dict[str, int]) -> list[torch.Tensor]:
    module = instantiate(source, sizes, "test")
    return [value for value in forward_inputs(module) if isinstance(value, torch.Tensor)]


def _shapes(source: str) -> list[dict[str, int]]:
    scaled = scale(parse_problem(source), "test")
    return [scaled.public, *scaled.hidden, scaled.bench]


def test_a_transposed_weight_stays_transposed(mistral: Traced) -> None:
    # The MLP's up projection: the model multiplies by gate_proj.weight.t(), a (4096, 14336) view with strides (1, 4096).
    graph = mistral.graph
    candidate = next(c for c in forward_candidates(mistral) if c.name == "aten.mm.default" and graph.values[c.cut.outputs[0]].shape == (512, 14336))
    rendered = render_cut(graph, candidate.cut, "doc", "origin")
    # The weight is an input as the model stores it, (14336, 4096), and the reference transposes it.
    assert re.search(r"def forward\(self, x, \w+_weight\)", rendered.source)
    assert "torch.ops.aten.t.default(" in rendered.source
    weight = _inputs_at(rendered.source, {})[1]
    assert tuple(weight.shape) == (14336, 4096)
    assert rendered.layout == ["mm reads (4096, 14336) with stride (1, 4096)"]


def test_the_task_states_the_layout_and_passes_check_tasks(mistral: Traced, tmp_path: Path) -> None:
    graph = mistral.graph
    candidate = next(c for c in forward_candidates(mistral) if c.name == "aten.mm.default" and graph.values[c.cut.outputs[0]].shape == (512, 14336))
    candidate.rendered = render_cut(graph, candidate.cut, "doc", "origin")
    task_id = "models/mistral_7b/mm_test"
    _write(task_id, candidate.rendered.source, candidate, {"mistral_7b": candidate.share}, tmp_path)
    task = find_task(task_id, tasks_root=tmp_path)
    assert "inputs are given contiguous" not in task.spec.description
    assert "mm reads (4096, 14336) with stride (1, 4096)" in task.spec.description and "transposes" in task.spec.description
    check = validate_task(task)
    assert check.ok, check.problems


def test_a_patchify_convolution_keeps_its_kernel_equal_to_its_stride(vit: Traced) -> None:
    candidate = next(c for c in forward_candidates(vit) if c.name == "aten.convolution.default")
    source = render_cut(vit.graph, candidate.cut, "doc", "origin").source
    assert "kernel0 = 16" in source and "(s0, s1, s3 * kernel0, s3 * kernel0)" in source
    for sizes in _shapes(source):
        pixels, weight, _ = _inputs_at(source, sizes)
        assert weight.shape[2:] == (16, 16), sizes
        assert pixels.shape[2] % 16 == 0 and pixels.shape[2] >= 32, sizes


def test_a_gqa_ratio_stays_a_ratio(mistral: Traced) -> None:
    graph = mistral.graph
    attention = next(region for region in regions(graph) if region.sdpa is not None)
    cut = cut_of(graph, attention)
    assert cut is not None and pattern(graph, cut, attention.sdpa) == "masked_attention_gqa"
    source = render_cut(graph, cut, "doc", "origin").source
    # 32 query heads are the 8 key heads times a group of 4 (a constant the scaler never changes).
    assert "s3 = 4" in source and "[1, s2 * s3, s0, s1]" in source
    for sizes in _shapes(source):
        query, keys, _, values = _inputs_at(source, sizes)
        assert query.shape[1] == 4 * keys.shape[1] == 4 * values.shape[1], sizes


def test_a_fused_projections_slices_scale_with_it() -> None:
    # Phi-3 slices its fused QKV projection: the key third ends at 2 x the query's width, at every shape.
    phi3 = trace_architecture(ARCHITECTURES["phi3_mini"], layers=1)[0]
    graph = phi3.graph
    region = next(region for region in regions(graph) if (cut := cut_of(graph, region)) is not None and pattern(graph, cut) == "rotary")
    cut = cut_of(graph, region)
    assert cut is not None
    source = render_cut(graph, cut, "doc", "origin").source
    assert "6144" not in source and ", 2 * s1 * s2 * 2)" in source
    for sizes in _shapes(source)[:2]:
        module = instantiate(source, sizes, "test")
        query, key = module.Model()(*forward_inputs(module))
        assert query.numel() and key.shape == query.shape, sizes
