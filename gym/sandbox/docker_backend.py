"""`docker`: one container per grade, through the Docker SDK.

The container runs the image built by `sandbox/build_image.sh` (offline) or
`sandbox/Dockerfile.gpu` (GPU hosts with a registry) as an unprivileged user,
with no network, a read-only root, tmpfs scratch, every capability dropped,
no-new-privileges, memory/pids/CPU/file-size limits and, for a cuda job, its
one GPU (a device request for that GPU alone; the NVIDIA runtime mounts its
node and the driver libraries, and the worker sees it as cuda:0). A job's
shared Triton cache is mounted read-write at /tmp/triton. The container is
removed in every case: exit, timeout, error or interrupt, and the uid it ran
under is leased again only once none of its processes is left (see
`gym.sandbox.uids`). A container the engine could not create or start (the
runtime could not exec the interpreter, a device request it cannot meet) comes
back with `infra_failure` set, never as the submission's failure.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from contextlib import ExitStack
from dataclasses import dataclass
from typing import Any

from gym import settings
from gym.devices import nvidia
from gym.errors import KernelGymError, MissingExtra
from gym.extras import require
from gym.sandbox.base import TAIL, Job, RunOutcome, WitnessLink, register
from gym.sandbox.environment import WORKER_PATH, WarmStart, worker_command, worker_environment
from gym.sandbox.staging import open_job_to, start_warm_job
from gym.sandbox.supervise import pid_alive, watch
from gym.sandbox.toolchain import PROBE, Toolchain, gpu_toolchain_problem, parse_probe
from gym.sandbox.uids import lease_uid

DEFAULT_IMAGE = "kgym-sandbox:local"
# The interpreter inside the image (KGYM_DOCKER_PYTHON, else the runtime venv's), read once at import.
RUNTIME_PYTHON = settings.docker_python()
SANDBOX_HOME = "/home/sandbox"
SANDBOX_TRITON_CACHE = "/tmp/triton"
LOG_LIMIT = {"max-size": "8m", "max-file": "1"}
# How often a running container's standard output is read for the witness link, seconds.
LINK_POLL_S = 0.1
BUILD_HINT = "build the image with `sandbox/build_image.sh` (offline) or from `sandbox/Dockerfile.gpu`"
ENGINE_HINT = "install Docker's engine (Debian: apt-get install docker.io) and start it (`dockerd &` where there is no systemd)"


def image_name() -> str:
    return settings.docker_image() or DEFAULT_IMAGE


def _client() -> Any:
    import docker

    return docker.from_env(timeout=30)


def container_options(job: Job, uid: int, warm: WarmStart | None = None) -> dict[str, Any]:
    """Everything `containers.create` is given, in one place (tests read it)."""
    from docker.types import DeviceRequest, LogConfig, Ulimit

    limits = job.limits
    # The container holds only the job's GPU, so it is device 0 there (see gym.devices.nvidia).
    env = worker_environment(
        job.device,
        SANDBOX_HOME,
        "/tmp",
        "/job/in/lib",
        visible_devices=nvidia.SANDBOX_VISIBLE_DEVICES,
        triton_cache=SANDBOX_TRITON_CACHE,
    )
    options: dict[str, Any] = {
        "image": image_name(),
        "command": worker_command(RUNTIME_PYTHON, "/job/in", "/job/out", warm),
        "user": f"{uid}:{uid}",
        "environment": env,
        "working_dir": "/tmp",
        "network_mode": "none",
        "read_only": True,
        "tmpfs": {
            "/tmp": f"size={limits.scratch_bytes},mode=1777",
            SANDBOX_HOME: f"size={limits.scratch_bytes},uid={uid},gid={uid},mode=0700",
        },
        "volumes": {
            str(job.in_dir): {"bind": "/job/in", "mode": "ro"},
            str(job.out_dir): {"bind": "/job/out", "mode": "rw"},
        },
        "cap_drop": ["ALL"],
        "security_opt": ["no-new-privileges"],
        "mem_limit": limits.memory_bytes,
        "memswap_limit": limits.memory_bytes,
        "pids_limit": limits.processes,
        "nano_cpus": int((os.cpu_count() or 1) * 1e9),
        "ulimits": [
            Ulimit(name="fsize", soft=limits.file_size_bytes, hard=limits.file_size_bytes),
            Ulimit(name="nofile", soft=limits.open_files, hard=limits.open_files),
            Ulimit(name="cpu", soft=limits.cpu_seconds, hard=limits.cpu_seconds),
            Ulimit(name="core", soft=0, hard=0),
        ],
        "log_config": LogConfig(type="json-file", config=LOG_LIMIT),
        # kgym.uid: the leased uid, so leftovers can be traced to the grade that made them.
        # kgym.owner: the trusted process that started it (a warm container outlives nothing else: see warm_pool).
        "labels": {"kgym.sandbox": "1", "kgym.uid": str(uid), "kgym.owner": str(os.getpid()), "kgym.warm": "1" if warm else "0"},
        "detach": True,
    }
    if job.triton_cache is not None:
        options["volumes"][str(job.triton_cache)] = {"bind": SANDBOX_TRITON_CACHE, "mode": "rw"}
    if job.device == "cuda":
        # The one GPU, as the NVIDIA runtime names it (an index or a UUID of the host's).
        options["device_requests"] = [DeviceRequest(device_ids=[nvidia.host_device_entry(job.host_gpu)], capabilities=[["gpu"]])]
        # The NVIDIA runtime mounts only the driver libraries these capabilities name.
        env["NVIDIA_DRIVER_CAPABILITIES"] = "compute,utility"
    return options


def _probe_image(client: Any, image: str) -> Toolchain | str:
    """Whether the image's worker interpreter finds a C compiler and Python.h (a throwaway container)."""
    try:
        output = client.containers.run(
            image, [RUNTIME_PYTHON, "-c", PROBE], environment={"PATH": WORKER_PATH}, network_mode="none", remove=True, stdout=True, stderr=False
        )
        return parse_probe(output.decode(errors="replace"))
    except Exception as error:  # noqa: BLE001 - any failure means: cannot tell
        return f"could not probe the image for a C compiler and Python.h ({type(error).__name__}: {str(error)[-300:]})"


def _tail(container: Any, stream: str) -> str:
    try:
        data = container.logs(stdout=stream == "stdout", stderr=stream == "stderr", tail=200)
    except Exception:  # noqa: BLE001 - logs are diagnostics only
        return ""
    return data.decode(errors="replace")[-TAIL:]


class DockerSandbox:
    name = "docker"
    isolated = True

    def check(self) -> str | None:
        try:
            require("docker", "the docker sandbox")
        except MissingExtra as error:
            return str(error)
        try:
            client = _client()
            client.ping()
        except Exception as error:  # noqa: BLE001 - any failure means: no engine
            return f"no Docker engine answers ({type(error).__name__}): {ENGINE_HINT}"
        try:
            image = client.images.get(image_name())
        except Exception:  # noqa: BLE001
            return f"image {image_name()} not found: {BUILD_HINT}"
        problem = gpu_toolchain_problem(("docker", image.id), lambda: _probe_image(client, image.id))
        return f"image {image_name()}: {problem} (rebuild it with the current sandbox/ scripts)" if problem else None

    def run(self, job: Job, timeout_s: float, link: WitnessLink | None = None) -> RunOutcome:
        start = time.monotonic()
        with lease_uid() as uid:
            try:
                container = _create_and_start(job, uid, None)
            except _NeverStarted as never:
                return _never_started(start, str(never))
            return ContainerWorker(job, container, warm=False).run(timeout_s, link)

    def start_warm(self, job: Job, warm: WarmStart) -> ContainerWorker:
        held = ExitStack()
        try:
            uid = held.enter_context(lease_uid())
            container = _create_and_start(job, uid, warm)
        except BaseException:
            held.close()
            raise
        return ContainerWorker(job, container, warm=True, prepare=lambda: open_job_to(job, uid), release=held.close)


class _NeverStarted(KernelGymError):
    """The engine could not create or start the container: the gym's failure, in the engine's words."""


def _create_and_start(job: Job, uid: int, warm: WarmStart | None) -> Any:
    """The job's container, created and started (removed again if it could not start)."""
    open_job_to(job, uid)
    client = _client()
    try:
        container = client.containers.create(**container_options(job, uid, warm))
    except Exception as error:  # the engine could not even create it: the gym's failure
        raise _NeverStarted(f"docker could not create the container: {_engine_error(error)}") from error
    try:
        container.start()
    except Exception as error:  # e.g. the runtime could not exec the interpreter
        _remove(container)
        raise _NeverStarted(f"docker could not start the container: {_engine_error(error)}") from error
    return container


def _remove(container: Any) -> None:
    try:
        container.remove(force=True)
    except Exception:  # noqa: BLE001 - already gone
        pass


@dataclass
class ContainerWorker:
    """A started container: cold (its job written before the start) or warm (waiting for the go file)."""

    job: Job
    container: Any
    warm: bool
    # Before the go file: hand the job's files, written after the start, to the container's uid.
    prepare: Callable[[], None] | None = None
    # Once the container is removed: give back the uid lease.
    release: Callable[[], None] | None = None
    _released: bool = False

    def exited(self) -> bool:
        try:
            self.container.reload()
        except Exception:  # noqa: BLE001 - gone from the engine
            return True
        return self.container.status not in {"created", "running"}

    def boost(self) -> None:
        """Containers start at normal priority (WarmStart.niceness is not applied to them)."""

    def run(self, timeout_s: float, link: WitnessLink | None = None) -> RunOutcome:
        try:
            if self.warm:
                start_warm_job(self.job, self.prepare)
            return self._supervise(timeout_s, link)
        finally:
            _remove(self.container)
            self._release()

    def discard(self) -> None:
        if not self._released:
            _remove(self.container)
            self._release()

    def _release(self) -> None:
        if not self._released:
            self._released = True
            if self.release is not None:
                self.release()

    def _stdout(self) -> bytes:
        """The container's standard output so far (the witness's channel: pid 1 writes it, nothing else can)."""
        try:
            return bytes(self.container.logs(stdout=True, stderr=False))
        except Exception:  # noqa: BLE001 - gone from the engine
            return b""

    def _supervise(self, timeout_s: float, link: WitnessLink | None = None) -> RunOutcome:
        container, start = self.container, time.monotonic()
        polled = [0.0]

        def poll_link() -> None:
            # The engine answers over HTTP: ask at most every LINK_POLL_S.
            if link is not None and time.monotonic() - polled[0] >= LINK_POLL_S:
                polled[0] = time.monotonic()
                link.poll(self._stdout())

        timed_out, limit_hit = watch(lambda: not self.exited(), self.job, timeout_s, start, poll_link if link is not None else None)
        if timed_out or limit_hit:
            try:
                container.kill()
            except Exception:  # noqa: BLE001 - it may have exited on its own meanwhile
                pass
        state = container.wait(timeout=30)
        status = int(state.get("StatusCode", -1))
        exit_code = -(status - 128) if status > 128 else status
        container.reload()
        if container.attrs.get("State", {}).get("OOMKilled"):
            limit_hit = limit_hit or "memory"
        if link is not None:
            link.poll(self._stdout())
        return RunOutcome(
            exit_code=exit_code,
            timed_out=timed_out,
            wall_s=time.monotonic() - start,
            stdout_tail=_tail(container, "stdout"),
            stderr_tail=_tail(container, "stderr"),
            limit_hit=limit_hit,
        )


def _engine_error(error: Exception) -> str:
    return f"{type(error).__name__}: {str(error)[-1000:]}"


def _never_started(start: float, why: str) -> RunOutcome:
    """The outcome of a container that never ran the worker (the submission never ran either)."""
    return RunOutcome(exit_code=None, timed_out=False, wall_s=time.monotonic() - start, stdout_tail="", stderr_tail=why[-TAIL:], infra_failure=why)


register(DockerSandbox())


def remove_orphans() -> int:
    """Remove warm containers whose trusted process is gone (it was killed before it could); returns how many."""
    try:
        containers = _client().containers.list(all=True, filters={"label": ["kgym.sandbox=1", "kgym.warm=1"]})
    except Exception:  # noqa: BLE001 - no engine: nothing to sweep
        return 0
    removed = 0
    for container in containers:
        owner = container.labels.get("kgym.owner", "")
        if owner.isdigit() and not pid_alive(int(owner)):
            _remove(container)
            removed += 1
    return removed
