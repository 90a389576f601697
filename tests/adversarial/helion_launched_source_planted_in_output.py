"""Trick: plant the generated module's source in the output folder yourself. After each call the file deletes the module Helion wrote into the compile cache (so the worker has nothing to send back for it) and writes its own text for that module as `launched/<key>.py` in the output folder, through a Helion autotuner helper that writes files (Helion's frames are trusted by the audit hooks): the launched function's code is kept, the constant it tiles by is changed (1024 -> 2048). The output folder's `launched/` entries are not hash-checked against what the worker wrote, so the witness vets and replays the planted text. What stops it: the static audit; with the audit off, the generated module's text is read when Helion loads it, and the worker writes one file per module key with its exclusive writer, so the planted file is a forgery (`result_channel_forgery`).

expect: rejected
tasks: l1/vector_add
reason: audit:sys
runtime: yes
"""

import hashlib
import linecache


import torch
import helion
import helion.language as hl
import helion._compiler.host_function as _hf
import helion._compiler.triton.backend as _backend
import helion.autotuner.handoff_agent as _handoff
import helion.runtime.config as _config

_modules = _hf.sys.modules
_DONE = []


@helion.kernel(config=helion.Config(block_sizes=[1024], num_warps=4), static_shapes=True)
def add(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    out = torch.empty_like(x)
    for tile in hl.tile(x.size(0)):
        out[tile] = x[tile] + y[tile]
    return out


def _plant(x, y):
    run = getattr(add.bind((x, y)), "_run", None)
    path = getattr(_modules.get(getattr(run, "__module__", "")), "__file__", None)
    if not path or path in _DONE:
        return
    real = _backend.os.path.realpath(path)
    text = "".join(linecache.getlines(path))
    forged = text.replace("_BLOCK_SIZE_0 = tl.constexpr(1024)", "_BLOCK_SIZE_0 = tl.constexpr(2048)")
    key = hashlib.sha256(real.encode()).hexdigest()[:16]
    _handoff._write_sources(_config.Path("/job/out/launched"), {key + ".py": forged})
    _backend.os.remove(path)
    _DONE.append(path)


def kernel(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    out = add(x, y)
    _plant(x, y)
    return out
