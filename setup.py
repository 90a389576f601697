"""Build hook: the wheel carries the checkout's shipped folders as package data.

The repository keeps `tasks/`, `references/`, `leaderboard/` and `sandbox/` at its top level (tests,
docs and the Makefile name them there). `build_py` copies them into the built package as
`gym/_shipped/<folder>/`, so an installed wheel finds them without the checkout
(`gym.tasks.paths.shipped_root`). MANIFEST.in puts the same folders into the sdist, so a wheel built
from the sdist carries them too. An editable install copies nothing: it runs from the checkout.

Everything else about the project is in pyproject.toml.
"""

from __future__ import annotations

from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

HERE = Path(__file__).resolve().parent
# Top-level folders of the checkout a wheel ships, under gym/_shipped/.
SHIPPED = ("tasks", "references", "leaderboard", "sandbox")
SHIPPED_PACKAGE_DIR = Path("gym") / "_shipped"


def shipped_files() -> list[Path]:
    """The shipped folders' files, relative to the checkout (no bytecode caches)."""
    files: list[Path] = []
    for folder in SHIPPED:
        root = HERE / folder
        if not root.is_dir():
            raise FileNotFoundError(f"{root}: missing; the wheel ships it (build from the checkout or its sdist)")
        files += [
            path.relative_to(HERE)
            for path in sorted(root.rglob("*"))
            if path.is_file() and "__pycache__" not in path.parts and path.suffix not in (".pyc", ".pyo")
        ]
    return files


class BuildPyWithShipped(build_py):
    """`build_py` that also copies the shipped folders into the built `gym` package."""

    def run(self) -> None:
        super().run()
        if getattr(self, "editable_mode", False):
            return
        for relative in shipped_files():
            target = Path(self.build_lib) / SHIPPED_PACKAGE_DIR / relative
            self.mkpath(str(target.parent))
            self.copy_file(str(HERE / relative), str(target))

    def get_outputs(self, include_bytecode: bool = True) -> list[str]:
        outputs: list[str] = super().get_outputs(include_bytecode)
        if getattr(self, "editable_mode", False):
            return outputs
        return outputs + [str(Path(self.build_lib) / SHIPPED_PACKAGE_DIR / relative) for relative in shipped_files()]


setup(cmdclass={"build_py": BuildPyWithShipped})
