"""The models a conversation can talk to, each behind snakegate.agent.backend's one `request()`
interface: `openai_compat` (any OpenAI-compatible server), `connections` (its open connections, which a
stopped turn cuts), `textcalls` (steps a model writes as text),
`choose` (the backend for these settings and flags: such a server, or the guided dialogue, which
lives in snakegate.agent.guided).
"""
