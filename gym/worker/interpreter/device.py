"""A documented fake GPU for device queries inside the CPU worker.

Honest kernel files ask the device for its size (`torch.cuda.get_device_properties(...)
.multi_processor_count`, `triton.runtime.driver.active.utils.get_device_properties(dev)
["multiprocessor_count"]`, `torch.cuda.current_device()`) and wrap launches in
`with torch.cuda.device(x):`. On CPU there is no device and all of these raise. Inside the
worker on CPU they answer for FAKE_DEVICE_NAME, H100-like figures, and the device
context manager is a no-op. `torch.cuda.is_available()` stays False: tensors live on the
CPU. `jit_fn.warmup(...)` returns an InterpretedKernel (placeholder n_regs and shared
memory; launching it interprets the kernel) rather than None. Installed only by the
worker, only on CPU. Only explicit driver queries see the
fake target: `triton.language.target_info` (is_cuda(), cuda_capability_geq()) still sees
none, as before, so kernels keep to portable code instead of PTX inline assembly.
"""

from __future__ import annotations

from collections.abc import Callable
from types import SimpleNamespace
from typing import Any

from .limits import FAKE_DEVICE_NAME, WARMUP_N_REGS, WARMUP_SHARED

SM_COUNT = 132
MAX_SHARED_MEM = 232448  # bytes per block (opt-in), as on an H100 SXM
PROPERTIES: dict[str, int] = {
    "max_shared_mem": MAX_SHARED_MEM,
    "max_num_regs": 65536,
    "multiprocessor_count": SM_COUNT,
    "warpSize": 32,
    "sm_clock_rate": 1980000,  # kHz
    "mem_clock_rate": 2619000,  # kHz
    "mem_bus_width": 5120,  # bits
}
CAPABILITY = (9, 0)


class FakeDeviceProperties:
    """What `torch.cuda.get_device_properties` answers on CPU (the fields of torch's _CudaDeviceProperties)."""

    name = FAKE_DEVICE_NAME
    major, minor = CAPABILITY
    total_memory = 80 * 1024**3
    multi_processor_count = SM_COUNT
    L2_cache_size = 50 * 1024**2
    max_threads_per_multi_processor = 2048
    max_threads_per_block = 1024
    warp_size = 32
    regs_per_multiprocessor = 65536
    shared_memory_per_block = 49152
    shared_memory_per_block_optin = MAX_SHARED_MEM
    shared_memory_per_multiprocessor = 233472
    is_integrated = 0
    is_multi_gpu_board = 0
    uuid = "00000000-0000-0000-0000-000000000000"
    pci_bus_id = pci_device_id = pci_domain_id = 0
    gcnArchName = ""

    def __repr__(self) -> str:
        return (
            f"_CudaDeviceProperties(name='{self.name}', major={self.major}, minor={self.minor}, "
            f"total_memory={self.total_memory // 1024**2}MB, multi_processor_count={self.multi_processor_count}, "
            f"L2_cache_size={self.L2_cache_size // 1024**2}MB)"
        )


FAKE_PROPERTIES = FakeDeviceProperties()


class FakeDriver:
    """`triton.runtime.driver.active` on CPU: device, stream and property queries of a fake H100.

    It compiles and launches nothing (the interpreter does); target queries answer
    cuda / sm_90 / warp 32, `get_active_torch_device()` the CPU."""

    def __init__(self, benchmarker: Callable[..., Any]) -> None:
        import torch

        self._benchmarker = benchmarker
        self.utils = SimpleNamespace(
            get_device_properties=lambda device=0: dict(PROPERTIES),
            set_printf_fifo_size=lambda size=0: None,
        )
        self._torch_device = torch.device("cpu")

    @classmethod
    def is_active(cls) -> bool:
        return True

    def get_current_device(self) -> int:
        return 0

    def set_current_device(self, device: Any) -> None:
        return None

    def get_current_stream(self, device: Any = None) -> int:
        return 0

    def get_current_target(self) -> Any:
        from triton.backends.compiler import GPUTarget

        return GPUTarget("cuda", CAPABILITY[0] * 10 + CAPABILITY[1], 32)

    def get_active_torch_device(self) -> Any:
        return self._torch_device

    def get_device_interface(self) -> Any:
        return SimpleNamespace(
            current_device=lambda: 0,
            synchronize=lambda device=None: None,
            get_device_properties=get_device_properties,
            get_device_capability=get_device_capability,
            get_device_name=get_device_name,
        )

    def get_benchmarker(self) -> Callable[..., Any]:
        return self._benchmarker

    def get_empty_cache_for_benchmark(self) -> Any:
        return None

    def clear_cache(self, cache: Any) -> None:
        return None

    def map_python_to_cpp_type(self, ty: str) -> str:
        raise NotImplementedError("the CPU interpreter compiles no C++ launcher")

    def __repr__(self) -> str:
        return f"FakeDriver({FAKE_DEVICE_NAME!r})"


class InterpretedKernel:
    """What `jit_fn.warmup(...)` returns under the interpreter instead of None: a CompiledKernel
    look-alike. Nothing was compiled: `n_regs`, `n_spills` and `metadata.shared` are
    placeholders, and launching it (`kernel[grid](*args)`, constexprs included, as with a
    CompiledKernel) runs the interpreted function with the warm-up's constexprs."""

    n_regs = WARMUP_N_REGS
    n_spills = 0
    n_max_threads = 1024

    def __init__(self, function: Any, kwargs: dict[str, Any]) -> None:
        self._function = function
        self._kwargs = kwargs
        self.name = getattr(function, "__name__", "kernel")
        self.metadata = SimpleNamespace(
            name=self.name,
            shared=WARMUP_SHARED,
            num_warps=kwargs.get("num_warps", 4),
            num_stages=kwargs.get("num_stages", 3),
            num_ctas=kwargs.get("num_ctas", 1),
        )
        self.asm: dict[str, str] = {}

    def _init_handles(self) -> None:
        return None

    def __getitem__(self, grid: Any) -> Callable[..., Any]:
        def runner(*args: Any, stream: Any = None) -> Any:
            names = list(getattr(self._function, "arg_names", []))[len(args) :]
            given = {name: value for name, value in self._kwargs.items() if name in names}
            return self._function.run(*args, grid=grid, warmup=False, **given)

        return runner


def get_device_properties(device: Any = None) -> FakeDeviceProperties:
    return FAKE_PROPERTIES


def get_device_capability(device: Any = None) -> tuple[int, int]:
    return CAPABILITY


def get_device_name(device: Any = None) -> str:
    return FAKE_DEVICE_NAME


def current_device() -> int:
    return 0


def set_device(device: Any) -> None:
    return None


def _device_init(self: Any, device: Any) -> None:
    self.idx = -1
    self.prev_idx = -1


def _device_enter(self: Any) -> None:
    return None


def _device_exit(self: Any, *exc: Any) -> bool:
    return False


def install(patch: Callable[[Any, str, Any], None], benchmarker: Callable[..., Any]) -> None:
    """Answer device queries for the fake device (call only on CPU, before the submission is imported)."""
    import torch
    from triton.runtime import driver

    if torch.cuda.is_available():  # pragma: no cover - the worker installs this on CPU only
        return
    for name, value in (
        ("get_device_properties", get_device_properties),
        ("get_device_capability", get_device_capability),
        ("get_device_name", get_device_name),
        ("current_device", current_device),
        ("set_device", set_device),
    ):
        patch(torch.cuda, name, value)
    # `with torch.cuda.device(t):` (and torch.cuda.device_of) is a no-op on CPU tensors.
    patch(torch.cuda.device, "__init__", _device_init)
    patch(torch.cuda.device, "__enter__", _device_enter)
    patch(torch.cuda.device, "__exit__", _device_exit)
    # `jit_fn.warmup(...)` returns an InterpretedKernel rather than None.
    from triton.runtime.interpreter import InterpretedFunction

    warmup = InterpretedFunction.warmup

    def _warmup(self: Any, *args: Any, grid: Any, **kwargs: Any) -> Any:
        warmup(self, *args, grid=grid, **kwargs)
        return InterpretedKernel(self, kwargs)

    patch(InterpretedFunction, "warmup", _warmup)
    fake = FakeDriver(benchmarker)
    driver.set_active(fake)
    if getattr(driver, "_default", fake) is None:
        driver._default = fake
    # Kernels' own target checks (`is_cuda()`, `cuda_capability_geq(9)`) still see no target, as the
    # interpreter has none: they keep to portable code rather than PTX inline assembly it cannot run.
    import triton.language.target_info as target_info

    patch(target_info, "current_target", _no_target)


def _no_target() -> None:
    return None


_no_target.__triton_builtin__ = True  # type: ignore[attr-defined]
