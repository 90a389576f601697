"""Build the docs site: the hand-written pages of docs/ plus reference pages generated from the code.

    .venv/bin/python scripts/build_docs.py            # what `make docs` runs: build/docs/index.html
    .venv/bin/python scripts/build_docs.py --no-build # only write the sources (build/docs-src)

The reference cannot drift from the code because it is made from it at every build: the CLI from
the typer app, the GradeResult and every wire model from the pydantic schemas (their field
descriptions), statuses and reward presets from their enums and tables, task.toml from TaskSpec,
the environment variables from every `KGYM_*` name the code contains (a name without a
description here fails the build), the torch policy from its table, one page per shipped task,
and the Python API from the docstrings (mkdocstrings). The site is built with
`mkdocs build --strict`: a broken link, or a page outside the nav, fails it.
"""

from __future__ import annotations

import argparse
import inspect
import os
import re
import shutil
import subprocess
import sys
import types
import typing
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from pydantic import BaseModel  # noqa: E402

from gym import settings  # noqa: E402

SOURCE = ROOT / "build" / "docs-src"
SITE = ROOT / "build" / "docs"

# Every KGYM_* variable, from gym.settings (the gym's own and those only the tests and scripts read).
VARIABLES = {**settings.VARIABLES, **settings.TEST_VARIABLES}

# The public modules whose docstrings make the Python API reference.
API_MODULES = [
    "gym.grading.grader",
    "gym.execution.executor",
    "gym.harness.env",
    "gym.harness.reward",
    "gym.harness.runner",
    "gym.serve.client",
    "gym.tasks.loader",
    "gym.grading.options",
    "gym.settings",
    "gym.errors",
]


def _cell(text: Any) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ").strip()


# ---------------------------------------------------------------- the CLI


def cli_page() -> str:
    import typer.main

    from gym.cli import app

    root = typer.main.get_command(app)
    lines = ["# CLI reference", "", "Every `kgym` command and option, generated from the typer app (`kgym COMMAND --help` says the same).", ""]

    def describe(command: Any, title: str, text: str) -> None:
        lines.extend([f"## `{title}`", "", text, ""])
        arguments = [param for param in command.params if getattr(param, "param_type_name", "") == "argument"]
        options = [param for param in command.params if getattr(param, "param_type_name", "") == "option" and param.name != "help"]
        if arguments:
            lines.append("Arguments: " + ", ".join(f"`{str(param.name).upper()}`" for param in arguments))
            lines.append("")
        if options:
            lines.extend(["| option | default | what it does |", "| --- | --- | --- |"])
            for option in options:
                flags = ", ".join(f"`{flag}`" for flag in [*option.opts, *option.secondary_opts])
                default = "" if option.default in (None, False, ()) or callable(option.default) else f"`{option.default}`"
                envvar = f" (env `{option.envvar}`)" if option.envvar else ""
                lines.append(f"| {flags} | {_cell(default)} | {_cell(option.help or '')}{envvar} |")
            lines.append("")

    def walk(command: Any, path: list[str]) -> None:
        # typer's own click (typer._click) or click itself: a group is whatever has subcommands.
        if hasattr(command, "commands"):
            for name in sorted(command.commands):
                walk(command.commands[name], [*path, name])
            return
        describe(command, "kgym " + " ".join(path), inspect.cleandoc(command.help or ""))

    describe(root, "kgym", "Options every command takes, given before it (`kgym --tasks DIR grade ...`).")
    walk(root, [])
    return "\n".join(lines)


def cli_commands() -> list[str]:
    """Every command path of the CLI ("grade", "leaderboard build", ...)."""
    import typer.main

    from gym.cli import app

    found: list[str] = []

    def walk(command: Any, path: list[str]) -> None:
        if hasattr(command, "commands"):
            for name, child in command.commands.items():
                walk(child, [*path, name])
        elif path:
            found.append(" ".join(path))

    walk(typer.main.get_command(app), [])
    return sorted(found)


# ---------------------------------------------------------------- pydantic models


def _type_name(annotation: Any) -> str:
    origin = typing.get_origin(annotation)
    if origin in (typing.Union, types.UnionType):
        return " \\| ".join(_type_name(arg) for arg in typing.get_args(annotation))
    if origin is typing.Literal:
        return " \\| ".join(repr(arg) for arg in typing.get_args(annotation))
    if origin is not None:
        args = ", ".join(_type_name(arg) for arg in typing.get_args(annotation))
        return f"{getattr(origin, '__name__', str(origin))}[{args}]"
    if annotation is type(None):
        return "null"
    return getattr(annotation, "__name__", str(annotation))


def _nested(annotation: Any) -> Iterable[type[BaseModel]]:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        yield annotation
    for arg in typing.get_args(annotation):
        yield from _nested(arg)


def model_section(model: type[BaseModel], level: int = 2) -> list[str]:
    # Only the model's own docstring (an inherited one is pydantic's BaseModel's).
    doc = inspect.cleandoc(model.__dict__.get("__doc__") or "").replace("\n", " ")
    lines = [f"{'#' * level} `{model.__name__}`", "", f"`{model.__module__}.{model.__name__}`" + (f": {doc}" if doc else ""), ""]
    lines.extend(["| field | type | default | description |", "| --- | --- | --- | --- |"])
    for name, info in model.model_fields.items():
        required = info.is_required()
        default = "required" if required else ("" if info.default_factory is not None else f"`{info.default!r}`")
        lines.append(f"| `{name}` | {_type_name(info.annotation)} | {_cell(default)} | {_cell(info.description or '')} |")
    lines.append("")
    return lines


def models_page(title: str, intro: str, roots: list[type[BaseModel]]) -> str:
    seen: list[type[BaseModel]] = []
    queue = list(roots)
    while queue:
        model = queue.pop(0)
        if model in seen:
            continue
        seen.append(model)
        for info in model.model_fields.values():
            queue.extend(_nested(info.annotation))
    lines = [f"# {title}", "", intro, ""]
    for model in seen:
        lines.extend(model_section(model))
    return "\n".join(lines)


def wire_models() -> list[type[BaseModel]]:
    """Every pydantic model the gym's serialised boundaries define."""
    import importlib
    import pkgutil

    import gym.schema

    modules = [f"gym.schema.{info.name}" for info in pkgutil.iter_modules(gym.schema.__path__)]
    modules += ["gym.worker.protocol", "gym.worker.witness_protocol", "gym.harness.run_folder", "gym.harness.reward", "gym.grading.options"]
    found: list[type[BaseModel]] = []
    for name in modules:
        module = importlib.import_module(name)
        for value in vars(module).values():
            if isinstance(value, type) and issubclass(value, BaseModel) and value.__module__ == name and value not in found and value.model_fields:
                found.append(value)
    return found


# ---------------------------------------------------------------- statuses, rewards, task.toml, variables, policy


def payout_lines() -> list[str]:
    """Each reward preset's payout per non-passing status, as a markdown table (gym.harness.reward.payout_table)."""
    from gym.harness.reward import payout_table

    table = payout_table()
    statuses = list(next(iter(table.values())))
    lines = ["| preset | " + " | ".join(f"`{status.value}`" for status in statuses) + " |", "| --- |" + " --- |" * len(statuses)]
    lines.extend(f"| `{name}` | " + " | ".join(f"{payouts[status]:g}" for status in statuses) + " |" for name, payouts in table.items())
    return lines


def statuses_page() -> str:
    from gym.harness.reward import PRESET_SOURCES, PRESETS, RETURN_PRESETS, RewardConfig
    from gym.schema.result import Status

    lines = ["# Statuses and rewards", "", "Every grade ends in one status; the reward is a function of the grade (`gym.harness.reward`).", ""]
    lines.extend(["| status |", "| --- |"])
    lines.extend(f"| `{status.value}` |" for status in Status)
    lines.extend(["", "## Reward presets", "", "| preset | formula and source | fields it sets |", "| --- | --- | --- |"])
    for name, values in PRESETS.items():
        fields = ", ".join(f"`{key}` = {value:g}" for key, value in values.items()) or "the defaults"
        lines.append(f"| `{name}` | {_cell(PRESET_SOURCES[name])} | {fields} |")
    lines.extend(
        [
            "",
            "## Payout per status",
            "",
            "No status a submission can provoke pays more than `wrong_answer` (validated); a masked",
            "`infra_error` is dropped by the RL adapters (`GradeResult.masked`).",
            "",
        ]
    )
    lines.extend(payout_lines())
    lines.extend(["", "## Episode returns", "", "| return | aggregate | discount |", "| --- | --- | --- |"])
    lines.extend(f"| `{name}` | {values['aggregate']} | {values['discount']:g} |" for name, values in RETURN_PRESETS.items())
    lines.append("")
    lines.extend(model_section(RewardConfig))
    return "\n".join(lines)


def task_toml_page() -> str:
    from gym.tasks.model import TaskSpec

    return models_page(
        "task.toml",
        "Every key a task file may hold, generated from `gym.tasks.model.TaskSpec` and the models it nests "
        "(a key not listed here is refused when the task loads).",
        [TaskSpec],
    )


def variables_in_code() -> list[str]:
    names: set[str] = set()
    for path in [*ROOT.joinpath("gym").rglob("*.py"), ROOT / "kernel_gym.py"]:
        names.update(re.findall(r"\bKGYM_[A-Z0-9_]+\b", path.read_text(encoding="utf-8")))
    return sorted(names)


def variables_page() -> str:
    names = variables_in_code()
    missing = [name for name in names if name not in VARIABLES]
    if missing:
        raise SystemExit(f"scripts/build_docs.py: add these environment variables to gym/settings.py: {', '.join(missing)}")
    lines = [
        "# Environment variables",
        "",
        "Every `KGYM_*` variable the gym reads, from `gym.settings` (the one module that reads them; an empty value counts as unset).",
        "",
        "| variable | type | when unset | what it does |",
        "| --- | --- | --- | --- |",
    ]
    lines.extend(f"| `{v.name}` | {v.kind} | {_cell(v.default)} | {_cell(v.description)} |" for v in settings.VARIABLES.values())
    lines += ["", "## Read only by the tests and the scripts", "", "| variable | type | when unset | what it does |", "| --- | --- | --- | --- |"]
    lines.extend(f"| `{v.name}` | {v.kind} | {_cell(v.default)} | {_cell(v.description)} |" for v in settings.TEST_VARIABLES.values())
    return "\n".join(lines) + "\n"


def policy_page() -> str:
    from gym.worker.torch_policy import prompt_lines

    body = "\n".join(prompt_lines())
    return (
        "# The torch policy\n\nWhat a submission may call in torch, from `gym.worker.torch_policy` (the audit, the run-time "
        "tripwires and every prompt read the same table). A task may allow more (its anchor ops); `kgym show TASK` prints "
        f"the policy of one task.\n\n```text\n{body}\n```\n"
    )


def api_page() -> str:
    lines = ["# Python API", "", "From the docstrings of the public modules.", ""]
    for module in API_MODULES:
        lines.extend([f"## `{module}`", "", f"::: {module}", "    options:", "      heading_level: 3", "      show_root_heading: false", ""])
    return "\n".join(lines)


# ---------------------------------------------------------------- the task catalogue


def task_pages() -> dict[str, str]:
    from gym.tasks.loader import discover
    from gym.tasks.references import reference_source

    pages: dict[str, str] = {}
    rows = ["# Task catalogue", "", "Every shipped task, one page each.", "", "| task | title | split | contract |", "| --- | --- | --- | --- |"]
    for task in sorted((task for task in discover().tasks if task.has_solution), key=lambda task: task.id):
        spec = task.spec
        slug = task.id.replace("/", "-")
        contract = ", ".join(entry.kind for entry in spec.contract)
        rows.append(f"| [`{task.id}`]({slug}.md) | {_cell(spec.title)} | {task.split} | {contract} |")
        shapes = spec.shapes
        lines = [
            f"# `{task.id}`: {spec.title}",
            "",
            spec.description.strip(),
            "",
            f"- version {spec.version}, split `{task.split}`",
            f"- parameters: {', '.join(f'`{name}`' for name in spec.params)}; dtypes: {', '.join(spec.dtypes)}",
            f"- public shapes: {', '.join(str(dict(shape)) for shape in shapes.public)}; benchmark shapes: {', '.join(str(dict(shape)) for shape in shapes.bench) or 'none'}",
            f"- hidden shapes: {len(shapes.hidden)} (never shown)",
            f"- contract: {contract}",
        ]
        if spec.min_bytes:
            lines.append(f"- minimum bytes: `{spec.min_bytes}`; minimum FLOPs: `{spec.min_flops or 'unknown'}`")
        lines.extend(["", "## Reference", "", "```python", reference_source(task).rstrip(), "```", ""])
        lines.extend(["## Shipped solution", "", "```python", task.solution_path.read_text(encoding="utf-8").rstrip(), "```", ""])
        lines.append(
            f"Its figures: `.venv/bin/python scripts/bench_traffic.py --tasks {task.id}` (traffic ratio, modelled speedups) and `kgym grade {task.id} tasks/{task.id}/solution.py`."
        )
        pages[f"reference/tasks/{slug}.md"] = "\n".join(lines) + "\n"
    pages["reference/tasks/index.md"] = "\n".join(rows) + "\n"
    return pages


# ---------------------------------------------------------------- assembling the site


def generated_pages() -> dict[str, str]:
    from gym.schema.result import GradeResult

    pages = {
        "reference/cli.md": cli_page(),
        "reference/grade-result.md": models_page(
            "GradeResult", "The one result every grade returns (`gym.schema.result.GradeResult`), with every model it nests.", [GradeResult]
        ),
        "reference/wire-models.md": models_page(
            "Wire models", "Every pydantic model at a serialised boundary: HTTP and WebSocket messages, records, the worker's files.", wire_models()
        ),
        "reference/statuses-and-rewards.md": statuses_page(),
        "reference/task-toml.md": task_toml_page(),
        "reference/environment.md": variables_page(),
        "reference/torch-policy.md": policy_page(),
        "reference/api.md": api_page(),
        "reference/leaderboard-json.md": (ROOT / "leaderboard" / "README.md").read_text(encoding="utf-8"),
    }
    pages.update(task_pages())
    return pages


def write_sources(source: Path = SOURCE, site: Path = SITE) -> Path:
    """Write the site's sources into `source` and the mkdocs config that builds them into `site`; the config's path."""
    if source.exists():
        shutil.rmtree(source)
    shutil.copytree(ROOT / "docs", source)
    pages = generated_pages()
    for name, text in pages.items():
        path = source / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    config = yaml.safe_load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"))
    task_nav = [{"Catalogue": "reference/tasks/index.md"}] + [
        {name.removeprefix("reference/tasks/").removesuffix(".md").replace("-", "/", 1): name}
        for name in sorted(pages)
        if name.startswith("reference/tasks/") and not name.endswith("index.md")
    ]
    for section in config["nav"]:
        if isinstance(section, dict) and "Reference" in section:
            section["Reference"].append({"Tasks": task_nav})
    config["docs_dir"] = str(source)
    config["site_dir"] = str(site)
    generated = source.parent / f"{source.name}.mkdocs.yml"
    generated.write_text(yaml.safe_dump(config, sort_keys=False), encoding="utf-8")
    return generated


def build(config: Path) -> None:
    environment = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    done = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "-f", str(config)], cwd=ROOT, check=False, env=environment, capture_output=True, text=True
    )
    problems = [line for line in done.stderr.splitlines() if line.startswith(("WARNING", "ERROR"))]
    if done.returncode != 0:
        raise SystemExit(f"mkdocs build --strict failed (exit {done.returncode}):\n" + "\n".join(problems or done.stderr.splitlines()[-20:]))


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--no-build", action="store_true", help="only write the sources")
    parser.add_argument("--src", type=Path, default=SOURCE, help="where the sources are written (default build/docs-src)")
    parser.add_argument("--site", type=Path, default=SITE, help="where the site is built (default build/docs)")
    args = parser.parse_args()
    config = write_sources(args.src.resolve(), args.site.resolve())
    if not args.no_build:
        build(config)
        print(f"built {args.site.resolve() / 'index.html'}")


if __name__ == "__main__":
    main()
