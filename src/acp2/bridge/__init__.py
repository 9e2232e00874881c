"""Bridges between ACP v1 and v2 peers, built on the pure translation in
:mod:`acp2.compat.v1` (the one place that knows both versions).

- :mod:`~acp2.bridge.peek` reads the first ``initialize`` off a transport to learn the
  client's version and hands the bytes back unchanged;
- :mod:`~acp2.bridge.front` serves a v1 client from a v2 agent (``Agent.serve`` runs it
  when the client asks for version 1);
- :mod:`~acp2.bridge.back` presents a v1 agent as a v2 agent (``acp2.client.connect``
  runs it when the agent answers ``initialize`` in v1), serving the agent's ``fs/*``
  (:mod:`~acp2.bridge.back_fs`) and ``terminal/*`` (:mod:`~acp2.bridge.back_terminal`)
  requests when enabled;
- :mod:`~acp2.bridge.inprocess` joins either bridge to a runtime in the same process
  without a JSON-RPC connection between them (objects, not frames).
"""
