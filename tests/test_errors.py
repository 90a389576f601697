"""One error root: every exception the gym defines is a KernelGymError carrying the
HTTP status it maps to, and the server answers an escaping one with that status."""

from __future__ import annotations

import importlib
import inspect
import pkgutil
from collections.abc import Callable, Iterator

import httpx
import pytest

import gym
from gym.errors import KernelGymError, MissingExtra
from gym.serve.server import ServerConfig
from tests.support.server_fixtures import FakeGrader, running_server


def gym_modules() -> list[str]:
    """Every module of the gym package but the sandbox side (gym.worker imports nothing from the gym)."""
    names = [info.name for info in pkgutil.walk_packages(gym.__path__, prefix="gym.")]
    return sorted(name for name in names if name != "gym.worker" and not name.startswith("gym.worker."))


def gym_exceptions() -> list[type[BaseException]]:
    found: dict[str, type[BaseException]] = {}
    for name in gym_modules():
        try:
            module = importlib.import_module(name)
        except MissingExtra:  # an integration whose framework is not installed here (.venv-integrations has them all)
            continue
        for _, obj in inspect.getmembers(module, inspect.isclass):
            if issubclass(obj, BaseException) and obj.__module__ == name:
                found[f"{name}.{obj.__qualname__}"] = obj
    return [found[key] for key in sorted(found)]


EXCEPTIONS = gym_exceptions()


def test_the_walk_finds_the_known_errors() -> None:
    names = {cls.__name__ for cls in EXCEPTIONS}
    assert {
        "KernelGymError",
        "TaskLoadError",
        "EnvError",
        "QueueFull",
        "SessionsFull",
        "SandboxUnavailable",
        "GradeFailure",
        "MissingExtra",
        "ApiError",
    } <= names


@pytest.mark.parametrize("cls", EXCEPTIONS, ids=lambda cls: f"{cls.__module__}.{cls.__qualname__}")
def test_every_gym_exception_derives_from_kernel_gym_error(cls: type[BaseException]) -> None:
    if cls.__name__ == "ApiError":  # the server's own refusals: a Starlette HTTPException with a status per instance
        from starlette.exceptions import HTTPException

        assert issubclass(cls, HTTPException)
        return
    assert issubclass(cls, KernelGymError), f"{cls.__module__}.{cls.__qualname__} does not derive from KernelGymError"
    status = cls.http_status  # type: ignore[attr-defined]
    assert isinstance(status, int) and 400 <= status <= 599


def test_the_statuses_the_server_relies_on() -> None:
    from gym.errors import EnvError, QueueFull, SessionsFull, TaskLoadError

    assert (TaskLoadError.http_status, EnvError.http_status, QueueFull.http_status, SessionsFull.http_status) == (404, 409, 503, 503)
    assert SessionsFull.retry_after_s == 5


def test_old_bases_still_catch() -> None:
    from gym.errors import AgentError, EnvError, GymClientError, QueueFull, SessionsFull

    assert issubclass(EnvError, ValueError) and issubclass(AgentError, ValueError)
    assert issubclass(QueueFull, RuntimeError) and issubclass(SessionsFull, RuntimeError) and issubclass(GymClientError, RuntimeError)


# ---------------------------------------------------------------- the server maps them


class Teapot(KernelGymError):
    http_status = 418


class Busy(KernelGymError):
    http_status = 503
    retry_after_s = 7


class Broken(KernelGymError):
    """Keeps the default 500: answered as any internal error."""


@pytest.fixture(scope="module")
def base_url() -> Iterator[str]:
    with running_server(ServerConfig(grader=FakeGrader())) as url:
        yield url


def raising(error: Exception) -> Callable[..., None]:
    """A stand-in for find_task that raises `error`."""

    def find_task(*_: object, **__: object) -> None:
        raise error

    return find_task


@pytest.mark.parametrize("route", ["get_task", "submit"])
def test_server_answers_a_gym_error_with_its_status(base_url: str, monkeypatch: pytest.MonkeyPatch, route: str) -> None:
    import gym.serve.server as server

    def call() -> httpx.Response:
        if route == "get_task":
            return httpx.get(f"{base_url}/tasks/l1/vector_add")
        return httpx.post(f"{base_url}/submissions", json={"task_id": "l1/vector_add", "code": "x = 1\n"})

    monkeypatch.setattr(server, "find_task", raising(Teapot("short and stout")))
    teapot = call()
    assert teapot.status_code == 418
    assert teapot.json() == {"detail": "short and stout", "errors": []}
    assert "retry-after" not in teapot.headers

    monkeypatch.setattr(server, "find_task", raising(Busy("come back later")))
    busy = call()
    assert busy.status_code == 503 and busy.headers["Retry-After"] == "7"
    assert busy.json() == {"detail": "come back later", "errors": [], "retry_after_s": 7}

    monkeypatch.setattr(server, "find_task", raising(Broken("oops")))
    broken = call()
    assert broken.status_code == 500
    assert broken.json() == {"detail": "internal error: Broken: oops", "errors": []}


def test_server_answers_library_errors_with_their_class_status(base_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    import gym.serve.server as server
    from gym.errors import EnvError, QueueFull, TaskLoadError

    for error in (TaskLoadError("nope/x: no such task"), EnvError("cannot"), QueueFull(3)):
        monkeypatch.setattr(server, "find_task", raising(error))
        response = httpx.get(f"{base_url}/tasks/l1/vector_add")
        assert response.status_code == type(error).http_status, error
        assert response.json()["detail"] == str(error)
    assert response.headers["Retry-After"] == "3" and response.json()["retry_after_s"] == 3
