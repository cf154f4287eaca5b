"""Concrete backends: any OpenAI-compatible chat server, and the choice between it and the guided dialogue.

`OpenAIBackend` sends the conversation and the tools to `POST {base_url}/chat/completions`
through the `openai` package and maps the answer to a `Reply`; every failure
(server down, timeout, wrong key, unknown model, nonsense answer) becomes a
`BackendError` whose message names the URL, the model and the fix. It never
runs an action, and it reads the API key only from the environment.
`make_backend` picks the backend from settings and command-line overrides.

`openai` is imported on the first request, in the chat's worker thread: it
costs ~0.7 s, which `snakegate chat` would otherwise pay before its first paint.
"""

from __future__ import annotations

import json
import os
import uuid

from snakegate.agent.actions import INVALID_JSON
from snakegate.agent.backend import Backend, BackendError, Reply, ToolCall
from snakegate.errors import UserError
from snakegate.settings import Settings

CONFIG_HINT = "set agent.base_url and agent.model in snakegate.toml, or SNAKEGATE_LLM_BASE_URL and SNAKEGATE_LLM_MODEL"


def api_key_from_env() -> str:
    """SNAKEGATE_LLM_API_KEY, else OPENAI_API_KEY; local servers need none, but the client wants a string."""
    return os.environ.get("SNAKEGATE_LLM_API_KEY") or os.environ.get("OPENAI_API_KEY") or "not-needed"


def _arguments(raw: str | None) -> dict:
    """The tool call's JSON arguments; anything else is handed on for dispatch to report as bad_arguments."""
    if raw is None or not raw.strip():
        return {}
    try:
        value = json.loads(raw)
    except json.JSONDecodeError:
        return {INVALID_JSON: raw}
    return value if isinstance(value, dict) else {INVALID_JSON: raw}


def _server_says(exc) -> str:
    body = exc.body
    if isinstance(body, dict):
        inner = body.get("error", body)
        message = inner.get("message") if isinstance(inner, dict) else inner
        if message:
            return str(message)
    return exc.message or ""


class OpenAIBackend:
    """A model behind an OpenAI-compatible chat-completions endpoint (OpenAI, Ollama, vLLM, llama.cpp, ...)."""

    name = "openai-compatible"

    def __init__(self, base_url: str, model: str, api_key: str | None = None, timeout: float = 60):
        self.base_url = base_url.rstrip("/")
        self.model = model
        self.timeout = timeout
        self._api_key = api_key or api_key_from_env()
        self._client = None

    def _openai_client(self):
        import openai

        if self._client is None:
            # No automatic retries: a server that is down should say so at once; the researcher retries.
            self._client = openai.OpenAI(base_url=self.base_url, api_key=self._api_key, timeout=self.timeout,
                                         max_retries=0)
        return self._client

    def request(self, messages: list[dict], tools: list[dict]) -> Reply:
        import openai

        try:
            response = self._openai_client().chat.completions.create(
                model=self.model, messages=messages, **({"tools": tools} if tools else {}))
        except openai.APIError as exc:
            raise BackendError(self._explain(exc)) from None
        choices = getattr(response, "choices", None)
        if not choices or getattr(choices[0], "message", None) is None:
            raise BackendError(f"the model server at {self.base_url} answered without a message for model "
                               f"`{self.model}`; check that it speaks the OpenAI chat-completions API")
        message = choices[0].message
        calls = tuple(
            ToolCall(id=tc.id or f"call_{uuid.uuid4().hex[:12]}", name=tc.function.name,
                     arguments=_arguments(tc.function.arguments))
            for tc in (message.tool_calls or []) if getattr(tc, "function", None) is not None)
        return Reply(text=message.content, tool_calls=calls)

    def _explain(self, exc) -> str:
        import openai

        where = f"the model server at {self.base_url}"
        if isinstance(exc, openai.APITimeoutError):
            return (f"{where} did not answer within {self.timeout:g} s (model `{self.model}`); "
                    "check that it is running and not overloaded, then send your message again")
        if isinstance(exc, openai.APIConnectionError):
            return (f"cannot reach {where} (model `{self.model}`): {exc.__cause__ or exc}; start the server "
                    f"(e.g. `ollama serve`) or fix the URL ({CONFIG_HINT}), then send your message again")
        if isinstance(exc, openai.AuthenticationError):
            return (f"{where} refused the API key (401) for model `{self.model}`: {_server_says(exc)}; "
                    "set SNAKEGATE_LLM_API_KEY (or OPENAI_API_KEY) to a valid key")
        if isinstance(exc, openai.NotFoundError):
            return (f"{where} has no model `{self.model}` (404: {_server_says(exc)}); pick a model the server "
                    f"lists at {self.base_url}/models, and check that the URL ends in /v1 ({CONFIG_HINT})")
        if isinstance(exc, openai.APIStatusError):
            return (f"{where} answered {exc.status_code} for model `{self.model}`: {_server_says(exc)}; "
                    "check that the model supports tool calls, or try another model")
        return (f"{where} sent an answer that is not an OpenAI chat completion (model `{self.model}`): {exc}; "
                "check that the URL points at an OpenAI-compatible /v1 endpoint")


def make_backend(settings: Settings, *, guided: bool = False, model: str | None = None,
                 base_url: str | None = None) -> Backend:
    """The offline guided dialogue when asked or when no model is configured, else the OpenAI-compatible server."""
    model = model or settings.llm_model
    base_url = base_url or settings.llm_base_url
    if guided or (not model and not base_url):
        from snakegate.agent.guided import (
            GuidedBackend,  # lazily: the guided dialogue is its own room
        )

        return GuidedBackend()
    if not base_url:
        raise UserError(f"model `{model}` is set but no server URL: {CONFIG_HINT} "
                        "(e.g. http://localhost:11434/v1 for Ollama), or use the guided dialogue (--guided)")
    if not model:
        raise UserError(f"the model server {base_url} is set but no model: {CONFIG_HINT} "
                        "(e.g. qwen2.5:7b), or use the guided dialogue (--guided)")
    return OpenAIBackend(base_url=base_url, model=model)
