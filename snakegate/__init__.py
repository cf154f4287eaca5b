"""snakegate: talk freely, execute strictly. Core package: registry, contract, gate, runner, CLI."""

__version__ = "0.1.0"
