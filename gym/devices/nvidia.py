"""What the host's NVIDIA driver gives one cuda job: its one GPU, and the driver libraries.

Every backend hands a cuda job exactly one GPU, named by `Job.gpu_index`: the
index the trusted process uses for it (its `cuda:N`). When the host itself
sets CUDA_VISIBLE_DEVICES, index N means the N-th entry of that list, as it
does for CUDA. Inside the bwrap and docker sandboxes that GPU is the only one
there, so the worker sees it as `cuda:0` (see `bwrap_device_nodes`).

The paths are module attributes so tests can point them at fake folders.
"""

from __future__ import annotations

import functools
import glob
import os
import re
import shutil
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from gym.errors import SandboxUnavailable

# Where the device nodes are, and where the driver describes each GPU (one folder per PCI address).
DEV_ROOT = Path("/dev")
PROC_GPUS = Path("/proc/driver/nvidia/gpus")
# The nodes every CUDA process opens besides its GPU's own /dev/nvidiaN.
CONTROL_NODES = ("nvidiactl", "nvidia-uvm", "nvidia-uvm-tools", "nvidia-modeset")
CAPS_FOLDER = "nvidia-caps"
# The driver library libcuda (torch and Triton's launcher dlopen it), and where
# installs outside the loader's default search keep it (NVIDIA's container
# layout, WSL).
DRIVER_LIBRARY = "libcuda.so.1"
DRIVER_LIBRARY_FOLDERS = ("/usr/local/nvidia/lib64", "/usr/local/nvidia/lib", "/usr/lib/wsl/lib")


@dataclass(frozen=True)
class HostGpu:
    # PCI address, e.g. "0000:18:00.0" (the order nvidia-smi numbers GPUs in).
    bus_id: str
    # N of its /dev/nvidiaN node.
    minor: int
    # "GPU-..." (empty when the driver did not say).
    uuid: str


def host_visible_entries(environ: Mapping[str, str] | None = None) -> list[str] | None:
    """The host's CUDA_VISIBLE_DEVICES as a list (None when it is not set)."""
    value = (os.environ if environ is None else environ).get("CUDA_VISIBLE_DEVICES")
    if value is None:
        return None
    return [entry.strip() for entry in value.split(",") if entry.strip()]


def host_device_entry(gpu_index: int, environ: Mapping[str, str] | None = None) -> str:
    """How CUDA on the host names the job's GPU: entry `gpu_index` of the host's
    CUDA_VISIBLE_DEVICES when that is set (an index, a UUID or a MIG name), else the index."""
    if gpu_index < 0:
        raise SandboxUnavailable(f"GPU index {gpu_index} is negative")
    entries = host_visible_entries(environ)
    if entries is None:
        return str(gpu_index)
    if gpu_index >= len(entries):
        raise SandboxUnavailable(f"GPU index {gpu_index} is not visible: the host's CUDA_VISIBLE_DEVICES={','.join(entries)!r} names {len(entries)} GPU(s)")
    return entries[gpu_index]


def host_gpus(proc_gpus: Path | None = None) -> list[HostGpu]:
    """The GPUs the driver reports in /proc, in PCI order (empty when it reports none)."""
    folder = PROC_GPUS if proc_gpus is None else proc_gpus
    gpus: list[HostGpu] = []
    for information in sorted(glob.glob(str(folder / "*" / "information"))):
        fields: dict[str, str] = {}
        try:
            for line in Path(information).read_text(errors="replace").splitlines():
                key, _, value = line.partition(":")
                fields[key.strip()] = value.strip()
            minor = int(fields["Device Minor"])
        except (OSError, KeyError, ValueError):
            continue
        gpus.append(HostGpu(bus_id=Path(information).parent.name, minor=minor, uuid=fields.get("GPU UUID", "")))
    return gpus


def device_minor(entry: str, gpus: list[HostGpu] | None = None) -> int:
    """N of /dev/nvidiaN for a host CUDA_VISIBLE_DEVICES entry.

    A number is a position in PCI order, which is also CUDA's order on hosts
    with one GPU model (on mixed hosts, run the grader with
    CUDA_DEVICE_ORDER=PCI_BUS_ID); a "GPU-..." UUID (or a unique prefix) is
    looked up. Without /proc/driver/nvidia the number is taken as the minor.
    """
    gpus = host_gpus() if gpus is None else gpus
    if re.fullmatch(r"\d+", entry):
        position = int(entry)
        if not gpus:
            return position
        if position >= len(gpus):
            raise SandboxUnavailable(f"GPU {position} does not exist: the driver reports {len(gpus)} GPU(s)")
        return gpus[position].minor
    if entry.startswith("GPU-"):
        matches = [gpu for gpu in gpus if gpu.uuid.startswith(entry)]
        if len(matches) == 1:
            return matches[0].minor
        raise SandboxUnavailable(f"GPU {entry} is not one of the {len(gpus)} GPU(s) /proc/driver/nvidia reports (or not a unique prefix)")
    raise SandboxUnavailable(
        f"CUDA_VISIBLE_DEVICES entry {entry!r} (a MIG device?) cannot be mapped to a /dev/nvidiaN node; the bwrap sandbox binds whole GPUs only (use --sandbox docker)"
    )


def bwrap_device_nodes(gpu_index: int, environ: Mapping[str, str] | None = None) -> list[tuple[str, str]]:
    """(host path, path in the sandbox) of every NVIDIA node the job's sandbox gets.

    Exactly one GPU node, /dev/nvidiaN for the job's GPU, plus the control
    nodes and /dev/nvidia-caps/* that exist; never another /dev/nvidiaM.

    With one GPU node in a fresh /dev, CUDA and NVML enumerate one GPU: the
    driver skips GPUs whose node it cannot open, and it cannot create the
    missing ones (no CAP_MKNOD in the user namespace, and no_new_privs keeps
    the setuid nvidia-modprobe from doing it). This is how NVIDIA's container
    runtime isolates GPUs, and why GPUs inside a container always start at 0
    (NVIDIA/nvidia-docker#170, #907; NVIDIA/nvidia-container-toolkit#73). So
    the worker gets CUDA_VISIBLE_DEVICES=0 (`SANDBOX_VISIBLE_DEVICES`), never
    the host index N: with one GPU enumerated, N > 0 would name no GPU. Should
    a driver ever list the unbound GPUs too, "0" still cannot reach another
    GPU (its node is absent, so opening it fails): the setting fails closed.
    """
    minor = device_minor(host_device_entry(gpu_index, environ))
    gpu = DEV_ROOT / f"nvidia{minor}"
    if not gpu.exists():
        raise SandboxUnavailable(f"{gpu} does not exist: the job's GPU ({gpu_index}) has no device node here (is the NVIDIA driver loaded?)")
    nodes = [gpu] + [DEV_ROOT / name for name in CONTROL_NODES if (DEV_ROOT / name).exists()]
    nodes += sorted(Path(path) for path in glob.glob(str(DEV_ROOT / CAPS_FOLDER / "*")))
    return [(str(node), "/dev/" + str(node.relative_to(DEV_ROOT))) for node in nodes]


# What a sandbox that holds only the job's GPU calls it (see `bwrap_device_nodes`).
SANDBOX_VISIBLE_DEVICES = "0"


@functools.lru_cache(maxsize=1)
def _ldconfig_driver_folders() -> tuple[str, ...]:
    """Folders the host's loader cache (`ldconfig -p`) has libcuda.so.1 in; Triton asks it too."""
    ldconfig = shutil.which("ldconfig") or ("/sbin/ldconfig" if os.path.exists("/sbin/ldconfig") else None)
    if ldconfig is None:
        return ()
    try:
        listing = subprocess.run([ldconfig, "-p"], capture_output=True, text=True, timeout=10).stdout
    except (OSError, subprocess.TimeoutExpired):
        return ()
    return tuple(os.path.dirname(line.split("=>")[-1].strip()) for line in listing.splitlines() if DRIVER_LIBRARY in line and "=>" in line)


def driver_library_folders(environ: Mapping[str, str] | None = None, ldconfig_folders: tuple[str, ...] | None = None) -> list[str]:
    """Folders that hold the driver library: from the host's LD_LIBRARY_PATH, its loader cache
    and the usual places outside /usr, in that order, each once; only those that exist."""
    environ = os.environ if environ is None else environ
    candidates = [folder for folder in environ.get("LD_LIBRARY_PATH", "").split(":") if folder]
    candidates += _ldconfig_driver_folders() if ldconfig_folders is None else ldconfig_folders
    candidates += DRIVER_LIBRARY_FOLDERS
    folders: list[str] = []
    for folder in candidates:
        folder = os.path.normpath(folder)
        if folder not in folders and os.path.isabs(folder) and os.path.exists(os.path.join(folder, DRIVER_LIBRARY)):
            folders.append(folder)
    return folders


def _inside(path: str, roots: list[str]) -> bool:
    return any(path == root or path.startswith(root.rstrip("/") + "/") for root in roots)


def bwrap_driver_binds(
    visible_roots: list[str], environ: Mapping[str, str] | None = None, ldconfig_folders: tuple[str, ...] | None = None
) -> tuple[list[str], list[str]]:
    """(folders to bind read-only, the worker's LD_LIBRARY_PATH entries) for a driver outside
    `visible_roots` (the sandbox's /usr and runtime); both empty when libcuda is under /usr."""
    binds: list[str] = []
    library_path: list[str] = []
    for folder in driver_library_folders(environ, ldconfig_folders):
        real = os.path.realpath(folder)
        target = os.path.dirname(os.path.realpath(os.path.join(folder, DRIVER_LIBRARY)))
        if _inside(real, visible_roots) and _inside(target, visible_roots):
            continue
        library_path.append(folder)
        for needed in (folder, target):
            if not _inside(os.path.realpath(needed), visible_roots) and needed not in binds:
                binds.append(needed)
    return binds, library_path
