"""How much real Triton the kernels file keeps (issue 37, target 1), before and after.

Downloads Liger-Kernel 0.8.5 and FlagGems 5.0.2 with pip (`pip download --no-deps`)
into a scratch folder under /tmp (never committed), takes Triton's tutorials from the
installed triton package when it ships them (or from `--tutorials DIR`), and runs
`extract_kernels` over every module that has a `@triton.jit` function: the old
extractor (gym/grading/intake/kernel_source.py at c1c9a0e, loaded from git into a temp
module) and the current one, side by side. Per package: files, files refused (by
construct), jit functions found (every `@triton.jit` definition and `triton.jit(fn)`
call in the file, by qualified name) and kept.

Then the differential check (`--no-diff` skips it): each module is imported from its
package under the interpreter (TRITON_INTERPRET=1; the package's own `__init__` is
stubbed so one module can load without the rest), its kernels file is loaded the same
way, and every kept jit function is compared: its code identity
(gym.worker.tape.code_identity, what a launch is replayed by) and each global name its
code reads (the same object, an equal constant, or a jit function of the same identity).
Modules that cannot be imported here (missing dependencies, another vendor's Triton)
are counted apart.

    .venv/bin/python scripts/bench_kernels_file.py [--scratch /tmp/kgym-kernels-bench] [--tutorials DIR] [--no-diff]
"""

from __future__ import annotations

import argparse
import ast
import collections
import importlib.util
import json
import os
import re
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from gym.errors import KernelSourceError  # noqa: E402
from gym.grading.intake.kernel_source import extract_kernels  # noqa: E402

OLD_COMMIT = "c1c9a0e"
PACKAGES = {"liger-kernel==0.8.5": "liger_kernel", "flag-gems==5.0.2": "flag_gems"}


def old_extractor() -> Any:
    """extract_kernels as it was at OLD_COMMIT (loaded from git, not checked out)."""
    text = subprocess.run(["git", "show", f"{OLD_COMMIT}:gym/grading/intake/kernel_source.py"], cwd=ROOT, capture_output=True, text=True, check=True).stdout
    path = Path(tempfile.mkdtemp(prefix="kgym-old-extractor-")) / "old_kernel_source.py"
    path.write_text(text)
    spec = importlib.util.spec_from_file_location("old_kernel_source", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["old_kernel_source"] = module
    spec.loader.exec_module(module)
    return module.extract_kernels


def download(scratch: Path) -> dict[str, Path]:
    """Each package's unpacked wheel (its import root's parent folder)."""
    wheels = scratch / "wheels"
    found: dict[str, Path] = {}
    for requirement, root in PACKAGES.items():
        unpacked = scratch / "src" / root
        if not (unpacked / root).is_dir():
            result = subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", requirement, "-d", str(wheels)], capture_output=True, text=True)
            name = requirement.split("==")[0].replace("-", "_")
            wheel = next(iter(sorted(wheels.glob(f"{name}-*.whl"))), None)
            if wheel is None:
                print(f"{requirement}: not downloaded ({result.stderr.strip().splitlines()[-1:]}); skipped")
                continue
            zipfile.ZipFile(wheel).extractall(unpacked)
        found[root] = unpacked
    return found


def tutorials(option: str | None) -> Path | None:
    if option:
        return Path(option)
    import triton

    shipped = Path(triton.__file__).parent / "tutorials"
    return shipped if shipped.is_dir() else None


def _is_jit(node: ast.expr) -> bool:
    target = node.func if isinstance(node, ast.Call) else node
    parts = []
    while isinstance(target, ast.Attribute):
        parts.append(target.attr)
        target = target.value
    if isinstance(target, ast.Name):
        parts.append(target.id)
    return parts[::-1] in (["triton", "jit"], ["jit"])


def jit_functions(tree: ast.Module) -> set[str]:
    """Qualified names of the file's jit functions: decorated ones anywhere, and `triton.jit(fn)` calls."""
    found: set[str] = set()

    def visit(body: list[ast.stmt], prefix: str) -> None:
        for node in body:
            if isinstance(node, ast.FunctionDef):
                if any(_is_jit(decorator) for decorator in node.decorator_list):
                    found.add(prefix + node.name)
                visit(node.body, f"{prefix}{node.name}.<locals>.")
            elif isinstance(node, ast.ClassDef):
                visit(node.body, f"{prefix}{node.name}.")
            elif isinstance(node, (ast.Assign, ast.AnnAssign)) and node.value is not None:
                for call in ast.walk(node.value):
                    if isinstance(call, ast.Call) and _is_jit(call.func) and call.args and isinstance(call.args[0], ast.Name):
                        found.add(prefix + call.args[0].id)
                    elif (
                        isinstance(call, ast.Call)
                        and isinstance(call.func, ast.Call)
                        and _is_jit(call.func)
                        and call.args
                        and isinstance(call.args[0], ast.Name)
                    ):
                        found.add(prefix + call.args[0].id)
            else:
                for field in ("body", "orelse", "finalbody", "handlers"):
                    inner = getattr(node, field, None)
                    if isinstance(inner, list):
                        statements = [item for part in inner for item in (part.body if isinstance(part, ast.ExceptHandler) else [part])]
                        visit(statements, prefix)

    visit(tree.body, "")
    return found


def construct(message: str) -> str:
    """A refusal's construct: its message with names taken out."""
    reason = message.split(": ", 2)[-1] if message.startswith("line ") else message
    return re.sub(r"`[^`]*`", "`…`", reason)[:100]


def scan(name: str, folder: Path, extractors: dict[str, Any], out: Path) -> dict[str, Any]:
    """Extraction figures for one package (and the kernels files written for the differential)."""
    figures: dict[str, Any] = {"files": 0, "found": 0}
    for label in extractors:
        figures[label] = {"refused": collections.Counter(), "refused_files": 0, "kept": 0, "syntax": 0}
    modules: list[dict[str, Any]] = []
    for path in sorted(folder.rglob("*.py")):
        text = path.read_text(errors="replace")
        if "jit" not in text:
            continue
        try:
            tree = ast.parse(text)
        except SyntaxError:
            continue
        found = jit_functions(tree)
        if not found:
            continue
        figures["files"] += 1
        figures["found"] += len(found)
        entry: dict[str, Any] = {"path": str(path), "module": ".".join(path.relative_to(folder).with_suffix("").parts), "found": sorted(found)}
        for label, extract in extractors.items():
            try:
                kernels = extract(text)
            except (KernelSourceError, Exception) as error:  # the old extractor raises its own copy of the class
                if type(error).__name__ != "KernelSourceError":
                    raise
                figures[label]["refused_files"] += 1
                figures[label]["refused"][construct(str(error))] += 1
                continue
            kept = sorted(set(kernels.kernels) & found)
            figures[label]["kept"] += len(kept)
            kernels_path = out / label / f"k{len(modules)}.py"
            kernels_path.parent.mkdir(parents=True, exist_ok=True)
            kernels_path.write_text(kernels.text)
            entry[label] = {"file": str(kernels_path), "kept": kept}
        modules.append(entry)
    figures["modules"] = modules
    return figures


# The differential, run in a child process under the interpreter (one per package).
CHILD = r"""
import dis, importlib, importlib.util, json, sys, types
from pathlib import Path
sys.path.insert(0, sys.argv[1])
from gym.worker.tape import code_identity
folder, package, entries, labels = Path(sys.argv[2]), sys.argv[3], json.loads(Path(sys.argv[4]).read_text()), sys.argv[5].split(",")
stub = types.ModuleType(package)
stub.__path__ = [str(folder / package)]
sys.modules[package] = stub
sys.path.insert(0, str(folder))

def jit_fn(value):
    # Through autotune/heuristics wrappers to the Python function of the jit function.
    for _ in range(8):
        inner = getattr(value, "fn", None)
        if inner is None:
            return value if hasattr(value, "__code__") and value is not None and depth_ok(value) else None
        value = inner
    return None

def depth_ok(value):
    return isinstance(value, types.FunctionType)

def names(code):
    # The globals a function's code reads (not attribute names, which co_names holds as well).
    seen = {op.argval for op in dis.get_instructions(code) if op.opname in ("LOAD_GLOBAL", "LOAD_NAME")}
    for const in code.co_consts:
        if hasattr(const, "co_names"):
            seen |= names(const)
    return seen

def same(a, b):
    if a is b:
        return True
    if jit_fn(a) is not None and jit_fn(b) is not None:
        return code_identity(jit_fn(a)) == code_identity(jit_fn(b))
    if type(a) is type(b) and isinstance(a, (int, float, str, bool, tuple, type(None))):
        return a == b
    inner_a, inner_b = getattr(a, "value", a), getattr(b, "value", b)
    if type(a) is type(b) and type(a).__name__ == "constexpr":
        return same(inner_a, inner_b)
    return False

def lookup(module, qualname):
    target = module
    for part in qualname.split("."):
        target = vars(target).get(part) if isinstance(target, (types.ModuleType, type)) else None
    return target

result = {label: {"identical": 0, "code_differs": 0, "global_missing": 0, "global_differs": 0, "original_import_failed": 0, "file_load_failed": 0, "shadowed_in_original": 0, "examples": []} for label in labels}
# Other vendors' backends last: some of them change what the others' version gates see.
entries.sort(key=lambda entry: "backend" in entry["module"] and "._" in entry["module"])
for number, entry in enumerate(entries):
    try:
        original = importlib.import_module(f"{package}.{entry['module']}" if not entry["module"].startswith(package) else entry["module"])
    except BaseException:
        for label in labels:
            if label in entry:
                result[label]["original_import_failed"] += len(entry[label]["kept"])
        continue
    for label in labels:
        if label not in entry:
            continue
        figures = result[label]
        try:
            spec = importlib.util.spec_from_file_location(f"kgym_kernels_{label}_{number}", entry[label]["file"])
            loaded = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(loaded)
        except BaseException as error:
            figures["file_load_failed"] += len(entry[label]["kept"])
            if len(figures["examples"]) < 12:
                figures["examples"].append(f"{entry['module']}: load: {type(error).__name__}: {str(error)[:120]}")
            continue
        for qualname in entry[label]["kept"]:
            a, b = lookup(original, qualname), lookup(loaded, qualname)
            if getattr(a, "fn", None) is None:
                # The module rebinds the name to a Python function after defining the kernel.
                figures["shadowed_in_original"] += 1
                continue
            if jit_fn(a) is None or jit_fn(b) is None or code_identity(jit_fn(a)) != code_identity(jit_fn(b)):
                figures["code_differs"] += 1
                if len(figures["examples"]) < 12:
                    figures["examples"].append(f"{entry['module']}.{qualname}: code differs")
                continue
            fn_a, fn_b = jit_fn(a), jit_fn(b)
            verdict = "identical"
            for name in sorted(names(fn_a.__code__)):
                if name not in fn_a.__globals__:
                    continue
                if name not in fn_b.__globals__:
                    verdict = "global_missing"
                elif not same(fn_a.__globals__[name], fn_b.__globals__[name]):
                    verdict = "global_differs"
                if verdict != "identical":
                    if len(figures["examples"]) < 12:
                        figures["examples"].append(f"{entry['module']}.{qualname}: {verdict} {name}")
                    break
            figures[verdict] += 1
print(json.dumps(result))
"""


def differential(name: str, folder: Path, modules: list[dict[str, Any]], labels: list[str], scratch: Path) -> dict[str, Any]:
    entries = scratch / f"{name}-entries.json"
    entries.write_text(json.dumps(modules))
    env = {**os.environ, "TRITON_INTERPRET": "1", "CUDA_VISIBLE_DEVICES": os.environ.get("CUDA_VISIBLE_DEVICES", "")}
    result = subprocess.run(
        [sys.executable, "-c", CHILD, str(ROOT), str(folder), name, str(entries), ",".join(labels)], capture_output=True, text=True, env=env, timeout=3600
    )
    lines = [line for line in result.stdout.splitlines() if line.startswith("{")]
    if not lines:
        print(f"{name}: differential failed: {result.stderr[-2000:]}")
        return {}
    return json.loads(lines[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--scratch", default="/tmp/kgym-kernels-bench")
    parser.add_argument("--tutorials", default=None, help="a folder of Triton's tutorials (python/tutorials of the triton repository)")
    parser.add_argument("--no-diff", action="store_true")
    options = parser.parse_args()
    scratch = Path(options.scratch)
    scratch.mkdir(parents=True, exist_ok=True)
    extractors = {"before": old_extractor(), "after": extract_kernels}
    packages: dict[str, tuple[Path, str]] = {root: (folder, root) for root, folder in download(scratch).items()}
    shipped = tutorials(options.tutorials)
    if shipped is None:
        print("triton tutorials: not shipped in the triton package and no --tutorials DIR; skipped")
    else:
        packages["triton_tutorials"] = (shipped, "")
    report: dict[str, Any] = {}
    for name, (folder, root) in packages.items():
        source = folder / root if root else folder
        figures = scan(name, source, extractors, scratch / "kernels" / name)
        if not options.no_diff and root:
            figures["diff"] = differential(name, folder, figures["modules"], list(extractors), scratch)
        report[name] = figures
    for name, figures in report.items():
        print(f"\n== {name}: {figures['files']} files with jit functions, {figures['found']} jit functions")
        print(f"{'':32}{'before':>12}{'after':>12}")
        for key, title in (("refused_files", "files refused"), ("kept", "jit functions kept")):
            print(f"{title:32}{figures['before'][key]:>12}{figures['after'][key]:>12}")
        diff = figures.get("diff") or {}
        if diff:
            for key in ("identical", "code_differs", "global_missing", "global_differs", "file_load_failed", "shadowed_in_original", "original_import_failed"):
                print(f"{'  kept: ' + key.replace('_', ' '):32}{diff['before'][key]:>12}{diff['after'][key]:>12}")
        for label in extractors:
            for reason, count in figures[label]["refused"].most_common():
                print(f"  {label} refused {count:>4} x {reason}")
            for example in (diff.get(label) or {}).get("examples", [])[:8]:
                print(f"  {label} e.g. {example}")


if __name__ == "__main__":
    main()
