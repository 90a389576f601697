"""Where each page and file lives in the built site (all relative, so file:// works)."""

from __future__ import annotations

import re
from collections.abc import Iterable

_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


def slugify(text: str) -> str:
    """A URL- and file-safe form of `text` (never empty, never a dot name)."""
    slug = _UNSAFE.sub("-", text).strip("-.")
    return slug or "x"


def unique_slugs(names: Iterable[str]) -> list[str]:
    """Slugs of `names` in order, suffixed "-2", "-3"... where two would collide."""
    seen: set[str] = set()
    result: list[str] = []
    for name in names:
        base = slugify(name)
        slug, number = base, 1
        while slug in seen:
            number += 1
            slug = f"{base}-{number}"
        seen.add(slug)
        result.append(slug)
    return result


def task_page(task_id: str) -> str:
    return f"tasks/{task_id}.html"


def submission_id(run_slug: str, task_id: str, attempt: int) -> str:
    return f"{run_slug}/{task_id}/{attempt}"


def submission_base(submission: str) -> str:
    """Path prefix (no extension) of a submission's files: "submissions/<run>/<suite>/<name>/<n>"."""
    return f"submissions/{submission}"


def submission_page(submission: str) -> str:
    return submission_base(submission) + ".html"


def root_prefix(page: str) -> str:
    """The relative path from `page` back to the site root ("", "../", "../../"...)."""
    return "../" * page.count("/")
