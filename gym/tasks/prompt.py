"""The task prompt an agent sees (`kgym show`): never mentions hidden shapes."""

from __future__ import annotations

import inspect

import torch

from gym.contracts import CheckBase
from gym.tasks.inputs import generate_inputs, public_seed
from gym.tasks.model import Task
from gym.tasks.references import as_output_list, call_args, reference_fn, reference_source
from gym.worker.dtypes import dtype_from_name, dtype_name
from gym.worker.interpreter_shim import INTERPRETER_LIMITS
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


def describe_check(check: CheckBase) -> str:
    doc = (inspect.getdoc(type(check)) or "").splitlines()[0] if inspect.getdoc(type(check)) else ""
    scope = f" [dtypes: {', '.join(check.dtypes)}]" if check.dtypes else ""
    return f"`{check.describe()}`{scope}: {doc}"


def describe_value(value: object) -> str:
    if isinstance(value, torch.Tensor):
        return f"tensor {dtype_name(value.dtype)} {list(value.shape)}"
    return f"{type(value).__name__} = {value!r}"


def example_io(task: Task) -> list[str]:
    """Arguments and return value on the first public shape and dtype."""
    dtype = dtype_from_name(task.spec.dtypes[0])
    shape = task.spec.shapes.public[0]
    device = torch.device("cpu")
    inputs = generate_inputs(task, shape, dtype, public_seed(task.id, task.spec.dtypes[0], "public", 0), device)
    outputs, is_tuple = as_output_list(reference_fn(task, shape)(*call_args(inputs, task.spec.params)))
    lines = [f"For public shape {shape} and dtype {task.spec.dtypes[0]}:"]
    lines += [f"- `{name}`: {describe_value(value)}" for name, value in inputs.items()]
    if is_tuple:
        lines.append("- returns a tuple: (" + ", ".join(describe_value(o) for o in outputs) + ")")
    else:
        lines.append(f"- returns {describe_value(outputs[0])}")
    return lines


def interpreter_lines() -> list[str]:
    """The section listing what CPU (interpreter) grading cannot do like a GPU."""
    lines = ["## CPU grading (Triton interpreter)", ""]
    lines.append("There is no GPU here: your kernels are graded under Triton's CPU interpreter (TRITON_INTERPRET=1). Known limits:")
    lines += [f"- {limit}" for limit in INTERPRETER_LIMITS]
    return lines


def render_prompt(task: Task, *, cpu: bool | None = None) -> str:
    """The prompt; `cpu` (default: torch.cuda is unavailable) adds the interpreter's known limits."""
    if cpu is None:
        cpu = not torch.cuda.is_available()
    spec = task.spec
    lines = [f"# {spec.id} (version {spec.version}): {spec.title}", "", spec.description.strip(), ""]
    lines += ["## Signature", "", f"Write `def kernel({', '.join(spec.params)})` with the same return structure as the reference.", ""]
    lines += example_io(task) + [""]
    lines += ["## Reference (the spec)", "", "```python", reference_source(task).rstrip(), "```"]
    if spec.options:
        bound = ", ".join(f"{key} = {value!r}" for key, value in spec.options.items())
        lines += ["", f"Options bound into the reference for this task: {bound}. Your kernel implements this variant."]
    lines += ["", "## Shapes", ""]
    lines += [f"- {shape}" for shape in spec.shapes.public]
    if spec.shapes.hidden:
        lines.append("- plus hidden shapes you are not shown: do not specialise to the sizes above")
    lines += ["", "## Dtypes", "", ", ".join(spec.dtypes) + (f" (GPU only: {', '.join(spec.gpu_only_dtypes)})" if spec.gpu_only_dtypes else "")]
    lines += ["", "## Contract (every check must hold on every trial)", ""]
    lines += [f"- {describe_check(check)}" for check in spec.contract]
    lines += ["", "## Allowed torch calls", "", "Allocation, views and launch plumbing only; the computation must happen in your @triton.jit kernels:"]
    lines += [f"- {line}" for line in prompt_lines(spec.allowed_torch)]
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
        lines += ["", *interpreter_lines()]
    return "\n".join(lines) + "\n"
