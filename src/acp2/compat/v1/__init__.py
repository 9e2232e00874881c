"""ACP v1: wire models (:mod:`acp2.compat.v1.schema`) and the method table
(:mod:`acp2.compat.v1.methods`).

The models follow the vendored v1 JSON Schema (``schemas/acp-v1.json``, see
``schemas/README.md`` for its source) the same way :mod:`acp2.schema` follows v2:
msgspec Structs, ``UNSET`` / ``None`` / value patch semantics, unknown variants of open
unions kept as ``msgspec.Raw``, and the schema's leniency markers applied. Decode and
encode with :mod:`acp2.schema.codec` (the codec is version-neutral).
"""
