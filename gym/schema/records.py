"""Archived records: strict when written, lenient when read back (torch-free).

grade.json, results.jsonl lines, run.json and leaderboard.json outlive the gym
that wrote them. Their models reject unknown keys when the gym builds one (a
typo is an error, not a silently dropped figure), but `read_record` reads an
archived one leniently: keys this gym does not know, at any depth, are ignored,
so a record written by a later gym of the same schema version still reads. A
record whose `schema_version` is newer than the model's own (its default) is
refused with a `RecordVersionError` naming the source and both versions.
A record without a `schema_version` reads as the model's version (files
written before the field existed are version 1).

    grade = read_record(Path("attempts/l1/softmax/1/grade.json"), GradeResult)
    line = read_record(raw_line, AttemptLine, source="results.jsonl:3")
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, TypeVar

from pydantic import (
    BaseModel,
    ConfigDict,
    ValidationError,
    ValidationInfo,
    model_validator,
)

from gym.errors import RecordVersionError

# Validation context key `read_record` sets: unknown keys are dropped instead of rejected.
_LENIENT = "kernel_gym.read_record"
_CONTEXT = {_LENIENT: True}

_KNOWN_KEYS: dict[type[BaseModel], frozenset[str]] = {}


def _known_keys(model: type[BaseModel]) -> frozenset[str]:
    known = _KNOWN_KEYS.get(model)
    if known is None:
        names: set[str] = set()
        for name, field in model.model_fields.items():
            names.add(name)
            for alias in (field.alias, field.validation_alias):
                if isinstance(alias, str):
                    names.add(alias)
        known = _KNOWN_KEYS[model] = frozenset(names)
    return known


class RecordModel(BaseModel):
    """Base of the models archived records are made of: unknown keys are rejected, except under `read_record`."""

    model_config = ConfigDict(extra="forbid")

    @model_validator(mode="before")
    @classmethod
    def _ignore_unknown_keys_when_reading(cls, data: Any, info: ValidationInfo) -> Any:
        if isinstance(data, dict) and isinstance(info.context, dict) and info.context.get(_LENIENT):
            known = _known_keys(cls)
            if not known.issuperset(data):
                return {key: value for key, value in data.items() if key in known}
        return data


Model = TypeVar("Model", bound=BaseModel)


def understood_version(model: type[BaseModel]) -> int | None:
    """The schema version `model` reads and writes (its `schema_version` default); None when it has none."""
    field = model.model_fields.get("schema_version")
    return field.default if field is not None and isinstance(field.default, int) else None


def _found_version(data: str | bytes) -> object:
    try:
        value = json.loads(data)
    except (ValueError, UnicodeDecodeError):
        return None
    return value.get("schema_version") if isinstance(value, dict) else None


def read_record(record: Path | str | bytes, model: type[Model], *, source: str | None = None) -> Model:
    """Read one archived record: a file (a `Path`) or its JSON text (`str`/`bytes`).

    Unknown keys are ignored; a malformed record raises pydantic's `ValidationError`
    (and `OSError` for an unreadable file); a record newer than `model` understands
    raises `RecordVersionError`. `source` names the record in that error (default:
    the path, or the model's name for text).
    """
    if isinstance(record, Path):
        source = source or str(record)
        data: str | bytes = record.read_bytes()
    else:
        data = record
    source = source or f"{model.__name__} record"
    understood = understood_version(model)

    def refuse_if_newer(found: object) -> None:
        if understood is not None and isinstance(found, int) and not isinstance(found, bool) and found > understood:
            raise RecordVersionError(source, model.__name__, found, understood)

    try:
        parsed = model.model_validate_json(data, context=_CONTEXT)
    except ValidationError:
        # A newer record may not validate at all: say it is newer rather than malformed.
        refuse_if_newer(_found_version(data))
        raise
    refuse_if_newer(getattr(parsed, "schema_version", None))
    return parsed
