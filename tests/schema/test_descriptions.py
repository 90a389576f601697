"""Every field of the gym's pydantic models says what it holds (`Field(description=...)`).

The descriptions are the field docs: they land in the JSON schemas the server
(`GET /schema`, OpenAPI) and the MCP tools publish.
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil
from types import ModuleType

import pytest
from pydantic import BaseModel

import gym.devices
import gym.execution
import gym.harness
import gym.integrations
import gym.schema
import gym.serve
from gym.errors import MissingExtra

MODULES = [
    "gym.schema.aggregates",
    "gym.schema.episode",
    "gym.schema.http",
    "gym.schema.outcomes",
    "gym.schema.ranking",
    "gym.schema.records",
    "gym.schema.result",
    "gym.schema.signal",
    "gym.schema.task_metadata",
    "gym.tasks.splits",
    "gym.tasks.opinfo.importer",
    "gym.worker.protocol",
    "gym.tasks.model",
    "gym.serve.client",
    "gym.harness.env",
    "gym.serve.queue",
    "gym.grading.infra_result",
    "gym.grading.options",
    "gym.serve.mcp",
    "gym.serve.mcp_http",
    "gym.serve.auth",
    "gym.integrations.episodes",
    "gym.integrations.openenv",
    "gym.integrations.skyrl",
    "gym.integrations.verifiers",
    "gym.integrations.verl",
    "gym.integrations.verl.common",
    "gym.integrations.verl.dataset",
    "gym.integrations.verl.interaction",
    "gym.integrations.verl.reward",
    "gym.integrations.verl.tool",
    "gym.harness.reward",
    "gym.harness.run_folder",
    "gym.harness.runner",
    "gym.serve.server",
    "gym.serve.state",
    "gym.serve.sessions",
    "gym.serve.submissions",
    "gym.serve.task_views",
    "gym.harness.agents.base",
    "gym.harness.agents.openai_agent",
    "gym.harness.agents.replay",
    "gym.harness.agents.solutions",
    "gym.site.schema",
    "gym.execution.executor",
    "gym.devices.pool",
    "gym.devices.lock",
    "gym.devices.nvidia",
    "gym.execution.local",
    "gym.execution.batch",
    "gym.execution.ray_executor",
    "gym.grading.baselines.cache",
]


def _import(name: str) -> ModuleType:
    try:
        return importlib.import_module(name)
    except ModuleNotFoundError as error:
        if error.name and not error.name.startswith("gym"):
            pytest.skip(f"{name} needs {error.name} (an optional extra)")
        raise
    except MissingExtra as error:  # an RL-framework adapter: .venv-integrations checks it
        pytest.skip(str(error))


def test_the_list_covers_every_schema_and_harness_module() -> None:
    found = {
        info.name
        for package in (gym.schema, gym.harness, gym.serve, gym.execution, gym.devices, gym.integrations)
        for info in pkgutil.walk_packages(package.__path__, package.__name__ + ".")
        if not info.ispkg
    }
    assert not found - set(MODULES), f"add to MODULES: {sorted(found - set(MODULES))}"


def _declared_fields(model: type[BaseModel]) -> set[str]:
    """The fields `model` or one of its gym-defined bases annotates."""
    return {
        field
        for klass in model.__mro__
        if isinstance(klass, type) and issubclass(klass, BaseModel) and klass.__module__.startswith("gym.")
        for field in getattr(klass, "__annotations__", {})
    }


@pytest.mark.parametrize("name", MODULES)
def test_every_field_has_a_description(name: str) -> None:
    module = _import(name)
    models = [model for _, model in inspect.getmembers(module, inspect.isclass) if issubclass(model, BaseModel) and model.__module__ == module.__name__]
    # Fields a model declares itself: one inherited from a framework's base class (OpenEnv's Action,
    # verifiers' config types) is that framework's to document.
    missing = [
        f"{model.__name__}.{field}"
        for model in models
        for field, info in model.model_fields.items()
        if field in _declared_fields(model) and not (info.description or "").strip()
    ]
    assert not missing, f"{name}: fields without Field(description=...): {missing}"
