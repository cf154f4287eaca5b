"""Any OpenAI-compatible chat server as a Backend: native tool calls, or one constrained JSON object per step.

`OpenAIBackend.request` sends `POST {base_url}/chat/completions` through the
`openai` package in the form every such server accepts (tool_choice "auto",
content "" never null, max_tokens, a low temperature, a configurable
timeout) and maps the answer to a `Reply` with the finish reason, the
answering model's name and the token counts. In "json" mode (small models,
servers without a tool-call template) it sends no tools but a JSON-schema
response format whose schema is `tools.step_schema`, with tool results as
user messages; in "auto" mode it asks the server once whether its template
does tool calls (llama.cpp's /props, Ollama's /api/show; PROBE_TIMEOUT bounds
each question, so a hung server costs seconds, not a request's timeout) and
falls back to "json" when a request with tools is refused (`mode_why` says
which and why, in words the chat's header shows). While a request is out,
`waiting` says which step of the turn it is and since when, and `abandon()`
hangs up on the server (connections.py). Text-form tool calls are read in
both modes. Every failure becomes a `BackendError` whose hint fits it. It
never runs an action and reads the API key only from the environment.

`openai` is imported on the first request, in the chat's worker thread: it
costs ~0.7 s, which `snakegate chat` would otherwise pay before its first paint.
"""

from __future__ import annotations

import json
import os
import re
import threading
import time
import uuid
from urllib.parse import urlsplit

from snakegate.agent.actions.plans import PLAN_ACTIONS
from snakegate.agent.actions.platform import INVALID_JSON
from snakegate.agent.backend import BackendError, Reply, ToolCall, Waiting, step_of
from snakegate.agent.backends.connections import Connections
from snakegate.agent.backends.textcalls import parse_step, text_calls
from snakegate.agent.actions.wire import step_schema

CONFIG_HINT = "set agent.base_url and agent.model in snakegate.toml, or SNAKEGATE_LLM_BASE_URL and SNAKEGATE_LLM_MODEL"
TOOL_MODES = ("auto", "native", "json")
DEFAULT_TIMEOUT = 300.0    # seconds; a small model on 2 CPU cores takes tens of seconds per step
PROBE_TIMEOUT = 3.0        # seconds for "auto" to ask /props or /api/show: a server answers these at once
DEFAULT_MAX_TOKENS = 768
DEFAULT_TEMPERATURE = 0.0
JSON_RULES = ("Answer with exactly one JSON object and nothing else: "
              '{{"action": NAME, "arguments": {{...}}}} to call an action, or {{"say": TEXT}} to talk to the '
              "researcher. Actions: {signatures}.")


def api_key_from_env() -> str:
    """SNAKEGATE_LLM_API_KEY, else OPENAI_API_KEY; local servers need none, but the client wants a string."""
    return os.environ.get("SNAKEGATE_LLM_API_KEY") or os.environ.get("OPENAI_API_KEY") or "not-needed"


def _no_repeated_keys(pairs: list) -> dict:
    out = dict(pairs)
    if len(out) != len(pairs):  # json.loads would keep the last one silently; the gate must see what was sent
        raise ValueError("a key is repeated in one JSON object")
    return out


def _arguments(raw) -> dict:
    """A tool call's JSON arguments; anything else is handed on for dispatch to report as bad_arguments."""
    if isinstance(raw, dict):
        return raw
    if raw is None or not str(raw).strip():
        return {}
    try:
        value = json.loads(raw, object_pairs_hook=_no_repeated_keys)
    except (ValueError, RecursionError):  # broken JSON, a repeated key, a 5,000-digit number, absurd nesting
        return {INVALID_JSON: raw}
    return value if isinstance(value, dict) else {INVALID_JSON: raw}


def _server_says(exc) -> str:
    body = getattr(exc, "body", None)
    if isinstance(body, dict):
        inner = body.get("error", body)
        message = inner.get("message") if isinstance(inner, dict) else inner
        if message:
            return str(message)
    return getattr(exc, "message", "") or str(exc)


_NUMBERS = (("prompt", re.compile(r"request \((\d+) tokens\)|resulted in (\d+) tokens|(\d+) in the messages", re.I)),
            ("total", re.compile(r"you requested (\d+) tokens", re.I)),
            ("ctx", re.compile(r"context size \((\d+) tokens\)|maximum context length is (\d+)", re.I)))


def context_numbers(body, says: str) -> tuple[int | None, int | None, int | None]:
    """(prompt tokens, total tokens asked for, the server's context size) from a context-overflow error, each
    None when the server does not say."""
    inner = body.get("error", body) if isinstance(body, dict) else None
    inner = inner if isinstance(inner, dict) else {}
    found: dict[str, int | None] = {"prompt": None, "total": None, "ctx": None}
    for key, field in (("prompt", "n_prompt_tokens"), ("ctx", "n_ctx")):
        if isinstance(inner.get(field), int) and not isinstance(inner.get(field), bool):
            found[key] = inner[field]
    for key, pattern in _NUMBERS:
        m = pattern.search(says)
        if found[key] is None and m:
            found[key] = int(next(g for g in m.groups() if g))
    return found["prompt"], found["total"], found["ctx"]


def _round_up(tokens: int) -> int:
    """A context size to suggest: the next multiple of 1,024 with a quarter to spare (the talk grows)."""
    return -(-int(tokens * 1.25) // 1024) * 1024


def signatures(tools: list[dict]) -> str:
    """`search_workflows(query, limit?)`, ... : the actions in one line, for the JSON-mode prompt."""
    out = []
    for tool in tools:
        fn = tool["function"]
        params = fn.get("parameters") or {}
        required = set(params.get("required") or [])
        args = [n if n in required else f"{n}?" for n, p in (params.get("properties") or {}).items()
                if not (isinstance(p, dict) and p.get("x-rare"))]
        out.append(f"{fn['name']}({', '.join(args)})")
    return "; ".join(out)


_STEP_LINE = re.compile(r"^→ (\w+) (\{.*\})$", re.M)
_SAY_LINE = re.compile(r"^→ say: (.*)$", re.M)


def as_json_steps(prompt: str) -> str:
    """The prompt's worked example (`→ action {args}`, `→ say: text`) written as the JSON objects this mode
    asks for, so a small model sees exactly the form it must produce."""
    prompt = _STEP_LINE.sub(lambda m: json.dumps({"action": m.group(1), "arguments": json.loads(m.group(2))}), prompt)
    return _SAY_LINE.sub(lambda m: json.dumps({"say": m.group(1)}), prompt)


def json_mode_messages(messages: list[dict], tools: list[dict]) -> list[dict]:
    """The conversation as a server without tool calls reads it: each past step as the JSON object the
    model wrote, each result as a user message right after its step, the rules in the system prompt."""
    out: list[dict] = []
    results = {m.get("tool_call_id"): m.get("content") for m in messages if m.get("role") == "tool"}
    for m in messages:
        role, content = m.get("role"), m.get("content") or ""
        if role == "system":
            out.append({"role": "system",
                        "content": as_json_steps(content) + "\n" + JSON_RULES.format(signatures=signatures(tools))})
        elif role == "assistant" and m.get("tool_calls"):
            if content.strip():
                out.append({"role": "assistant", "content": json.dumps({"say": content})})
            for tc in m["tool_calls"]:
                fn = tc.get("function") or {}
                step = {"action": fn.get("name"), "arguments": _arguments(fn.get("arguments"))}
                out.append({"role": "assistant", "content": json.dumps(step)})
                out.append({"role": "user", "content": f"Result of {fn.get('name')}: {results.get(tc.get('id'), '')}"})
        elif role == "assistant":
            out.append({"role": "assistant", "content": json.dumps({"say": content})})
        elif role == "tool":
            continue  # placed right after its step above
        else:
            out.append({"role": role, "content": content if isinstance(content, str) else json.dumps(content)})
    return out


FILLING = ("inspect_data", "validate_params")  # the steps that make sense once a workflow is described
BUILDING = ("find_connections", *PLAN_ACTIONS)  # calling one of these means the turn builds a plan
PLANNING = ("describe_workflow", "inspect_data", *BUILDING)  # what a constrained step may do then
DRAFTING = ("validate_params", "fork_run", *PLAN_ACTIONS)  # the actions whose passing answer is a draft


def focused(tools: list[dict], messages: list[dict]) -> list[dict]:
    """What a constrained step may do at this point of the turn: once a draft passed the gate, only talk;
    once the turn builds a plan (find_connections or a plan action was called), describe, inspect and
    change the plan; once a workflow was described, only fill it (inspect_data, validate_params) or talk.
    A small model otherwise keeps describing, searching or validating the same params again."""
    last_user = max((i for i, m in enumerate(messages) if m.get("role") == "user"), default=-1)
    turn = messages[last_user + 1:]
    calls = {tc.get("id"): (tc.get("function") or {}).get("name") for m in turn for tc in m.get("tool_calls") or []}
    results = [(calls.get(m.get("tool_call_id")), m.get("content") or "") for m in turn if m.get("role") == "tool"]
    if any(name in DRAFTING and '"invocation_id"' in text and '"ok": true' in text for name, text in results):
        return []
    if any(name in BUILDING for name, _ in results):
        return [t for t in tools if t["function"]["name"] in PLANNING]
    if any(name == "describe_workflow" and '"params"' in text for name, text in results):
        return [t for t in tools if t["function"]["name"] in FILLING]
    return tools


def native_messages(messages: list[dict]) -> list[dict]:
    """content "" rather than null beside tool calls: several servers' chat templates fail on null."""
    return [dict(m, content=m.get("content") or "") if m.get("role") == "assistant" else m for m in messages]


class OpenAIBackend:
    """A model behind an OpenAI-compatible chat-completions endpoint (OpenAI, Ollama, vLLM, llama.cpp, ...)."""

    name = "openai-compatible"

    def __init__(self, base_url: str, model: str, api_key: str | None = None, *, timeout: float = DEFAULT_TIMEOUT,
                 max_tokens: int = DEFAULT_MAX_TOKENS, temperature: float = DEFAULT_TEMPERATURE,
                 tool_mode: str = "auto"):
        if tool_mode not in TOOL_MODES:
            raise ValueError(f"tool_mode must be one of {', '.join(TOOL_MODES)} (got {tool_mode!r})")
        self.base_url = base_url.rstrip("/")
        self.model = model
        self.timeout = timeout
        self.max_tokens = max_tokens
        self.temperature = temperature
        self.tool_mode = tool_mode
        self.mode: str | None = None if tool_mode == "auto" else tool_mode  # decided on the first request
        # why that mode, in words the chat's header shows ("the server says it cannot call tools (/props)")
        self.mode_why: str | None = None if tool_mode == "auto" else "as configured (tool_mode)"
        self.probe_hung: str | None = None  # "it did not answer /props within 3 s either": said with a timeout
        self.waiting: Waiting | None = None  # the request out now, read by the chat's waiting line
        self._mode_lock = threading.Lock()
        self._connections = Connections()  # cut by abandon(): a stopped turn hangs up on the server
        self._api_key = api_key or api_key_from_env()
        self._client = None

    def _openai_client(self):
        import openai

        if self._client is None:
            # No automatic retries: a server that is down should say so at once; the researcher retries.
            self._client = openai.OpenAI(base_url=self.base_url, api_key=self._api_key, timeout=self.timeout,
                                         max_retries=0, http_client=openai.DefaultHttpxClient(
                                             event_hooks={"request": [self._connections.hook]}))
        return self._client

    def abandon(self) -> None:
        """The researcher stopped the turn: hang up on the server, so it stops generating for nobody and the
        next request does not queue behind this one. The request waiting in its thread fails at once; its
        turn is already abandoned, so nobody sees that failure."""
        self._connections.cut()

    # ---- the mode ----------------------------------------------------------------------------------------
    def _server_root(self) -> str:
        return self.base_url[: -len("/v1")] if self.base_url.endswith("/v1") else self.base_url

    def settle_mode(self) -> str | None:
        """The tool mode, asking the server first in "auto" mode (at most once at a time: the chat asks as soon
        as it starts, and its first request waits for that answer rather than asking again)."""
        with self._mode_lock:
            if self.mode is None:
                self.mode = self.detect_mode()
            return self.mode

    def detect_mode(self) -> str | None:
        """Ask the server whether its chat template does tool calls: "json" when it says no, "native" when it
        says yes or does not say, None when it cannot be reached or does not answer within PROBE_TIMEOUT (ask
        again on the next request). A server that hangs costs one short wait, not a request's timeout."""
        import openai

        wait = min(self.timeout, PROBE_TIMEOUT)
        client = self._openai_client().with_options(timeout=wait)
        self.probe_hung = None
        reached, cuts = False, self._connections.cuts
        root = self._server_root()
        probes = (("/props", lambda: client.get(f"{root}/props", cast_to=object), self._read_props),  # llama-server
                  ("/api/show", lambda: client.post(f"{root}/api/show", body={"model": self.model}, cast_to=object),
                   self._read_show))  # Ollama
        for path, ask, read in probes:
            try:
                answer = ask()
                reached = True
                mode = read(answer)
                if mode is not None:
                    return mode
            except openai.APITimeoutError:  # it took the connection and said nothing: do not wait on it again
                self.probe_hung = (f"it did not answer {path} within {wait:g} s either: it may be stuck rather than "
                                   "slow (its log says; restart it if so)")
                self.mode_why = (f"the server did not answer {path} within {wait:g} s; native tried, asked again on "
                                 "the next request")
                return None
            except openai.APIStatusError:
                reached = True
            except (openai.APIError, ValueError, TypeError):
                if self._connections.cuts != cuts:  # the researcher stopped the turn: the server said nothing
                    self.mode_why = "asking the server was stopped; asked again on the next request"
                    return None
        self.mode_why = ("the server does not say whether it can call tools; native tried first" if reached
                         else "the server could not be reached to ask; asked again on the next request")
        return "native" if reached else None

    def _read_props(self, props) -> str | None:
        caps = props.get("chat_template_caps") if isinstance(props, dict) else None
        if isinstance(caps, dict) and "supports_tool_calls" in caps:
            yes = bool(caps["supports_tool_calls"])
            self.mode_why = f"the server says it {'can' if yes else 'cannot'} call tools (/props)"
            return "native" if yes else "json"
        return None

    def _read_show(self, shown) -> str | None:
        caps = shown.get("capabilities") if isinstance(shown, dict) else None
        if isinstance(caps, list):
            self.mode_why = f"the server lists {'the' if 'tools' in caps else 'no'} tools capability (/api/show)"
            return "native" if "tools" in caps else "json"
        return None

    # ---- a request ---------------------------------------------------------------------------------------
    def _body(self, mode: str, messages: list[dict], tools: list[dict]) -> dict:
        body = {"model": self.model, "max_tokens": self.max_tokens, "temperature": self.temperature}
        if mode == "json":
            tools = focused(tools, messages)
            body["messages"] = json_mode_messages(messages, tools)
            body["response_format"] = {"type": "json_schema",
                                       "json_schema": {"name": "step", "strict": True,
                                                       "schema": step_schema(tools, self.max_tokens)}}
        else:
            body["messages"] = native_messages(messages)
            if tools:
                body["tools"] = tools
                body["tool_choice"] = "auto"
        return body

    def request(self, messages: list[dict], tools: list[dict]) -> Reply:
        waiting = Waiting(step_of(messages), time.monotonic())
        self.waiting = waiting
        self._connections.begin()  # abandon() from now on stops this request, wherever it is
        try:
            return self._request(messages, tools)
        finally:
            if self.waiting is waiting:  # an abandoned request ending late leaves a newer one's wait alone
                self.waiting = None

    def _request(self, messages: list[dict], tools: list[dict]) -> Reply:
        import openai

        self.settle_mode()
        if self._connections.stopped():  # stopped while asking the mode: the chat request is never sent
            raise BackendError("the researcher stopped this turn before it reached the model", reached=None)
        body = self._body(self.mode or "native", messages, tools)
        try:
            response = self._openai_client().chat.completions.create(**body)
        except openai.APIStatusError as exc:
            if self.tool_mode == "auto" and self.mode != "json" and tools and "tool" in _server_says(exc).lower():
                self.mode = "json"  # the server refuses tool definitions: ask for constrained JSON instead
                self.mode_why = "the server refused tool definitions"
                return self._request(messages, tools)
            raise BackendError(self._explain(exc), reached=True) from None
        except openai.APIError as exc:
            # a timeout is a server that took the request and is still at it; a connection error, none there
            raise BackendError(self._explain(exc), reached=not isinstance(exc, openai.APIConnectionError)
                               or isinstance(exc, openai.APITimeoutError)) from None
        return self._reply(response, body, {t["function"]["name"] for t in tools or []})

    def _reply(self, response, body: dict, names: set[str]) -> Reply:
        choices = getattr(response, "choices", None)
        if not choices or getattr(choices[0], "message", None) is None:
            raise BackendError(f"the model server at {self.base_url} answered without a message for model "
                               f"`{self.model}`; check that it speaks the OpenAI chat-completions API", reached=True)
        choice = choices[0]
        message = choice.message
        content = message.content if isinstance(message.content, str) else None
        if self.mode == "json":
            found, text = parse_step(content, names)
        else:
            found, text = ([], content) if message.tool_calls else text_calls(content, names)
        calls = [ToolCall(id=tc.id or self._new_id(), name=tc.function.name, arguments=_arguments(tc.function.arguments))
                 for tc in (message.tool_calls or []) if getattr(tc, "function", None) is not None]
        calls += [ToolCall(id=self._new_id(), name=n, arguments=_arguments(a)) for n, a in found]
        usage = response.usage.model_dump() if getattr(response, "usage", None) is not None else None
        dumped = response.model_dump() if hasattr(response, "model_dump") else None
        return Reply(text=text if text and text.strip() else None, tool_calls=tuple(calls),
                     finish_reason=getattr(choice, "finish_reason", None),
                     model=getattr(response, "model", None) or None, usage=usage,
                     wire={"request": body, "response": dumped, "mode": self.mode})

    @staticmethod
    def _new_id() -> str:
        return f"call_{uuid.uuid4().hex[:12]}"

    # ---- failures ----------------------------------------------------------------------------------------
    def _start_hint(self) -> str:
        """How to start the server this URL points at, as far as the URL tells."""
        parts = urlsplit(self.base_url)
        local = parts.hostname in ("localhost", "127.0.0.1", "::1")
        if not local:
            return f"check that {parts.hostname} is reachable from this machine and the server runs there"
        if parts.port == 11434:
            return f"start Ollama (`ollama serve`, then `ollama pull {self.model}`)"
        if parts.port in (8080, 8000, 8088):
            return (f"start the server on port {parts.port}, e.g. `llama-server -m MODEL.gguf --port {parts.port} "
                    "--jinja`")
        return f"start the OpenAI-compatible server that should listen on port {parts.port}"

    def _too_small(self, exc, says: str) -> str:
        """The context overflow, with the tokens the conversation needs when the server says (llama.cpp's
        n_prompt_tokens and n_ctx; OpenAI's and vLLM's "resulted in N tokens", "requested N tokens")."""
        prompt, total, ctx = context_numbers(getattr(exc, "body", None), says)
        needed = total if total is not None else prompt + self.max_tokens if prompt is not None else None
        head = "the server's context is too small for this conversation" + (
            f" ({needed} tokens needed" + (f"; it has {ctx}" if ctx else "") + ")" if needed else "")
        size = f"-c {_round_up(needed)}" if needed else "a larger -c"
        return (f"{head}: start llama-server with {size} and one slot (-np 1: slots share the context), or raise "
                f"Ollama's num_ctx; or type `restart` to begin a shorter conversation. The server said: {says}")

    def _explain(self, exc) -> str:
        import openai

        where = f"the model server at {self.base_url}"
        says = _server_says(exc)
        low = says.lower()
        if isinstance(exc, openai.APITimeoutError):
            hung = f"; {self.probe_hung}" if self.probe_hung else ""
            return (f"{where} did not answer within {self.timeout:g} s (model `{self.model}`){hung}; a model on a "
                    "CPU can be this slow: raise the timeout ([agent] timeout or --timeout), lower max_tokens, or use "
                    "a smaller model, then send your message again")
        if isinstance(exc, openai.APIConnectionError):
            return (f"cannot reach {where} (model `{self.model}`): {exc.__cause__ or exc}; {self._start_hint()}, or "
                    f"fix the URL ({CONFIG_HINT}), then send your message again")
        if isinstance(exc, openai.AuthenticationError):
            return (f"{where} refused the API key (401) for model `{self.model}`: {says}; "
                    "set SNAKEGATE_LLM_API_KEY (or OPENAI_API_KEY) to a valid key")
        if isinstance(exc, openai.NotFoundError):
            if "model" in low:
                return (f"{where} has no model `{self.model}` (404: {says}); pick a model the server lists at "
                        f"{self.base_url}/models ({CONFIG_HINT})")
            return (f"{where} has no chat endpoint (404: {says}); check that the URL ends in /v1 ({CONFIG_HINT})")
        if isinstance(exc, openai.APIStatusError):
            status = exc.status_code
            if any(k in low for k in ("context", "n_ctx", "too long", "maximum", "exceed")):
                return self._too_small(exc, says)
            if "response_format" in low or "json_schema" in low or "grammar" in low:
                fix = 'the server cannot constrain replies to a JSON schema: set [agent] tool_mode = "native"'
            elif "tool" in low or "template" in low:
                fix = ('the server cannot use tool definitions with this model: set [agent] tool_mode = "json" '
                       "(or --tool-mode json) for constrained JSON steps")
            elif status == 429:
                fix = "the server is rate-limiting requests; wait a moment and send again"
            elif status in (502, 503, 504):
                fix = "the server is busy or still loading the model; wait and send your message again"
            elif status >= 500:
                fix = "the server failed on this request; its own log says why"
            else:
                fix = "the server refused the request as sent; its message above says which field"
            return f"{where} answered {status} for model `{self.model}`: {says}; {fix}"
        return (f"{where} sent an answer that is not an OpenAI chat completion (model `{self.model}`): {exc}; "
                "check that the URL points at an OpenAI-compatible /v1 endpoint")
