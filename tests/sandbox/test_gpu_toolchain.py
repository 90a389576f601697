"""On a CUDA host every backend's check() and `kgym doctor` ask for the C compiler and
Python.h Triton builds its launcher with; on a CPU host nobody asks. Checked on CPU by
injecting "CUDA is available" and fake probes."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from gym import doctor
from gym.sandbox import bwrap, process, toolchain
from gym.sandbox.toolchain import Toolchain, gpu_toolchain_problem, run_probe, toolchain_problem

COMPLETE = Toolchain(compiler="/usr/bin/gcc", include_dir="/usr/include/python3.11", python_h=True, python_version="3.11")
BARE = Toolchain(compiler=None, include_dir="/nowhere/include/python3.11", python_h=False, python_version="3.11")


@pytest.fixture(autouse=True)
def fresh_cache(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(toolchain, "_FINE", set())


def test_the_problem_says_what_to_install() -> None:
    assert toolchain_problem(COMPLETE) is None
    problem = toolchain_problem(BARE) or ""
    assert "apt-get install gcc" in problem and "apt-get install python3.11-dev" in problem and "/nowhere/include/python3.11" in problem
    only_headers = toolchain_problem(Toolchain("/usr/bin/clang", "/x", False, "3.12")) or ""
    assert "python3.12-dev" in only_headers and "gcc" not in only_headers


def test_cpu_hosts_never_probe() -> None:
    def probe() -> Toolchain:
        raise AssertionError("probed on a CPU host")

    assert gpu_toolchain_problem(("k",), probe, cuda=False) is None


def test_gpu_hosts_probe_until_the_toolchain_is_complete() -> None:
    answers = [BARE, COMPLETE, BARE]
    calls: list[int] = []

    def probe() -> Toolchain:
        calls.append(1)
        return answers[len(calls) - 1]

    assert "gcc" in (gpu_toolchain_problem(("k",), probe, cuda=True) or "")
    assert gpu_toolchain_problem(("k",), probe, cuda=True) is None
    # Once complete, no further probes for that key.
    assert gpu_toolchain_problem(("k",), probe, cuda=True) is None and len(calls) == 2
    assert gpu_toolchain_problem(("k",), lambda: "probe broke", cuda=True) is None
    assert gpu_toolchain_problem(("other",), lambda: "probe broke", cuda=True) == "probe broke"


def test_the_real_probe_reads_the_interpreters_include_folder(tmp_path: Path) -> None:
    import sysconfig

    found = run_probe([sys.executable], {"PATH": "/usr/local/bin:/usr/bin:/bin"})
    assert isinstance(found, Toolchain)
    assert found.python_version == f"{sys.version_info[0]}.{sys.version_info[1]}"
    scheme = sysconfig.get_default_scheme()
    assert found.include_dir == sysconfig.get_paths(scheme="posix_prefix" if scheme == "posix_local" else scheme)["include"]
    assert found.python_h == (Path(found.include_dir) / "Python.h").is_file()
    # No compiler on an empty PATH (and no CC: the worker's environment has none).
    bare = run_probe([sys.executable], {"PATH": str(tmp_path)})
    assert isinstance(bare, Toolchain) and bare.compiler is None
    assert isinstance(run_probe([str(tmp_path / "no-python")]), str)


@pytest.mark.parametrize("backend", [bwrap, process])
def test_backend_checks_ask_only_on_gpu_hosts(backend, monkeypatch: pytest.MonkeyPatch) -> None:
    sandbox = backend.BwrapSandbox() if backend is bwrap else backend.ProcessSandbox()
    base = sandbox.check()
    probes: list[list[str]] = []

    def fake_probe(command: list[str], env: dict[str, str] | None = None) -> Toolchain:
        probes.append(command)
        assert env == {"PATH": "/usr/local/bin:/usr/bin:/bin"}, "the probe must see the worker's PATH"
        return BARE

    monkeypatch.setattr(backend, "run_probe", fake_probe)
    monkeypatch.setattr(toolchain, "cuda_available", lambda: False)
    assert sandbox.check() == base and probes == []
    if base is not None:
        pytest.skip(f"{backend.__name__} is unusable here anyway: {base}")
    monkeypatch.setattr(toolchain, "cuda_available", lambda: True)
    problem = sandbox.check() or ""
    assert "apt-get install gcc" in problem and "python3.11-dev" in problem and len(probes) == 1
    monkeypatch.setattr(backend, "run_probe", lambda command, env=None: COMPLETE)
    assert sandbox.check() is None


class FakeContainers:
    def __init__(self, answer: bytes | Exception) -> None:
        self.answer = answer
        self.runs: list[dict] = []

    def run(self, image: str, command: list[str], **kwargs) -> bytes:
        self.runs.append({"image": image, "command": command, **kwargs})
        if isinstance(self.answer, Exception):
            raise self.answer
        return self.answer


class FakeImage:
    id = "sha256:feed"


class FakeClient:
    def __init__(self, answer: bytes | Exception) -> None:
        self.containers = FakeContainers(answer)
        self.images = self

    def ping(self) -> bool:
        return True

    def get(self, name: str) -> FakeImage:
        return FakeImage()


def test_docker_check_probes_the_image_on_gpu_hosts(monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("docker")
    from gym.sandbox import docker_backend

    bare = json.dumps({"compiler": None, "include_dir": "/usr/include/python3.11", "python_h": False, "python_version": "3.11"})
    client = FakeClient(("noise\n" + bare + "\n").encode())
    monkeypatch.setattr(docker_backend, "_client", lambda: client)
    monkeypatch.setattr(toolchain, "cuda_available", lambda: False)
    assert docker_backend.DockerSandbox().check() is None and client.containers.runs == []
    monkeypatch.setattr(toolchain, "cuda_available", lambda: True)
    problem = docker_backend.DockerSandbox().check() or ""
    assert "python3.11-dev" in problem and "gcc" in problem and "rebuild" in problem
    (run,) = client.containers.runs
    assert run["image"] == FakeImage.id and run["command"][0] == docker_backend.RUNTIME_PYTHON and run["network_mode"] == "none" and run["remove"]
    complete = json.dumps({"compiler": "/usr/bin/gcc", "include_dir": "/usr/include/python3.11", "python_h": True, "python_version": "3.11"})
    client.containers.answer = complete.encode()
    assert docker_backend.DockerSandbox().check() is None
    client.containers.answer = RuntimeError("no such file")
    toolchain._FINE.clear()
    assert "could not probe" in (docker_backend.DockerSandbox().check() or "")


def test_doctor_reports_the_toolchain_on_gpu_hosts_only(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(toolchain, "cuda_available", lambda: False)
    assert doctor.toolchain_check() is None
    monkeypatch.setattr(toolchain, "cuda_available", lambda: True)
    monkeypatch.setattr(toolchain, "run_probe", lambda command, env=None: BARE)
    check = doctor.toolchain_check()
    assert check is not None and check.ok is False and "python3.11-dev" in check.detail and "gcc" in check.detail
    monkeypatch.setattr(toolchain, "run_probe", lambda command, env=None: COMPLETE)
    check = doctor.toolchain_check()
    assert check is not None and check.ok is True and "/usr/bin/gcc" in check.detail
    monkeypatch.setattr(toolchain, "run_probe", lambda command, env=None: "could not run it")
    check = doctor.toolchain_check()
    assert check is not None and check.ok is False and check.detail == "could not run it"
