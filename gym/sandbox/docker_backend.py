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
from typing import Any

from gym.extras import MissingExtra, require
from gym.sandbox import nvidia
from gym.sandbox.base import TAIL, Job, RunOutcome, register
from gym.sandbox.environment import WORKER_PATH, worker_command, worker_environment
from gym.sandbox.staging import open_job_to
from gym.sandbox.supervise import watch
from gym.sandbox.toolchain import PROBE, Toolchain, gpu_toolchain_problem, parse_probe
from gym.sandbox.uids import lease_uid

DEFAULT_IMAGE = "kgym-sandbox:local"
RUNTIME_PYTHON = os.environ.get("KGYM_DOCKER_PYTHON", os.environ.get("KGYM_SANDBOX_RUNTIME", "/opt/kgym/runtime") + "/bin/python")
SANDBOX_HOME = "/home/sandbox"
SANDBOX_TRITON_CACHE = "/tmp/triton"
LOG_LIMIT = {"max-size": "8m", "max-file": "1"}
BUILD_HINT = "build the image with `sandbox/build_image.sh` (offline) or from `sandbox/Dockerfile.gpu`"
ENGINE_HINT = "install Docker's engine (Debian: apt-get install docker.io) and start it (`dockerd &` where there is no systemd)"


def image_name() -> str:
    return os.environ.get("KGYM_DOCKER_IMAGE", DEFAULT_IMAGE)


def _client() -> Any:
    import docker

    return docker.from_env(timeout=30)


def container_options(job: Job, uid: int) -> dict[str, Any]:
    """Everything `containers.create` is given, in one place (tests read it)."""
    from docker.types import DeviceRequest, LogConfig, Ulimit

    limits = job.limits
    # The container holds only the job's GPU, so it is device 0 there (see gym.sandbox.nvidia).
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
        "command": worker_command(RUNTIME_PYTHON, "/job/in", "/job/out"),
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
        "labels": {"kgym.sandbox": "1", "kgym.uid": str(uid)},
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

    def run(self, job: Job, timeout_s: float) -> RunOutcome:
        with lease_uid() as uid:
            return self._run(job, timeout_s, uid)

    def _run(self, job: Job, timeout_s: float, uid: int) -> RunOutcome:
        open_job_to(job, uid)
        client = _client()
        start = time.monotonic()
        try:
            container = client.containers.create(**container_options(job, uid))
        except Exception as error:  # noqa: BLE001 - the engine could not even create it: the gym's failure
            return _never_started(start, f"docker could not create the container: {_engine_error(error)}")
        timed_out = False
        limit_hit: str | None = None
        exit_code: int | None = None
        try:
            try:
                container.start()
            except Exception as error:  # noqa: BLE001 - e.g. the runtime could not exec the interpreter
                return _never_started(start, f"docker could not start the container: {_engine_error(error)}")

            def running() -> bool:
                container.reload()
                return container.status in {"created", "running"}

            timed_out, limit_hit = watch(running, job, timeout_s, start)
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
            stdout, stderr = _tail(container, "stdout"), _tail(container, "stderr")
        finally:
            try:
                container.remove(force=True)
            except Exception:  # noqa: BLE001 - already gone
                pass
        return RunOutcome(
            exit_code=exit_code,
            timed_out=timed_out,
            wall_s=time.monotonic() - start,
            stdout_tail=stdout,
            stderr_tail=stderr,
            limit_hit=limit_hit,
        )


def _engine_error(error: Exception) -> str:
    return f"{type(error).__name__}: {str(error)[-1000:]}"


def _never_started(start: float, why: str) -> RunOutcome:
    """The outcome of a container that never ran the worker (the submission never ran either)."""
    return RunOutcome(exit_code=None, timed_out=False, wall_s=time.monotonic() - start, stdout_tail="", stderr_tail=why[-TAIL:], infra_failure=why)


register(DockerSandbox())
