"""`snakegate mcp`: the platform actions served to any MCP client with the official SDK.

`server` (the server), `tools` (one MCP tool per action), `state` (one server run's state),
`execute` (a run only after the person confirms by elicitation), `audit` (one line per call).
"""
