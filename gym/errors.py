"""Every exception the gym raises on purpose, in one tree.

    KernelGymError                 the root: `message`, and `http_status` (what `kgym serve` answers when one escapes a request)
    ├── SettingError (ValueError)  a KGYM_* variable whose value is not of its type (`name`, `value`, `kind`)
    ├── RecordVersionError         an archived record newer than this gym reads (`source`, `model`, `found`, `understood`)
    ├── MissingExtra               an optional dependency is not installed (`extra`, `feature`, `module`)            501
    ├── UnknownPlugin (LookupError)  no sandbox/executor/agent registered under a name (`kind`, `name`, `known`)
    ├── TaskError
    │   ├── TaskLoadError          a task file that cannot be used (`path`)                                      404
    │   ├── ReferenceLoadError     a task's "module:function" does not resolve (`target`)
    │   ├── ProblemError           a KernelBench problem file that cannot be used
    │   └── ContractPresetError (ValueError)  an unknown contract preset (`name`, `known`)                      400
    ├── SandboxUnavailable         a backend or a GPU this host cannot give a job (`sandbox`)                      503
    ├── GradingError
    │   ├── GradeFailure           ends a grade early with `status` (`message`, `flags`): never escapes `grade()`
    │   ├── KernelSourceError      the submission's jit code cannot be replayed on its own (`line`)
    │   ├── BaselineCacheError     a reference-baseline cache that cannot be used
    │   └── UnknownProfile (ValueError)  an unknown GPU profile or `--profile` value (`name`, `known`)
    ├── ExecutorError (ValueError)   an executor that cannot be built as asked                                  503
    ├── TaskBundleError            a task whose files cannot travel with a Ray grade
    ├── HarnessError
    │   ├── EnvError (ValueError)  a call the episode cannot take                                              409
    │   ├── AgentError (ValueError)  an agent that cannot be made or cannot go on (`agent`)                    400
    │   ├── RunFolderError         a run folder that cannot be used (`folder`)                                 409
    │   └── GymClientError (RuntimeError)  the served gym refused a call (`status`, `detail`, `code`, `retry_after_s`)  502
    ├── ServeError
    │   ├── AuthConfigError (ValueError)  a server configuration that would leave the gym open
    │   ├── ServeStateError        a state folder that cannot be opened
    │   ├── SessionsFull (RuntimeError)  every session slot is busy (`retry_after_s`)                          503
    │   ├── QueueFull (RuntimeError)     every grading slot is busy and the line is full (`retry_after_s`)       503
    │   └── McpParamsError (ValueError)  a tools/call with bad parameters (JSON-RPC -32602)                    400
    ├── IntegrationError
    │   ├── EpisodeOver (RuntimeError)   `step` after a SkyRL episode ended                                    409
    │   └── InteractionUnavailable       the installed verl has no `verl.interactions` (`version`)             501
    └── SiteBuildError             a leaderboard site that cannot be written                                     409

The sandbox side (`gym.worker`) imports nothing from the gym and keeps its own
internal exceptions; a few modules keep private subclasses for their own
control flow (never raised to a caller). Catch `KernelGymError` to catch
everything the gym means to raise; anything else escaping is a bug.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, ClassVar

if TYPE_CHECKING:
    from gym.status import Status


class KernelGymError(Exception):
    """Base of every gym error. `http_status` is what the HTTP server answers when one escapes a request."""

    http_status: ClassVar[int] = 500

    def __init__(self, message: str = "") -> None:
        super().__init__(message)
        # The one-line description a CLI prints and a server returns.
        self.message = message


class SettingError(KernelGymError, ValueError):
    """An environment variable (gym.settings) whose value cannot be read as its type."""

    def __init__(self, name: str, value: str, kind: str) -> None:
        super().__init__(f"{name}={value!r} is not a valid {kind}")
        self.name = name
        self.value = value
        self.kind = kind


class RecordVersionError(KernelGymError):
    """An archived record has a newer `schema_version` than this gym's reader understands."""

    def __init__(self, source: str, model: str, found: int, understood: int) -> None:
        super().__init__(
            f"{source}: schema_version {found} is newer than this kernel-gym understands ({model} schema_version {understood}); read it with a newer kernel-gym"
        )
        self.source = source
        self.model = model
        self.found = found
        self.understood = understood


class MissingExtra(KernelGymError):
    """A feature whose optional dependencies are not installed; the message names the extra to install."""

    # The server lacks what the request needs.
    http_status = 501

    def __init__(self, extra: str, feature: str, module: str, package: str = "kernel-gym") -> None:
        super().__init__(f"{feature} needs the {extra!r} extra: pip install '{package}[{extra}]'")
        self.extra = extra
        self.feature = feature
        self.module = module


class UnknownPlugin(KernelGymError, LookupError):
    """No plugin of `kind` ("sandbox", "executor", "agent") is registered under `name`."""

    http_status = 400

    def __init__(self, kind: str, name: str, known: Iterable[str]) -> None:
        self.kind = kind
        self.name = name
        self.known = sorted(known)
        super().__init__(f"unknown {kind} {name!r}; known: {', '.join(self.known)}")


# --- tasks ---------------------------------------------------------------------------------------


class TaskError(KernelGymError):
    """A task, a task file or an imported problem that cannot be used."""


class TaskLoadError(TaskError):
    """A task file that cannot be used; the message reads `file: key: reason`."""

    http_status = 404

    def __init__(self, message: str, *, path: str | None = None) -> None:
        super().__init__(message)
        # The task file (or task id, for an unknown id) the message is about; None when it names none.
        self.path = path


class ReferenceLoadError(TaskError):
    """A task's "module:function" could not be resolved."""

    def __init__(self, message: str, *, target: str | None = None) -> None:
        super().__init__(message)
        # The "module:function" that did not resolve.
        self.target = target


class ProblemError(TaskError):
    """A KernelBench problem file that cannot be used; the message says why."""


class ContractPresetError(TaskError, ValueError):
    """An unknown contract preset name."""

    http_status = 400

    def __init__(self, message: str, *, name: str | None = None, known: Iterable[str] = ()) -> None:
        super().__init__(message)
        self.name = name
        self.known = sorted(known)


# --- sandboxes and devices -----------------------------------------------------------------------


class SandboxUnavailable(KernelGymError):
    """The backend (or the GPU a job asks for) cannot run here; the message says how to fix that."""

    http_status = 503

    def __init__(self, message: str, *, sandbox: str | None = None) -> None:
        super().__init__(message)
        # The backend's registered name, when the problem is one backend's.
        self.sandbox = sandbox


# --- grading -------------------------------------------------------------------------------------


class GradingError(KernelGymError):
    """Something the grader raises inside a grade (only `GradeFailure`, which it catches itself) or about its inputs."""


class GradeFailure(GradingError):
    """Ends the grade early with `status`; `message` is the error text."""

    def __init__(self, status: Status, message: str, flags: list[str] | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.flags = flags or []


class KernelSourceError(GradingError):
    """The submission's jit code cannot be replayed on its own; `line` is where."""

    def __init__(self, line: int, message: str) -> None:
        super().__init__(f"line {line}: {message}")
        self.line = line
        # Without the line number (the base's `message` has it).
        self.reason = message


class BaselineCacheError(GradingError):
    """The baseline cache folder cannot be written (only raised where asked: a grade never fails for it)."""


class UnknownProfile(GradingError, ValueError):
    """A GPU profile name that is not in gym/grading/timing/gpu_profiles.toml, or a `--profile` other than ncu."""

    def __init__(self, message: str, *, name: str | None = None, known: Iterable[str] = ()) -> None:
        super().__init__(message)
        self.name = name
        self.known = list(known)


# --- execution -----------------------------------------------------------------------------------


class ExecutorError(KernelGymError, ValueError):
    """An executor that cannot be built as asked (unknown name, a cluster that cannot be reached)."""

    http_status = 503


class TaskBundleError(KernelGymError):
    """A task whose files cannot travel with a Ray grade (too many, too large, unreadable)."""


# --- harness -------------------------------------------------------------------------------------


class HarnessError(KernelGymError):
    """An episode, agent, run folder or client call that cannot go on."""


class EnvError(HarnessError, ValueError):
    """A call the episode cannot take (unknown task, step before reset, step after done)."""

    http_status = 409


class AgentError(HarnessError, ValueError):
    """An agent that cannot be made or cannot go on (unknown name, missing option, no API key)."""

    http_status = 400


class RunFolderError(HarnessError):
    """A run folder that cannot be used: missing, malformed, or made with another config."""

    http_status = 409

    def __init__(self, message: str, *, folder: str | None = None) -> None:
        super().__init__(message)
        # The run folder (or file in it) the message is about, when known.
        self.folder = folder


class GymClientError(HarnessError, RuntimeError):
    """The server refused a call (status is the HTTP status, or 0 for a WebSocket error)."""

    # Relayed by a server of our own, the gym server's refusal is a bad gateway.
    http_status = 502

    def __init__(self, status: int, detail: str, *, code: str | None = None, retry_after_s: int | None = None) -> None:
        super().__init__(f"{status or code}: {detail}")
        self.status = status
        self.detail = detail
        self.code = code
        self.retry_after_s = retry_after_s


# --- serving -------------------------------------------------------------------------------------


class ServeError(KernelGymError):
    """A served gym that cannot start or cannot take a request now."""


class AuthConfigError(ServeError, ValueError):
    """A server configuration that would leave the gym open to whoever reaches its port."""


class ServeStateError(ServeError):
    """A state folder that cannot be opened: held by another server, unreadable, or written by a newer gym."""


class SessionsFull(ServeError, RuntimeError):
    """Every session slot is held by a busy session or a WebSocket."""

    http_status = 503
    # What the server answers in Retry-After.
    retry_after_s = 5


class QueueFull(ServeError, RuntimeError):
    """Every grading slot is busy and the waiting line is full."""

    http_status = 503

    def __init__(self, retry_after_s: int) -> None:
        super().__init__(f"the grading queue is full; retry in {retry_after_s} s")
        self.retry_after_s = retry_after_s


class McpParamsError(ServeError, ValueError):
    """A tools/call without a tool name or with arguments that are not an object (JSON-RPC -32602)."""

    http_status = 400


# --- integrations and the site -------------------------------------------------------------------


class IntegrationError(KernelGymError):
    """An RL framework's adapter asked for something it cannot do."""


class EpisodeOver(IntegrationError, RuntimeError):
    """`step` on an environment whose episode has ended (a pass, or no attempts left)."""

    http_status = 409


class InteractionUnavailable(IntegrationError):
    """The installed verl has no `verl.interactions` (verl 0.8 removed BaseInteraction)."""

    # The server lacks what the request needs (as MissingExtra).
    http_status = 501

    def __init__(self, version: str) -> None:
        super().__init__(
            f"gym.integrations.verl.KernelGymInteraction needs verl <= 0.7: verl {version} has no BaseInteraction (verl >= 0.8 removed verl.interactions); "
            "use KernelGymTool (multi-turn tools) instead, or pip install 'verl>=0.5,<0.8'"
        )
        self.version = version


class SiteBuildError(KernelGymError):
    """The site cannot be written (for example, --out is a folder that is not a previous build)."""

    http_status = 409
