"""The chat agent: platform actions, conversation controller, LLM backends (import name snakegate.agent)."""
