"""The Textual chat app (import name snakegate.tui)."""
