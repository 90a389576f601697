"""The gym's logging: every message that is not a command's own output goes to the `kgym` logger
(each module logs to `kgym.<layer>`, e.g. `kgym.sandbox`), never to a bare `print(..., file=sys.stderr)`.

Out of the box (a library import, a test) the `kgym` logger writes warnings and worse to the
standard error as `warning: <message>`, the way the gym always has; `configure(level)` (what
`kgym --log-level` calls) sets the level, e.g. `info` for the baseline cache's and the Ray
executor's notes or `debug` for everything. An application with its own logging setup can call
`configure(None)` to hand the `kgym` records to the root logger instead.
"""

from __future__ import annotations

import logging
import sys

ROOT = "kgym"
LEVELS = ("debug", "info", "warning", "error", "critical")


class _StandardError(logging.Handler):
    """Writes to whatever `sys.stderr` is at the time of the record (a test's capture included)."""

    def emit(self, record: logging.LogRecord) -> None:
        try:
            sys.stderr.write(self.format(record) + "\n")
            sys.stderr.flush()
        except Exception:  # noqa: BLE001 - logging never raises into the gym
            self.handleError(record)


class _Formatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        return f"{record.levelname.lower()}: {record.getMessage()}"


_HANDLER = _StandardError()
_HANDLER.setFormatter(_Formatter())


def get_logger(name: str) -> logging.Logger:
    """The logger of one part of the gym, under `kgym` ("sandbox" -> `kgym.sandbox`)."""
    return logging.getLogger(f"{ROOT}.{name}" if name else ROOT)


def configure(level: str | None = "warning") -> None:
    """Log `level` and worse to the standard error (`warning: ...`); None: no handler of the gym's own,
    records propagate to the root logger's handlers."""
    logger = logging.getLogger(ROOT)
    if level is None:
        logger.removeHandler(_HANDLER)
        logger.propagate = True
        logger.setLevel(logging.NOTSET)
        return
    if level.lower() not in LEVELS:
        raise ValueError(f"log level must be one of {', '.join(LEVELS)}, not {level!r}")
    logger.setLevel(level.upper())
    if _HANDLER not in logger.handlers:
        logger.addHandler(_HANDLER)
    # The gym's own handler writes them: the root logger's would print each twice.
    logger.propagate = False


configure()
