"""Syntax highlighting with pygments: CSS classes in the page, colours in a local stylesheet."""

from __future__ import annotations

import json
from typing import Any

from pygments import highlight
from pygments.formatters import HtmlFormatter
from pygments.lexers import JsonLexer, PythonLexer

CSS_CLASS = "highlight"
STYLE = "friendly"


def _formatter(line_numbers: bool) -> HtmlFormatter[str]:
    return HtmlFormatter(cssclass=CSS_CLASS, style=STYLE, linenos="table" if line_numbers else False, wrapcode=True)


def python_html(source: str) -> str:
    return highlight(source, PythonLexer(), _formatter(line_numbers=True))


def json_html(value: Any) -> str:
    return highlight(json.dumps(value, indent=2, sort_keys=True, default=str), JsonLexer(), _formatter(line_numbers=False))


def stylesheet() -> str:
    """The highlighting rules, written to static/highlight.css."""
    return _formatter(line_numbers=True).get_style_defs(f".{CSS_CLASS}") + "\n"
