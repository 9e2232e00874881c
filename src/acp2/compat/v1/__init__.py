"""ACP v1: wire models (:mod:`acp2.compat.v1.schema`), the method table
(:mod:`acp2.compat.v1.methods`) and the one translation boundary between v1 and v2.

The models follow the vendored v1 JSON Schema (``schemas/acp-v1.json``, see
``schemas/README.md`` for its source) the same way :mod:`acp2.schema` follows v2:
msgspec Structs, ``UNSET`` / ``None`` / value patch semantics, unknown variants of open
unions kept as ``msgspec.Raw``, and the schema's leniency markers applied. Decode and
encode with :mod:`acp2.schema.codec` (the codec is version-neutral).

The translation is pure (no IO, no event loop): :mod:`~acp2.compat.v1.negotiate` picks
the version from raw ``initialize`` bytes; :class:`~acp2.compat.v1.project.V1Projector`
and :mod:`~acp2.compat.v1.agent_side` let a v2 agent serve a v1 client;
:class:`~acp2.compat.v1.lift.V1Lifter` and :mod:`~acp2.compat.v1.client_side` let a v2
client drive a v1 agent; :mod:`~acp2.compat.v1.handshake` translates ``initialize``
and :mod:`~acp2.compat.v1.same_shape` the methods whose shapes agree;
:mod:`~acp2.compat.v1.convert` holds the shared pieces.
``docs/v1-projection.md`` lists what is lost each way and the counter of each loss.
"""
