"""One GPU per cuda job, on every backend, checked without a GPU: the bwrap argv, the
docker options and the process environment, against fake device nodes and driver folders."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import torch

from gym.devices import nvidia
from gym.errors import SandboxUnavailable
from gym.grading.running.job import gpu_index as job_gpu_index
from gym.sandbox import Job, Limits
from gym.sandbox.bwrap import SANDBOX_TRITON_CACHE, BwrapSandbox, runtime_python
from gym.sandbox.process import process_environment

CONTROL = ["/dev/nvidiactl", "/dev/nvidia-uvm", "/dev/nvidia-uvm-tools", "/dev/nvidia-modeset"]
CAPS = ["/dev/nvidia-caps/nvidia-cap1", "/dev/nvidia-caps/nvidia-cap2"]


@pytest.fixture
def fake_host(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A host with /dev/nvidia0..3, the control nodes and two caps, no /proc/driver/nvidia,
    no CUDA_VISIBLE_DEVICES and no driver library outside /usr."""
    dev = tmp_path / "dev"
    (dev / "nvidia-caps").mkdir(parents=True)
    for name in ["nvidia0", "nvidia1", "nvidia2", "nvidia3", "nvidiactl", "nvidia-uvm", "nvidia-uvm-tools", "nvidia-modeset"]:
        (dev / name).write_text("")
    for name in ["nvidia-cap1", "nvidia-cap2"]:
        (dev / "nvidia-caps" / name).write_text("")
    monkeypatch.setattr(nvidia, "DEV_ROOT", dev)
    monkeypatch.setattr(nvidia, "PROC_GPUS", tmp_path / "no-proc")
    monkeypatch.setattr(nvidia, "DRIVER_LIBRARY_FOLDERS", ())
    monkeypatch.setattr(nvidia, "_ldconfig_driver_folders", lambda: ())
    for name in ("CUDA_VISIBLE_DEVICES", "LD_LIBRARY_PATH", "CUDA_DEVICE_ORDER"):
        monkeypatch.delenv(name, raising=False)
    return dev


def make_job(root: Path, device: str = "cuda", **kwargs) -> Job:
    root.mkdir(parents=True, exist_ok=True)
    return Job.in_folder(root, device, Limits(), **kwargs)


def dev_binds(command: list[str]) -> dict[str, str]:
    """target -> source of every --dev-bind."""
    return {command[i + 2]: command[i + 1] for i, flag in enumerate(command) if flag == "--dev-bind"}


def ro_binds(command: list[str]) -> list[tuple[str, str]]:
    return [(command[i + 1], command[i + 2]) for i, flag in enumerate(command) if flag == "--ro-bind"]


def setenv(command: list[str]) -> dict[str, str]:
    return {command[i + 1]: command[i + 2] for i, flag in enumerate(command) if flag == "--setenv"}


def bwrap(job: Job) -> list[str]:
    return BwrapSandbox().command(job, 61005, runtime_python())


def test_job_defaults_keep_existing_callers_working(tmp_path: Path) -> None:
    job = make_job(tmp_path / "a", "cpu")
    assert job.gpu_index is None and job.host_gpu == 0 and job.triton_cache is None
    other = make_job(tmp_path / "b", gpu_index=3, triton_cache=tmp_path / "cache")
    assert other.host_gpu == 3 and other.triton_cache == tmp_path / "cache" and (tmp_path / "cache").is_dir()


def test_bwrap_binds_only_the_jobs_gpu_and_the_control_nodes(fake_host: Path, tmp_path: Path) -> None:
    command = bwrap(make_job(tmp_path / "job", gpu_index=2))
    binds = dev_binds(command)
    assert sorted(binds) == sorted(["/dev/nvidia2", *CONTROL, *CAPS])
    assert binds["/dev/nvidia2"] == str(fake_host / "nvidia2")
    for other in ("/dev/nvidia0", "/dev/nvidia1", "/dev/nvidia3"):
        assert other not in command
    # The fresh /dev comes first, so the nodes bound after it are not hidden by it.
    assert command.index("--dev") < min(i for i, flag in enumerate(command) if flag == "--dev-bind")
    env = setenv(command)
    # The sandbox holds one GPU: CUDA numbers it 0, whatever its host index.
    assert env["CUDA_VISIBLE_DEVICES"] == "0"
    assert "LD_LIBRARY_PATH" not in env and "TRITON_INTERPRET" not in env


def test_bwrap_gpu_index_none_means_gpu_0(fake_host: Path, tmp_path: Path) -> None:
    binds = dev_binds(bwrap(make_job(tmp_path / "job")))
    assert "/dev/nvidia0" in binds and not {"/dev/nvidia1", "/dev/nvidia2", "/dev/nvidia3"} & set(binds)


def test_bwrap_cpu_jobs_get_no_nvidia_nodes_and_no_gpu(fake_host: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "1,2")
    monkeypatch.setenv("LD_LIBRARY_PATH", str(tmp_path))
    command = bwrap(make_job(tmp_path / "job", device="cpu", gpu_index=2))
    assert dev_binds(command) == {}
    assert not any("nvidia" in arg for arg in command)
    env = setenv(command)
    assert env["CUDA_VISIBLE_DEVICES"] == "" and env["TRITON_INTERPRET"] == "1" and "LD_LIBRARY_PATH" not in env


def test_bwrap_maps_the_index_through_the_hosts_visible_devices(fake_host: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "3,1")
    binds = dev_binds(bwrap(make_job(tmp_path / "job", gpu_index=1)))
    assert "/dev/nvidia1" in binds and not {"/dev/nvidia0", "/dev/nvidia2", "/dev/nvidia3"} & set(binds)
    # The host's list never reaches the worker: the sandbox's one GPU is 0.
    assert setenv(bwrap(make_job(tmp_path / "job2", gpu_index=0)))["CUDA_VISIBLE_DEVICES"] == "0"


def bound_gpus(command: list[str]) -> set[int]:
    """N of every /dev/nvidiaN anywhere in the command (host path or sandbox path)."""
    return {int(match.group(1)) for arg in command if (match := re.search(r"/nvidia(\d+)$", arg))}


@pytest.mark.parametrize("index", [0, 1, 2, 3])
def test_bwrap_binds_each_gpu_alone_and_the_worker_calls_it_0(fake_host: Path, tmp_path: Path, index: int) -> None:
    # The device pool's slot cuda:N becomes the job's GPU index N (gym.grading.running.job.gpu_index).
    command = bwrap(make_job(tmp_path / "job", gpu_index=job_gpu_index(torch.device("cuda", index))))
    binds = dev_binds(command)
    assert sorted(binds) == sorted([f"/dev/nvidia{index}", *CONTROL, *CAPS])
    assert binds[f"/dev/nvidia{index}"] == str(fake_host / f"nvidia{index}")
    assert bound_gpus(command) == {index}
    assert setenv(command)["CUDA_VISIBLE_DEVICES"] == "0"


# A four-GPU host whose driver lists minors in PCI order; (host CUDA_VISIBLE_DEVICES, job index, the one node bound).
HOST_LISTS = [
    ("3,1", 0, 3),
    ("3,1", 1, 1),
    ("2,0,3", 2, 3),
    ("1,2,3", 0, 1),
    ("GPU-dddd,GPU-bbbb", 0, 3),
    ("GPU-dddd,GPU-bbbb", 1, 1),
    ("GPU-cc,1", 0, 2),
]
FOUR_GPUS = [("0000:18:00.0", 0, "GPU-aaaa"), ("0000:3a:00.0", 1, "GPU-bbbb"), ("0000:5d:00.0", 2, "GPU-cccc"), ("0000:c1:00.0", 3, "GPU-dddd")]


@pytest.mark.parametrize(("visible", "index", "minor"), HOST_LISTS)
def test_bwrap_binds_the_gpu_the_hosts_list_names(
    fake_host: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, visible: str, index: int, minor: int
) -> None:
    monkeypatch.setattr(nvidia, "PROC_GPUS", write_proc(tmp_path / "proc", FOUR_GPUS))
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", visible)
    command = bwrap(make_job(tmp_path / "job", gpu_index=index))
    assert bound_gpus(command) == {minor} and dev_binds(command)[f"/dev/nvidia{minor}"] == str(fake_host / f"nvidia{minor}")
    # The host's list never reaches the worker.
    assert setenv(command)["CUDA_VISIBLE_DEVICES"] == "0"


def write_proc(root: Path, gpus: list[tuple[str, int, str]]) -> Path:
    for bus_id, minor, uuid in gpus:
        folder = root / bus_id
        folder.mkdir(parents=True)
        (folder / "information").write_text(
            f"Model: \t\t NVIDIA H200\nIRQ: \t\t 42\nGPU UUID: \t {uuid}\nBus Type: \t PCIe\nBus Location: \t {bus_id}\nDevice Minor: \t {minor}\nGPU Excluded:\t No\n"
        )
    return root


def test_minors_come_from_proc_in_pci_order_and_uuids_resolve(fake_host: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Minor numbers that do not follow PCI order.
    proc = write_proc(tmp_path / "proc", [("0000:c1:00.0", 0, "GPU-cccc"), ("0000:18:00.0", 3, "GPU-aaaa"), ("0000:3a:00.0", 2, "GPU-bbbb")])
    monkeypatch.setattr(nvidia, "PROC_GPUS", proc)
    assert [gpu.bus_id for gpu in nvidia.host_gpus()] == ["0000:18:00.0", "0000:3a:00.0", "0000:c1:00.0"]
    assert "/dev/nvidia3" in dev_binds(bwrap(make_job(tmp_path / "a", gpu_index=0)))
    assert "/dev/nvidia0" in dev_binds(bwrap(make_job(tmp_path / "b", gpu_index=2)))
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "GPU-bbbb,GPU-cc")
    assert "/dev/nvidia2" in dev_binds(bwrap(make_job(tmp_path / "c", gpu_index=0)))
    assert "/dev/nvidia0" in dev_binds(bwrap(make_job(tmp_path / "d", gpu_index=1)))
    with pytest.raises(SandboxUnavailable, match="not visible"):
        bwrap(make_job(tmp_path / "e", gpu_index=2))
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "7")
    with pytest.raises(SandboxUnavailable, match="reports 3"):
        bwrap(make_job(tmp_path / "f", gpu_index=0))


def test_bwrap_refuses_what_it_cannot_bind(fake_host: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(SandboxUnavailable, match="nvidia5 does not exist"):
        bwrap(make_job(tmp_path / "a", gpu_index=5))
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "MIG-1234")
    with pytest.raises(SandboxUnavailable, match="MIG"):
        bwrap(make_job(tmp_path / "b", gpu_index=0))
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "")
    with pytest.raises(SandboxUnavailable, match="not visible"):
        bwrap(make_job(tmp_path / "c", gpu_index=0))


def fake_driver(folder: Path) -> Path:
    folder.mkdir(parents=True)
    (folder / "libcuda.so.1").write_text("")
    return folder


def test_bwrap_binds_a_driver_outside_usr_and_puts_it_on_the_library_path(fake_host: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from_env = fake_driver(tmp_path / "nvidia" / "lib64")
    from_cache = fake_driver(tmp_path / "cached")
    monkeypatch.setenv("LD_LIBRARY_PATH", f"{tmp_path / 'empty'}::{from_env}:/usr/lib/x86_64-linux-gnu")
    monkeypatch.setattr(nvidia, "_ldconfig_driver_folders", lambda: (str(from_cache), str(from_env)))
    command = bwrap(make_job(tmp_path / "job", gpu_index=1))
    assert (str(from_env), str(from_env)) in ro_binds(command) and (str(from_cache), str(from_cache)) in ro_binds(command)
    assert setenv(command)["LD_LIBRARY_PATH"] == f"{from_env}:{from_cache}"
    # A folder without libcuda is neither bound nor kept.
    assert str(tmp_path / "empty") not in command
    assert "LD_LIBRARY_PATH" not in setenv(bwrap(make_job(tmp_path / "cpu", device="cpu")))


def test_bwrap_binds_where_the_driver_link_points(fake_host: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    real = fake_driver(tmp_path / "compat")
    links = tmp_path / "links"
    links.mkdir()
    (links / "libcuda.so.1").symlink_to(real / "libcuda.so.1")
    monkeypatch.setattr(nvidia, "DRIVER_LIBRARY_FOLDERS", (str(links),))
    command = bwrap(make_job(tmp_path / "job"))
    assert (str(links), str(links)) in ro_binds(command) and (str(real), str(real)) in ro_binds(command)
    assert setenv(command)["LD_LIBRARY_PATH"] == str(links)


def test_a_driver_under_usr_or_the_runtime_needs_no_bind(tmp_path: Path) -> None:
    usr = Path("/usr/lib/x86_64-linux-gnu")
    runtime = fake_driver(tmp_path / "runtime" / "lib")
    binds, library_path = nvidia.bwrap_driver_binds(["/usr", str(tmp_path / "runtime")], {"LD_LIBRARY_PATH": f"{usr}:{runtime}"}, ldconfig_folders=())
    assert binds == [] and library_path == []


def test_bwrap_binds_the_shared_triton_cache_over_the_private_tmp(fake_host: Path, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    for device in ("cuda", "cpu"):
        command = bwrap(make_job(tmp_path / device, device=device, triton_cache=cache))
        at = command.index(SANDBOX_TRITON_CACHE) - 2
        assert command[at : at + 3] == ["--bind", str(cache), SANDBOX_TRITON_CACHE]
        assert command.index("/tmp") < at, "the cache must be bound after the /tmp tmpfs"
        assert setenv(command)["TRITON_CACHE_DIR"] == SANDBOX_TRITON_CACHE
    plain = bwrap(make_job(tmp_path / "plain"))
    assert str(cache) not in plain and setenv(plain)["TRITON_CACHE_DIR"] == "/tmp/triton"


def test_docker_requests_the_one_gpu(fake_host: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("docker")
    from gym.sandbox.docker_backend import container_options

    options = container_options(make_job(tmp_path / "a", gpu_index=2), 61007)
    (request,) = options["device_requests"]
    assert request.device_ids == ["2"] and request.count in (None, 0) and request.capabilities == [["gpu"]]
    assert options["environment"]["CUDA_VISIBLE_DEVICES"] == "0"
    assert options["environment"]["NVIDIA_DRIVER_CAPABILITIES"] == "compute,utility"
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "5,GPU-abcd")
    assert container_options(make_job(tmp_path / "b", gpu_index=1), 61007)["device_requests"][0].device_ids == ["GPU-abcd"]
    assert container_options(make_job(tmp_path / "c"), 61007)["device_requests"][0].device_ids == ["5"]
    cpu = container_options(make_job(tmp_path / "d", device="cpu", gpu_index=1), 61007)
    assert "device_requests" not in cpu and cpu["environment"]["CUDA_VISIBLE_DEVICES"] == ""


@pytest.mark.parametrize(
    ("visible", "index", "entry"),
    [
        (None, 0, "0"),
        (None, 1, "1"),
        (None, 3, "3"),
        ("3,1", 0, "3"),
        ("3,1", 1, "1"),
        ("2,0,3", 2, "3"),
        ("GPU-dddd,GPU-bbbb", 0, "GPU-dddd"),
        ("GPU-dddd,GPU-bbbb", 1, "GPU-bbbb"),
    ],
)
def test_docker_requests_each_gpu_as_the_host_names_it(
    fake_host: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, visible: str | None, index: int, entry: str
) -> None:
    pytest.importorskip("docker")
    from gym.sandbox.docker_backend import container_options

    if visible is not None:
        monkeypatch.setenv("CUDA_VISIBLE_DEVICES", visible)
    options = container_options(make_job(tmp_path / "job", gpu_index=job_gpu_index(torch.device("cuda", index))), 61007)
    (request,) = options["device_requests"]
    assert request.device_ids == [entry] and request.count in (None, 0)
    assert options["environment"]["CUDA_VISIBLE_DEVICES"] == "0"
    assert not any("nvidia" in str(value).lower() for value in options.get("devices", []))


def test_docker_refuses_a_gpu_the_hosts_list_does_not_have(fake_host: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("docker")
    from gym.sandbox.docker_backend import container_options

    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "3,1")
    with pytest.raises(SandboxUnavailable, match="not visible"):
        container_options(make_job(tmp_path / "job", gpu_index=2), 61007)


def test_docker_mounts_the_shared_triton_cache(tmp_path: Path) -> None:
    pytest.importorskip("docker")
    from gym.sandbox.docker_backend import SANDBOX_TRITON_CACHE as DOCKER_CACHE
    from gym.sandbox.docker_backend import container_options

    cache = tmp_path / "cache"
    options = container_options(make_job(tmp_path / "a", device="cpu", triton_cache=cache), 61007)
    assert options["volumes"][str(cache)] == {"bind": DOCKER_CACHE, "mode": "rw"}
    assert options["environment"]["TRITON_CACHE_DIR"] == DOCKER_CACHE
    assert str(cache) not in container_options(make_job(tmp_path / "b", device="cpu"), 61007)["volumes"]


def test_process_names_the_gpu_as_the_host_does(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)
    monkeypatch.setenv("LD_LIBRARY_PATH", "/usr/local/nvidia/lib64:/opt/x")
    monkeypatch.setenv("CUDA_DEVICE_ORDER", "PCI_BUS_ID")
    env = process_environment(make_job(tmp_path / "a", gpu_index=2), tmp_path / "home")
    assert env["CUDA_VISIBLE_DEVICES"] == "2" and env["LD_LIBRARY_PATH"] == "/usr/local/nvidia/lib64:/opt/x"
    assert env["CUDA_DEVICE_ORDER"] == "PCI_BUS_ID"
    assert process_environment(make_job(tmp_path / "b"), tmp_path / "home")["CUDA_VISIBLE_DEVICES"] == "0"
    # A host list narrows, never widens: index i is its i-th entry.
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "4, 5,6")
    assert process_environment(make_job(tmp_path / "c", gpu_index=1), tmp_path / "home")["CUDA_VISIBLE_DEVICES"] == "5"
    assert process_environment(make_job(tmp_path / "d", gpu_index=2), tmp_path / "home")["CUDA_VISIBLE_DEVICES"] == "6"
    with pytest.raises(SandboxUnavailable, match="not visible"):
        process_environment(make_job(tmp_path / "e", gpu_index=3), tmp_path / "home")
    cpu = process_environment(make_job(tmp_path / "f", device="cpu", gpu_index=1), tmp_path / "home")
    assert cpu["CUDA_VISIBLE_DEVICES"] == "" and "LD_LIBRARY_PATH" not in cpu


def test_process_points_triton_at_the_shared_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("LD_LIBRARY_PATH", raising=False)
    cache = tmp_path / "cache"
    env = process_environment(make_job(tmp_path / "a", gpu_index=0, triton_cache=cache), tmp_path / "home")
    assert env["TRITON_CACHE_DIR"] == str(cache) and "LD_LIBRARY_PATH" not in env
    assert process_environment(make_job(tmp_path / "b"), tmp_path / "home")["TRITON_CACHE_DIR"] == f"{tmp_path / 'home'}/triton"
