"""Source mutations of honest solutions, used to prove the grader catches them."""

from __future__ import annotations

import re

# `< EXPR` up to the next ')' ',' '&' '|' or end of line; not '<=' or '<<'.
_LESS_THAN = re.compile(r"(?<![<])<(?![<=])\s*([^,)&|\n]+)")


def off_by_one_masks(source: str) -> str:
    """Shrink every `<` bound on a line that mentions `mask` by one: `offs < n` -> `offs < (n) - 1`.

    The kernel then skips the last element along each masked dimension, the
    classic unmasked-tail bug in reverse.
    """
    lines = []
    for line in source.splitlines(keepends=True):
        if "mask" in line and not line.lstrip().startswith("#"):
            line = _LESS_THAN.sub(lambda m: f"< ({m.group(1).rstrip()}) - 1", line)
        lines.append(line)
    return "".join(lines)
