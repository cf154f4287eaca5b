"""Choosing the backend: the offline guided dialogue, or an OpenAI-compatible server, from settings and flags.

`make_backend` reads [agent] (base_url, model, timeout, max_tokens,
temperature, tool_mode) and the command line's overrides, and says what is
missing when only half a configuration is given. It contacts no server.
"""

from __future__ import annotations

from snakegate.agent.backend import Backend
from snakegate.agent.backends.openai_compat import (  # noqa: F401 - re-exported for callers and tests
    CONFIG_HINT, DEFAULT_MAX_TOKENS, DEFAULT_TEMPERATURE, DEFAULT_TIMEOUT, TOOL_MODES, OpenAIBackend,
    api_key_from_env,
)
from snakegate.errors import UserError
from snakegate.registry.settings import Settings


def make_backend(settings: Settings, *, guided: bool = False, model: str | None = None,
                 base_url: str | None = None, timeout: float | None = None, max_tokens: int | None = None,
                 temperature: float | None = None, tool_mode: str | None = None) -> Backend:
    """The offline guided dialogue when asked or when no model is configured, else the OpenAI-compatible server."""
    model = model or settings.llm_model
    base_url = base_url or settings.llm_base_url
    if guided or (not model and not base_url):
        from snakegate.agent.guided.dialogue import GuidedBackend  # lazily: the guided dialogue is its own room

        return GuidedBackend()
    if not base_url:
        raise UserError(f"model `{model}` is set but no server URL: {CONFIG_HINT} "
                        "(e.g. http://localhost:11434/v1 for Ollama), or use the guided dialogue (--guided)")
    if not model:
        raise UserError(f"the model server {base_url} is set but no model: {CONFIG_HINT} "
                        "(e.g. qwen2.5:7b), or use the guided dialogue (--guided)")
    mode = tool_mode or settings.llm_tool_mode or "auto"
    if mode not in TOOL_MODES:
        raise UserError(f"tool mode must be one of {', '.join(TOOL_MODES)} (got {mode!r})")
    return OpenAIBackend(
        base_url=base_url, model=model,
        timeout=timeout if timeout is not None else settings.llm_timeout or DEFAULT_TIMEOUT,
        max_tokens=max_tokens if max_tokens is not None else settings.llm_max_tokens or DEFAULT_MAX_TOKENS,
        temperature=temperature if temperature is not None else (
            settings.llm_temperature if settings.llm_temperature is not None else DEFAULT_TEMPERATURE),
        tool_mode=mode)
