"""The task prompt an agent sees (`kgym show`): never mentions hidden shapes."""

from __future__ import annotations

import inspect
from typing import Any

import torch

from gym.contracts import CheckBase
from gym.schema.result import DSLS, Dsl
from gym.tasks.inputs import generate_inputs, public_seed
from gym.tasks.model import Task
from gym.tasks.prompt_args import call_lines, describe_calls, describe_layout, differentiates
from gym.tasks.references import as_output_list, call_args, reference_fn, reference_source
from gym.worker.dtypes import dtype_from_name, dtype_name
from gym.worker.interpreter.shim import INTERPRETER_LIMITS
from gym.worker.torch_policy import prompt_lines

SUBMISSION_EXAMPLE = """import torch, triton, triton.language as tl

@triton.jit
def _add(x, y, out, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(out + offs, tl.load(x + offs, mask=m) + tl.load(y + offs, mask=m), mask=m)

def kernel(x, y):
    out = torch.empty_like(x)
    n = x.numel()
    _add[(triton.cdiv(n, 1024),)](x, y, out, n, BLOCK=1024)
    return out"""


HELION_EXAMPLE = """import torch, helion, helion.language as hl

@helion.kernel(config=helion.Config(block_sizes=[1024], num_warps=4))
def add(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    out = torch.empty_like(x)
    for tile in hl.tile(out.size()):      # device code: lowered to one Triton kernel
        out[tile] = x[tile] + y[tile]
    return out

def kernel(x, y):
    return add(x, y)"""

# What a Helion submission must know (gym.worker.helion_dsl, gym.worker.launched_modules; docs/guide/helion.md).
HELION_RULES = (
    "Each `@helion.kernel` pins exactly one config (`config=helion.Config(...)`): a kernel with no config, several configs or "
    "`force_autotune` would autotune and is refused as a compile_error that says how to pin one.",
    "Inside a Helion kernel, the body of each `hl.tile` / `hl.grid` loop is device code: the torch operations there are what "
    "Helion lowers to Triton, and they are your kernel. Everything outside those loops (the Helion kernel's own host lines "
    "and `kernel(...)`) is host code and falls under the torch policy above: allocation, views and launch plumbing only.",
    "What is graded is the Triton Helion generates: the witness replays each launch from the generated source, which passes "
    "the same kernels-file rules as hand-written Triton. Helion's eager reference mode (HELION_INTERPRET=1, ref_mode) "
    "launches no Triton and fails as torch compute.",
    "Helion specialises on shapes: each new shape compiles once, in an untimed warm-up; compile time is never timed.",
)
HELION_CPU_LIMITS = (
    "Helion lowers for the Triton backend only; persistent program-id types (`pid_type='persistent_blocked'` / "
    "`'persistent_interleaved'`) run with the fake device's 132 SMs.",
)


def helion_lines() -> list[str]:
    """The Helion submission section: the format, its example and its rules."""
    lines = ["## Submission format (Helion)", ""]
    lines.append("One Python file that imports helion and defines `kernel(...)` calling your `@helion.kernel` functions, for example:")
    lines += ["", "```python", HELION_EXAMPLE, "```", "", "Rules:"]
    lines += [f"- {rule}" for rule in HELION_RULES]
    return lines


def describe_check(check: CheckBase) -> str:
    doc = (inspect.getdoc(type(check)) or "").splitlines()[0] if inspect.getdoc(type(check)) else ""
    scope = f" [dtypes: {', '.join(check.dtypes)}]" if check.dtypes else ""
    return f"`{check.describe()}`{scope}: {doc}"


def describe_value(value: object, *, layout: bool = False) -> str:
    """One argument or output: a tensor's dtype and shape (and with `layout`, its strides in words), else its type and value."""
    if isinstance(value, torch.Tensor):
        return f"tensor {dtype_name(value.dtype)} {list(value.shape)}" + (f", {describe_layout(value)}" if layout else "")
    return f"{type(value).__name__} = {value!r}"


def _example(task: Task) -> tuple[dict[str, Any], list[Any], bool]:
    """The inputs and the reference's outputs on the first public shape and dtype (is_tuple: a tuple returned)."""
    dtype = dtype_from_name(task.spec.dtypes[0])
    shape = task.spec.shapes.public[0]
    inputs = generate_inputs(task, shape, dtype, public_seed(task.id, task.spec.dtypes[0], "public", 0), torch.device("cpu"))
    outputs, is_tuple = as_output_list(reference_fn(task, shape)(*call_args(inputs, task.spec.params)))
    return inputs, outputs, is_tuple


def example_io(task: Task, example: tuple[dict[str, Any], list[Any], bool] | None = None) -> list[str]:
    """Arguments (with their layouts) and return value on the first public shape and dtype."""
    inputs, outputs, is_tuple = example or _example(task)
    lines = [f"For public shape {task.spec.shapes.public[0]} and dtype {task.spec.dtypes[0]}:"]
    lines += [f"- `{name}`: {describe_value(value, layout=True)}" for name, value in inputs.items()]
    if is_tuple:
        lines.append("- returns a tuple: (" + ", ".join(describe_value(o) for o in outputs) + ")")
    else:
        lines.append(f"- returns {describe_value(outputs[0])}")
    strided = [name for name, value in inputs.items() if isinstance(value, torch.Tensor) and not value.is_contiguous()]
    if strided:
        lines.append(
            f"- {', '.join(f'`{name}`' for name in strided)} arrive{'s' if len(strided) == 1 else ''} with the strides shown, not contiguous: "
            "read them through their strides (a copy to contiguous memory is work your kernels pay for)"
        )
    elif any(isinstance(value, torch.Tensor) for value in inputs.values()):
        lines.append("- every tensor argument arrives contiguous (row-major)")
    return lines


def interpreter_lines(dsl: Dsl = "triton") -> list[str]:
    """The section listing what CPU (interpreter) grading cannot do like a GPU."""
    lines = ["## CPU grading (Triton interpreter)", ""]
    lines.append("There is no GPU here: your kernels are graded under Triton's CPU interpreter (TRITON_INTERPRET=1). Known limits:")
    lines += [f"- {limit}" for limit in INTERPRETER_LIMITS]
    if dsl == "helion":
        lines += [f"- {limit}" for limit in HELION_CPU_LIMITS]
    return lines


MODELNEW_EXAMPLE = """import torch, torch.nn as nn, triton, triton.language as tl

@triton.jit
def _relu(x, out, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(out + offs, tl.maximum(tl.load(x + offs, mask=m), 0.0), mask=m)

class ModelNew(nn.Module):
    def __init__(self, *init_inputs):          # the same constructor as Model
        super().__init__()                    # declare the same parameters/buffers as Model, same names
    def forward(self, x):                     # the same inputs as Model.forward
        x = x.contiguous()
        out = torch.empty_like(x)
        _relu[(triton.cdiv(x.numel(), 1024),)](x, out, x.numel(), BLOCK=1024)
        return out"""


def kernelbench_lines(task: Task) -> list[str]:
    """The sections only an imported KernelBench task has: both submission formats and the torch policy."""
    from gym.tasks.kernelbench.problem import init_inputs
    from gym.tasks.kernelbench.runtime import problem_at, state_params

    source = task.spec.kernelbench
    assert source is not None
    shape = task.spec.shapes.public[0]
    state = state_params(task)
    lines = ["## Submission formats (either one)", ""]
    lines.append(
        f"(a) `def kernel({', '.join(task.spec.params)})`: Model.forward's inputs ({', '.join(source.forward_inputs) or 'none'})"
        + (f" followed by the Model's parameters and buffers ({', '.join(state)}), each the state_dict entry named below" if state else "")
        + "; return what Model.forward returns."
    )
    for name in state:
        lines.append(f"    - `{name}` is `{source.state[name]}`")
    lines += [
        "",
        "(b) KernelBench's format: `class ModelNew(nn.Module)` with Model's constructor signature and forward. The grader builds "
        "`ModelNew(*get_init_inputs())` inside the sandbox, then loads the reference Model's parameters and buffers into it by "
        "state_dict name before each call (your own initial values are overwritten): declare the same names and shapes, or the "
        "grade is a compile_error naming the mismatch. Only forward is timed; autograd is off.",
        f"    - constructor arguments at the first public shape: `{init_inputs(problem_at(task, shape))!r}`",
        "",
        "## Torch policy",
        "",
    ]
    if task.spec.allowed_torch:
        lines.append(
            "These heavy anchor ops of the reference may stay in torch; every other op must run in your Triton kernels, and at least "
            "one Triton kernel must launch per call: " + ", ".join(f"`{op}`" for op in source.anchors or task.spec.allowed_torch)
        )
    else:
        lines.append("The whole op must run in your Triton kernels: torch only for allocation, views and launch plumbing.")
    lines += ["", "Example of format (b) for an elementwise problem:", "", "```python", MODELNEW_EXAMPLE, "```"]
    return lines


def render_prompt(task: Task, *, cpu: bool | None = None, dsl: Dsl = "triton") -> str:
    """The prompt; `cpu` (default: torch.cuda is unavailable) adds the interpreter's known limits; `dsl`
    ("triton" or "helion") is the kernel language the submission format section asks for."""
    if cpu is None:
        cpu = not torch.cuda.is_available()
    if dsl not in DSLS:
        raise ValueError(f"dsl must be one of {', '.join(DSLS)}, not {dsl!r}")
    spec = task.spec
    if spec.kernelbench is not None:
        return _render_kernelbench(task, cpu, dsl)
    lines = [f"# {spec.id} (version {spec.version}): {spec.title}", "", spec.description.strip(), ""]
    lines += ["## Signature", "", f"Write `def kernel({', '.join(spec.params)})` with the same return structure as the reference.", ""]
    lines += example_io(task) + [""]
    lines += ["## Reference (the spec)", "", "```python", reference_source(task).rstrip(), "```"]
    if spec.options:
        bound = ", ".join(f"{key} = {value!r}" for key, value in spec.options.items())
        lines += ["", f"Options bound into the reference for this task: {bound}. Your kernel implements this variant."]
    if spec.stage_names:
        lines += ["", "## Stages", "", describe_stage_form(spec.stage_names)]
    lines += ["", "## Shapes", ""]
    lines += [f"- {shape}" for shape in spec.shapes.public]
    if spec.shapes.hidden:
        lines.append("- plus hidden shapes you are not shown: do not specialise to the sizes above")
    lines += ["", "## Dtypes", "", ", ".join(spec.dtypes) + (f" (GPU only: {', '.join(spec.gpu_only_dtypes)})" if spec.gpu_only_dtypes else "")]
    lines += ["", "## Contract (every check must hold on every trial)", ""]
    lines += [f"- {describe_check(check)}" for check in spec.contract]
    kernels = "your @triton.jit kernels" if dsl == "triton" else "your Helion kernels' device loops (lowered to Triton)"
    lines += ["", "## Allowed torch calls", "", f"Allocation, views and launch plumbing only; the computation must happen in {kernels}:"]
    lines += [f"- {line}" for line in prompt_lines(spec.allowed_torch)]
    if dsl == "helion":
        lines += ["", *helion_lines()]
    else:
        lines += [
            "",
            "## Submission format",
            "",
            "One Python file defining `kernel(...)` that launches your Triton kernels, for example:",
            "",
            "```python",
            SUBMISSION_EXAMPLE,
            "```",
        ]
    if cpu:
        lines += ["", *interpreter_lines(dsl)]
    return "\n".join(lines) + "\n"


def _render_kernelbench(task: Task, cpu: bool, dsl: Dsl = "triton") -> str:
    spec = task.spec
    source = spec.kernelbench
    assert source is not None
    lines = [f"# {spec.id} (version {spec.version}): {spec.title}", "", spec.description.strip(), ""]
    lines += ["## Reference (the spec): the KernelBench problem file", "", f"From `{source.source_path}` (sha256 {source.sha256[:12]}).", ""]
    lines += ["```python", reference_source(task).rstrip(), "```", ""]
    example = _example(task)
    lines += example_io(task, example) + [""]
    tensors = {name for name, value in example[0].items() if isinstance(value, torch.Tensor)}
    problem = reference_source(task)
    calls = call_lines(describe_calls(problem, tensors & set(source.forward_inputs)), backward=differentiates(problem))
    lines += calls + ([""] if calls else [])
    lines += ["## Shapes", "", "The problem's module-level sizes are set to these values (everything else as in the file):", ""]
    lines += [f"- {shape}" for shape in spec.shapes.public]
    if spec.shapes.hidden:
        lines.append("- plus hidden shapes you are not shown: do not specialise to the sizes above")
    if spec.shapes.bench:
        lines.append(f"- on a GPU, timing runs at the problem's own sizes: {spec.shapes.bench[0]}")
    lines += ["", "## Contract (every check must hold on every trial)", ""]
    lines += [f"- {describe_check(check)}" for check in spec.contract]
    lines += [""] + kernelbench_lines(task)
    if dsl == "helion":
        lines += ["", *helion_lines(), "- With Helion, use format (a): `kernel(...)` calling your Helion kernels."]
    if cpu:
        lines += ["", *interpreter_lines(dsl)]
    return "\n".join(lines) + "\n"


def describe_stage_form(names: list[str]) -> str:
    """The prompt's paragraph on the optional stage form (gym.grading.judging.stages compares the stages a submission returns)."""
    listed = ", ".join(f"`{name}`" for name in names)
    return (
        f"This block is written as named stages: {listed}. Optionally return your outputs followed by one tensor per "
        f"stage, in this order: `(outputs..., {', '.join(names)})`. The grade is still on the outputs alone, but a failing "
        "grade then names the first stage that goes outside the contract (each compared with the block run in float64 "
        "on the same inputs)."
    )
