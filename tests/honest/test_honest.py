"""The honest corpus (tests/honest/): no honest submission may be refused.

Each `*.py` here (other than this module) is an honest, correct Triton kernel
for one shipped task, written in the style of a public Triton code base and
using idioms real kernel code uses (autotune lists from itertools.product,
lru_cache'd helpers, autograd.Function and nn.Module wrappers, block pointers,
persistent grids, libdevice, version gates, ...). Every file is graded with
the full grader (static audit on, bwrap sandbox) and must pass: a failure is a
false reject, and the assertion message carries the grade's status, integrity
flags, error and feedback. See README.md here for the header and how to add a file.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import pytest

from gym.grading.options import GradeOptions
from gym.grading.grader import grade
from gym.schema.result import Status
from gym.tasks.loader import discover

CORPUS = Path(__file__).resolve().parent
TASKS = {task.id: task for task in discover().tasks}
STYLES = {"Triton tutorials", "Liger-Kernel", "FlagGems", "unsloth", "KernelBench", "Helion examples"}
# A fixed secret keeps a failure reproducible; every file was also checked under other secrets.
SECRET = 4231

# Every idiom a header may name (an `Idioms:` entry starts with one of these keys), with the
# source patterns that must be present for the claim to hold. The corpus as a whole covers all of them.
IDIOMS: dict[str, tuple[str, ...]] = {
    # Helion (issue 40): what Helion's own examples do that the shipped Helion solutions do not.
    "module-level helper called from device code": (r"^def _\w+\(", r"for \w+ in hl\.tile\("),
    "module-level helper called from host code": (r"^def _\w+\(", r"@helion\.kernel\("),
    "hl.register_block_size": (r"hl\.register_block_size\(",),
    "hl.tile with block_size=": (r"hl\.tile\([^)]*block_size=",),
    "reduction loop over tiles with an accumulator": (r"hl\.zeros\(", r"for \w+ in hl\.tile\(\w+\):\n(\s+.*\n)*?\s+for \w+ in hl\.tile\("),
    "hl.specialize": (r"hl\.specialize\(",),
    "two Helion kernels in one file": (r"@helion\.kernel\((.|\n)*@helion\.kernel\(",),
    "torch.nn.functional in device code": (r"\bF\.\w+\(|torch\.nn\.functional\.\w+\(",),
    "itertools.product autotune configs": (r"itertools\.product\(", r"@triton\.autotune\("),
    "functools.lru_cache'd": (r"@functools\.lru_cache\(",),
    "functools.reduce over a shape": (r"functools\.reduce\(operator\.mul, ",),
    "functools.wraps decorator": (r"@functools\.wraps\(",),
    "import operator": (r"^import operator$", r"operator\.\w+"),
    "class used as a namespace of jit functions": (r"^class \w+:", r"^    @triton\.jit"),
    "torch.autograd.Function wrapper called via .apply": (r"\(torch\.autograd\.Function\):", r"\.apply\b"),
    "triton.heuristics": (r"@triton\.heuristics\(",),
    "block pointers": (r"tl\.make_block_ptr\(",),
    "persistent kernel": (r"for \w+ in (tl\.)?range\((tl\.program_id\(0\)|pid|start_pid|row_start), ",),
    "do_not_specialize": (r"@triton\.jit\(do_not_specialize=",),
    "packaging version gate on triton.__version__": (r"^from packaging\.version import Version$", r"triton\.__version__"),
    "torch.cuda.is_available() branch": (r"torch\.cuda\.is_available\(\)",),
    "data_ptr equality": (r"\.data_ptr\(\) == \w+\.data_ptr\(\)",),
    "a parameter called input": (r"def \w+\((self, |ctx, )?input\b",),
    "locals named like builtins": (r"^\s+(compile|open|vars) = ",),
    "torch.reshape function form": (r"torch\.reshape\(",),
    "torch.flatten function form": (r"torch\.flatten\(",),
    "torch.promote_types": (r"torch\.promote_types\(",),
    "getattr(torch, device.type)": (r"getattr\(torch, \w+\.device\.type\)",),
    "libdevice math": (r"from triton\.language\.extra import libdevice", r"libdevice\.\w+\("),
    "a and b on masks": (r"mask = \(.+\) and \(.+\)",),
    "& on masks": (r"mask = \(.+\) & \(.+\)",),
    "float scalar eps.to(tl.float32)": (r"eps\.to\(tl\.float32\)",),
    "torch.nn Module wrapper whose forward launches the kernel": (r"\((torch\.)?nn\.Module\):", r"def forward\(self"),
    "float8 output viewed as uint8": (r"dtype=torch\.float8_e4m3fn", r"\.view\(torch\.uint8\)"),
    "importlib.metadata version gate": (r"^import importlib\.metadata$", r"importlib\.metadata\.version\("),
    "module-level workspace cache": (r"^_WORKSPACE\b.* = \{\}", r"_WORKSPACE\[key\] = torch\.empty"),
    "autotune reset_to_zero on an atomic accumulator": (r"reset_to_zero=\[", r"tl\.atomic_add\("),
    "functools.partial entry point": (r"^kernel = functools\.partial\(",),
    "per-call workspace": (r"^    workspace = torch\.empty\(",),
    "self-resetting semaphore kept between calls": (r"ticket = tl\.atomic_add\(", r"tl\.atomic_xchg\(\w+ \+ \w+, 0"),
    ".item() of a count a kernel computed": (r"tl\.atomic_add\(count_ptr, 1\)", r"= int\(count\.item\(\)\)"),
}


@dataclass(frozen=True)
class Honest:
    path: Path
    style: str
    task_id: str
    idioms: tuple[str, ...]


def _field(doc: str, key: str) -> str | None:
    match = re.search(rf"^{key}:\s*(.+?)\s*$", doc, re.MULTILINE)
    return match.group(1) if match else None


def _split_top_level(text: str) -> list[str]:
    """Split on commas that are not inside parentheses."""
    parts, depth, current = [], 0, ""
    for char in text:
        depth += {"(": 1, ")": -1}.get(char, 0)
        if char == "," and depth == 0:
            parts.append(current.strip())
            current = ""
        else:
            current += char
    parts.append(current.strip())
    return [part for part in parts if part]


def load_honest(path: Path) -> Honest:
    source = path.read_text()
    doc_match = re.match(r'\s*"""(.*?)"""', source, re.DOTALL)
    assert doc_match, f"{path.name}: needs a module docstring"
    doc = doc_match.group(1)
    style, task_id, idioms = _field(doc, "Style"), _field(doc, "Task"), _field(doc, "Idioms")
    assert style and task_id and idioms, f"{path.name}: docstring needs Style:, Task: and Idioms:"
    return Honest(path=path, style=style, task_id=task_id, idioms=tuple(_split_top_level(idioms)))


def idiom_key(idiom: str) -> str | None:
    return next((key for key in IDIOMS if idiom.startswith(key)), None)


CORPUS_FILES = [load_honest(path) for path in sorted(CORPUS.glob("*.py")) if not path.name.startswith("test_")]


# Suite v2 tasks (issue 17) whose honest files, a second independent solution in another style, are still
# to be written: each is graded here only through its shipped solution (tests/tasks/test_suite.py) until then.
HONEST_FILES_PENDING = frozenset(
    {
        "l1/argsort_rows", "l1/dequant_matmul", "l1/dropout_given_uniform", "l1/group_norm", "l1/l2_normalize", "l1/embedding_bag_mean", "l1/embedding_bag_sum",
        "l1/gelu_tanh_backward", "l1/histogram", "l1/index_add_rows", "l1/int4_dequant", "l1/int8_quant_rowwise",
        "l1/layer_norm_backward", "l1/logsumexp", "l1/masked_mean_pool", "l1/residual_rms_norm", "l1/rms_norm_backward", "l1/rope_half_split",
        "l1/rope_interleaved", "l1/segment_sum", "l1/softmax_backward", "l1/swiglu_backward", "l1/tanh_softcap", "l1/token_logprobs",
        "l1/topk_indices", "l2/causal_attention", "l2/causal_conv1d", "l2/fused_linear_cross_entropy", "l2/matmul_batch_invariant", "l2/gqa_paged_decode", "l2/moe_grouped_gemm", "l2/moe_permute", "l2/retrieval_rerank", "l2/rms_norm_batch_invariant",
        "l2/sliding_window_attention", "l2/top_p_mask", "l3/moe_layer", "l3/transformer_block",
    }
)


def test_corpus_is_large_and_well_formed() -> None:
    assert len(CORPUS_FILES) >= 25
    covered: set[str] = set()
    for honest in CORPUS_FILES:
        assert honest.style in STYLES, f"{honest.path.name}: unknown style {honest.style!r} (one of {sorted(STYLES)})"
        assert honest.task_id in TASKS, f"{honest.path.name}: unknown task {honest.task_id}"
        source = honest.path.read_text()
        assert re.search(r"^def kernel\(|^kernel = ", source, re.MULTILINE), f"{honest.path.name}: defines no kernel"
        for idiom in honest.idioms:
            key = idiom_key(idiom)
            assert key, f"{honest.path.name}: idiom {idiom!r} is not one of {sorted(IDIOMS)}"
            for pattern in IDIOMS[key]:
                assert re.search(pattern, source, re.MULTILINE), f"{honest.path.name}: claims {key!r} but has no {pattern!r}"
            covered.add(key)
    assert covered == set(IDIOMS), f"idioms no file exercises: {sorted(set(IDIOMS) - covered)}"
    assert {honest.task_id for honest in CORPUS_FILES} == set(TASKS) - HONEST_FILES_PENDING, "every shipped task has an honest file"

    assert {honest.style for honest in CORPUS_FILES} == STYLES


@pytest.mark.parametrize("honest", CORPUS_FILES, ids=[honest.path.stem for honest in CORPUS_FILES])
def test_honest_submission_passes(honest: Honest) -> None:
    result = grade(TASKS[honest.task_id], honest.path, GradeOptions(sandbox="bwrap"), secret=SECRET)
    assert result.status == Status.passed, (
        f"{honest.path.name} ({honest.task_id}, {honest.style}) was refused: status={result.status.value} "
        f"integrity_flags={result.integrity_flags} error={result.error!r}\n"
        f"idioms: {', '.join(honest.idioms)}\nfeedback:\n{result.feedback[:4000]}"
    )
