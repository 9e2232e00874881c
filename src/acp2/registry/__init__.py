"""The ACP registry: the public index of ACP agents, and starting an agent from it.

- :mod:`acp2.registry.model`: the index and its entries as typed values; malformed or
  unsafe entries are dropped one by one.
- :mod:`acp2.registry.index`: fetching the index over HTTPS, the on-disk cache (TTL, and
  an offline fallback that says how old the copy is).
- :mod:`acp2.registry.search`: finding entries by words.
- :mod:`acp2.registry.launch`: an entry to the command that starts it (npx, uvx, or a
  downloaded binary archive, see :mod:`acp2.registry.archive`).

Used by ``acp2 agents`` and by ``--agent ID`` of ``acp2 chat`` and ``acp2 run``.
"""
