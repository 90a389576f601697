"""`openai`: the baseline LLM agent, over any OpenAI-compatible chat-completions endpoint.

The model gets a system prompt, the task prompt as the first user message, and
one tool, `submit_kernel(code)`. Each call it makes becomes an `Action`; the
grade of that action goes back as the tool's result (status, speedups and the
grader's feedback), and the model tries again until a submission passes, the
Env says the episode is done, or the model stops calling the tool (it is nudged
`max_turns_per_attempt` times first).

The API key comes from the environment variable named by `api_key_env`
(`OPENAI_API_KEY` by default) and is never recorded. Without it the agent
refuses to start against the default OpenAI endpoint; with an explicit
`base_url` (vLLM, Ollama, llama.cpp and other local servers usually need no
key) it sends the placeholder `PLACEHOLDER_KEY` instead, and a 401 from the
endpoint names the variable to set.

Network errors, timeouts, rate limits and 5xx answers are retried `retries`
times with exponential backoff; then, or at once for any other API error, an
`AgentError` says which endpoint and model failed and how.
"""

from __future__ import annotations

import ast
import json
import os
import re
import time
from typing import TYPE_CHECKING, Any, cast

from gym.errors import MissingExtra

try:
    import openai
except ImportError as missing:
    raise MissingExtra("agents", "the openai agent", "openai") from missing

from gym.errors import AgentError
from gym.harness.agents.base import Agent, AgentEpisode
from gym.schema.episode import MAX_CODE_BYTES, Action, Observation
from gym.schema.result import Status

if TYPE_CHECKING:
    from openai.types.chat import ChatCompletionMessageParam, ChatCompletionToolParam

# Sent as the key to an explicit base_url when the key variable is unset (local servers ignore it).
PLACEHOLDER_KEY = "kgym-no-key"

TOOL_NAME = "submit_kernel"

SUBMIT_TOOL: ChatCompletionToolParam = {
    "type": "function",
    "function": {
        "name": TOOL_NAME,
        "description": (
            "Submit a complete Python file that defines kernel(...) and launches your @triton.jit kernels. "
            "It is graded against the reference on public and hidden inputs; the result reports the status, "
            "the speedup over PyTorch and feedback on what went wrong."
        ),
        "parameters": {
            "type": "object",
            "properties": {
                "code": {
                    "type": "string",
                    "description": "The whole submission file: plain Python source, no markdown fences.",
                }
            },
            "required": ["code"],
            "additionalProperties": False,
        },
    },
}

SYSTEM_PROMPT = """\
You are an expert GPU kernel engineer. Each task gives you a PyTorch reference \
operation (the spec), its signature, public shapes and dtypes, a closeness contract \
that every output must satisfy, and the torch calls you may use for allocation and \
launch plumbing. Write a Triton implementation that satisfies the contract and runs \
as fast as possible.

Your submission is one complete Python file that defines `kernel(...)` with the \
reference's parameters and return structure and does the computation in \
@triton.jit kernels that it launches. Submit it by calling the `submit_kernel` tool \
with the whole file as `code` (plain Python, no markdown fences).

Every submission is graded in a sandbox on the public shapes and on hidden shapes \
with a secret seed. The tool result gives the status (passed, wrong_answer, \
compile_error, runtime_error, timeout, rejected), the speedup over PyTorch and \
feedback on what failed; use it to fix the kernel and submit again. Attempts are \
limited, so reason carefully before each submission. Do not specialise to the public \
shapes, cache results between calls, mutate inputs, or let torch compute ops do the \
work: the grader detects these and rejects the submission. Without a GPU the grader \
runs Triton's interpreter on CPU, where timings are only indicative."""

NUDGE = "Please submit your kernel now by calling the submit_kernel tool with the complete Python file as `code`. Answers without a tool call are not graded."

_FENCE = re.compile(r"```[^\n`]*\n(.*?)(?:\n[ \t]*```|\Z)", re.DOTALL)

# Retried with backoff: the request may succeed later.
_RETRYABLE = (openai.APIConnectionError, openai.RateLimitError, openai.InternalServerError)


# ------------------------------------------------------------ code extraction


def _parses(source: str) -> bool:
    try:
        ast.parse(source)
    except (SyntaxError, ValueError):
        return False
    return True


def extract_code(text: str) -> str:
    """The Python source in a tool argument, with a surrounding markdown fence stripped.

    A fenced block is taken when the argument starts with a fence, or when the
    argument as a whole is not Python but its first fenced block is."""
    stripped = text.strip()
    match = _FENCE.search(stripped)
    if match is None:
        return stripped
    inner = match.group(1).strip()
    if stripped.startswith("```") or (not _parses(stripped) and _parses(inner)):
        return inner
    return stripped


def code_from_arguments(arguments: str) -> str:
    """The `code` argument of a submit_kernel call; raises ValueError with a message for the model."""
    try:
        parsed = json.loads(arguments) if arguments.strip() else {}
    except json.JSONDecodeError as exc:
        # Some models send the file itself instead of a JSON object.
        if not arguments.lstrip().startswith("{") and "def kernel" in arguments:
            return extract_code(arguments)
        raise ValueError(f"the arguments were not valid JSON ({exc.msg} at position {exc.pos}); were they cut off?") from None
    if not isinstance(parsed, dict) or not isinstance(parsed.get("code"), str):
        raise ValueError('the arguments must be a JSON object {"code": "<the whole Python file>"}')
    code = extract_code(parsed["code"])
    if not code:
        raise ValueError("`code` is empty")
    if len(code.encode("utf-8")) > MAX_CODE_BYTES:
        raise ValueError(f"`code` is larger than the {MAX_CODE_BYTES} bytes a submission may have")
    return code


# ------------------------------------------------------------ tool results


def _speedup(value: float | None) -> str:
    return "not measured" if value is None else f"{value:.3g}x"


def tool_result(observation: Observation) -> str:
    """The grade of the last submission, as the submit_kernel tool's answer."""
    summary = observation.summary
    if summary is None:
        return "Not graded."
    lines = [
        f"status: {summary.status.value}",
        f"attempt: {observation.attempt} ({observation.attempts_left} left)",
        f"speedup vs eager PyTorch: {_speedup(summary.speedup_vs_eager)}",
        f"speedup vs torch.compile: {_speedup(summary.speedup_vs_compile)}",
    ]
    if summary.interpreted:
        lines.append("timed under the Triton interpreter on CPU: speedups are only indicative")
    if summary.integrity_flags:
        lines.append(f"integrity flags: {', '.join(summary.integrity_flags)}")
    lines += ["", "feedback:", observation.feedback.strip() or "(none)"]
    if summary.status == Status.passed:
        lines += ["", "The submission passed."]
    elif observation.done:
        lines += ["", "No attempts left."]
    else:
        lines += ["", "Fix the kernel and call submit_kernel again."]
    return "\n".join(lines)


# ------------------------------------------------------------ responses


def _assistant_message(message: Any) -> dict[str, Any]:
    """An API message dict for the model's reply (what is sent back on the next request)."""
    out: dict[str, Any] = {"role": "assistant", "content": message.content}
    calls = message.tool_calls or []
    if calls:
        out["tool_calls"] = [
            {
                "id": call.id,
                "type": "function",
                "function": {"name": call.function.name, "arguments": call.function.arguments or ""},
            }
            for call in calls
            if getattr(call, "function", None) is not None
        ]
    return out


def _response_meta(response: Any) -> dict[str, Any]:
    """Transcript-only facts about a completion: model, usage, finish reason."""
    meta: dict[str, Any] = {"model": response.model}
    if response.usage is not None:
        meta["usage"] = response.usage.model_dump(mode="json", exclude_none=True)
    meta["finish_reason"] = response.choices[0].finish_reason
    reasoning = getattr(response.choices[0].message, "reasoning_content", None)
    if isinstance(reasoning, str) and reasoning:
        meta["reasoning_content"] = reasoning
    return meta


def _describe(error: Exception) -> str:
    if isinstance(error, openai.APIStatusError):
        return f"HTTP {error.status_code}: {error.message}"
    if isinstance(error, openai.APITimeoutError):
        return "the request timed out"
    if isinstance(error, openai.APIConnectionError):
        cause = error.__cause__
        return f"connection failed ({cause})" if cause else "connection failed"
    return f"{type(error).__name__}: {error}"


# ------------------------------------------------------------ the agent


class OpenAIAgent(Agent):
    name = "openai"

    def __init__(
        self,
        model: str | None = None,
        base_url: str | None = None,
        api_key_env: str = "OPENAI_API_KEY",
        temperature: float | None = None,
        max_tokens: int | None = None,
        max_turns_per_attempt: int = 3,
        timeout_s: float = 300,
        retries: int = 2,
        retry_backoff_s: float = 2.0,
    ) -> None:
        if not model:
            raise AgentError("the openai agent needs a model name (--model M)")
        if max_turns_per_attempt < 1:
            raise AgentError("max_turns_per_attempt must be at least 1")
        if retries < 0 or retry_backoff_s < 0 or timeout_s <= 0:
            raise AgentError("retries and retry_backoff_s must be >= 0 and timeout_s > 0")
        self.model: str = model
        self.base_url = base_url
        self.api_key_env = api_key_env
        self.temperature = temperature
        self.max_tokens = max_tokens
        self.max_turns_per_attempt = max_turns_per_attempt
        self.timeout_s = timeout_s
        self.retries = retries
        self.retry_backoff_s = retry_backoff_s
        key = os.environ.get(api_key_env, "").strip()
        if not key and base_url is None:
            raise AgentError(
                f"the openai agent needs an API key in the environment variable {api_key_env} (or --base-url for a local endpoint that needs no key)"
            )
        self.key_from_env = bool(key)
        # The SDK's own retries are off: ours are counted, backed off and reported.
        self._client = openai.OpenAI(api_key=key or PLACEHOLDER_KEY, base_url=base_url, timeout=timeout_s, max_retries=0)

    def options(self) -> dict[str, Any]:
        return {
            "model": self.model,
            "base_url": self.base_url,
            "temperature": self.temperature,
            "max_tokens": self.max_tokens,
            "max_turns_per_attempt": self.max_turns_per_attempt,
            "api_key_env": self.api_key_env,
        }

    def start(self, first: Observation, history: list[tuple[Action, Observation]]) -> AgentEpisode:
        return OpenAIEpisode(self, first, history)

    # ------------------------------------------------------------ API calls

    def _request_options(self) -> dict[str, Any]:
        options: dict[str, Any] = {}
        if self.temperature is not None:
            options["temperature"] = self.temperature
        if self.max_tokens is not None:
            # OpenAI's own API wants max_completion_tokens; other servers know max_tokens.
            options["max_completion_tokens" if self.base_url is None else "max_tokens"] = self.max_tokens
        return options

    def complete(self, messages: list[dict[str, Any]]) -> Any:
        """One chat completion with the submit tool; retried on transient errors, AgentError otherwise."""
        where = f"model {self.model!r} at {self.base_url or 'the OpenAI API'}"
        tries = self.retries + 1
        for attempt in range(tries):
            try:
                response = self._client.chat.completions.create(
                    # The conversation is kept as plain JSON dicts (the transcript writes them as they are).
                    model=self.model,
                    messages=cast("list[ChatCompletionMessageParam]", messages),
                    tools=[SUBMIT_TOOL],
                    **self._request_options(),
                )
            except _RETRYABLE as error:
                if attempt + 1 == tries:
                    raise AgentError(f"{where}: chat completion failed after {tries} tries: {_describe(error)}") from error
                time.sleep(self.retry_backoff_s * 2**attempt)
                continue
            except openai.AuthenticationError as error:
                hint = "" if self.key_from_env else f" (no key was given: set {self.api_key_env})"
                raise AgentError(f"{where}: the endpoint refused the key{hint}: {_describe(error)}") from error
            except openai.OpenAIError as error:
                raise AgentError(f"{where}: chat completion failed: {_describe(error)}") from error
            if not getattr(response, "choices", None):
                raise AgentError(f"{where}: the endpoint answered without any choices")
            return response
        raise AssertionError("unreachable")


class OpenAIEpisode(AgentEpisode):
    """One task's conversation. `messages` is what the API sees; `_meta` adds transcript-only facts by index."""

    def __init__(self, agent: OpenAIAgent, first: Observation, history: list[tuple[Action, Observation]]) -> None:
        self.agent = agent
        self.messages: list[dict[str, Any]] = [
            {"role": "system", "content": SYSTEM_PROMPT},
            {"role": "user", "content": first.prompt},
        ]
        self._meta: dict[int, dict[str, Any]] = {}
        # The graded tool call awaiting its result, and other calls of the same reply to answer with it.
        self._pending: str | None = None
        self._extra_calls: list[str] = []
        self.finished = False
        for number, (action, observation) in enumerate(history, start=1):
            self._replay(number, action, observation)
        if history:
            last = history[-1][1]
            self.finished = last.done or (last.summary is not None and last.summary.status == Status.passed)

    # ------------------------------------------------------------ AgentEpisode

    def propose(self, observation: Observation) -> Action | None:
        if self._pending is not None:
            self._answer_pending(observation)
        if self.finished or observation.done:
            self.finished = True
            return None
        if observation.summary is not None and observation.summary.status == Status.passed:
            self.finished = True
            return None
        action = self._ask()
        if action is None:
            self.finished = True
        return action

    def transcript(self) -> list[dict[str, Any]]:
        return [{**message, **self._meta.get(index, {})} for index, message in enumerate(self.messages)]

    # ------------------------------------------------------------ conversation

    def _add(self, message: dict[str, Any], **meta: Any) -> None:
        if meta:
            self._meta[len(self.messages)] = meta
        self.messages.append(message)

    def _replay(self, number: int, action: Action, observation: Observation) -> None:
        """A past attempt (resume) as the tool call that made it and the result it got."""
        call_id = f"call_resumed_{number}"
        call = {"id": call_id, "type": "function", "function": {"name": TOOL_NAME, "arguments": json.dumps({"code": action.code})}}
        self._add({"role": "assistant", "content": None, "tool_calls": [call]}, resumed=True)
        self._add({"role": "tool", "tool_call_id": call_id, "content": tool_result(observation)}, resumed=True)

    def _answer_pending(self, observation: Observation) -> None:
        assert self._pending is not None
        self._add({"role": "tool", "tool_call_id": self._pending, "content": tool_result(observation)}, attempt=observation.attempt)
        for call_id in self._extra_calls:
            self._add({"role": "tool", "tool_call_id": call_id, "content": "Not graded: only the first submit_kernel call of a reply is graded."})
        self._pending, self._extra_calls = None, []

    def _ask(self) -> Action | None:
        """Ask the model until it calls submit_kernel with usable code; None after max_turns_per_attempt turns."""
        for _turn in range(self.agent.max_turns_per_attempt):
            response = self.agent.complete(self.messages)
            message = response.choices[0].message
            reply = _assistant_message(message)
            self._add(reply, **_response_meta(response))
            calls = reply.get("tool_calls", [])
            if not calls:
                self._add({"role": "user", "content": NUDGE}, nudge=True)
                continue
            action = self._take_call(calls)
            if action is not None:
                return action
        return None

    def _take_call(self, calls: list[dict[str, Any]]) -> Action | None:
        """The Action of the first submit_kernel call; every other call is answered with why it was not graded."""
        chosen: str | None = None
        code = ""
        for call in calls:
            function = call["function"]
            if chosen is None and function["name"] == TOOL_NAME:
                try:
                    code = code_from_arguments(function["arguments"])
                except ValueError as problem:
                    self._add({"role": "tool", "tool_call_id": call["id"], "content": f"Not graded: {problem}. Call submit_kernel again."})
                    continue
                chosen = call["id"]
            elif function["name"] != TOOL_NAME:
                self._add({"role": "tool", "tool_call_id": call["id"], "content": f"Unknown tool {function['name']!r}; the only tool is {TOOL_NAME}."})
            else:
                self._extra_calls.append(call["id"])
        if chosen is None:
            return None
        self._pending = chosen
        return Action(code=code)
