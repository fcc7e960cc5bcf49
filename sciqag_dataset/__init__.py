"""Record schema, LLM client, runner, `datasets` builder, publishing and the `sciqag` CLI."""

__version__ = "0.1.0"
