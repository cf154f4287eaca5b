"""CLI command groups: each module adds its subcommands to the parser and handles them in a few lines."""
