"""Which kernel language a submission is written in, read from its source (nothing of it runs).

- "helion": the file imports `helion` (`import helion`, `import helion.language as hl`,
  `from helion ...`) anywhere in it: its kernels are `@helion.kernel` functions, which
  the worker lowers to Triton (gym.worker.helion_dsl) and the witness replays from the
  generated source (gym.worker.launched_modules).
- "triton" otherwise (a file that does not parse is Triton's to refuse, with its error).

`kgym grade` needs no flag: the grade result says which (`GradeResult.dsl`).
"""

from __future__ import annotations

import ast

from gym.schema.result import Dsl


def submission_dsl(source: str) -> Dsl:
    """The kernel language of `source` (see the module doc)."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return "triton"
    for node in ast.walk(tree):
        if isinstance(node, ast.Import) and any(alias.name.split(".")[0] == "helion" for alias in node.names):
            return "helion"
        if isinstance(node, ast.ImportFrom) and not node.level and (node.module or "").split(".")[0] == "helion":
            return "helion"
    return "triton"
