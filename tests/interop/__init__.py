"""Interop tests against the official ACP TypeScript SDK (``pytest -m interop``)."""
