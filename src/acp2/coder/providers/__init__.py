"""Model providers: OpenAI-compatible chat completions and the offline scripted model.

:func:`make_model` builds one by name; ``openai`` needs httpx (the ``llm`` extra) and is
imported only when asked for.
"""

from __future__ import annotations

from typing import Any

from acp2.coder.providers.base import ChatModel, ModelError, StreamSink

__all__ = ["MODEL_KINDS", "ChatModel", "ModelError", "StreamSink", "make_model"]

#: The names :func:`make_model` accepts.
MODEL_KINDS = ("scripted", "openai")


def make_model(kind: str = "scripted", **options: Any) -> ChatModel:
    """Build a model: ``scripted`` (options: ``pace``, ``python``) or ``openai`` (options:
    ``model_name``, ``base_url``, ``api_key`` and the other fields of
    :class:`~acp2.coder.providers.openai.OpenAIConfig`, completed from the environment).
    Raises ValueError for an unknown kind."""
    if kind == "scripted":
        from acp2.coder.providers.scripted import ScriptedModel

        return ScriptedModel(**options)
    if kind == "openai":
        from acp2.coder.providers.openai import OpenAIConfig, OpenAIModel

        name = options.pop("model_name", None)
        return OpenAIModel(OpenAIConfig.from_env(model=name, **options))
    raise ValueError(f"unknown model {kind!r}; choose one of {', '.join(MODEL_KINDS)}")
