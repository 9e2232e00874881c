"""Version negotiation: read ``protocolVersion`` (and the reply's shape) before decoding.

An ``initialize`` message is decoded with the models of its version, so the version has
to be known first. These functions read only what decides it from the raw JSON bytes
(``msgspec.Raw`` or ``bytes``) and never decode the rest:

* :func:`request_version` -- an agent reading a client's ``initialize`` params: ``1`` is
  v1, ``2`` or more is v2 (answered ``2``), anything else is a :class:`NegotiationError`
  (answer ``-32602`` and keep the connection open).
* :func:`result_version` -- a client reading an agent's ``initialize`` result. Real v1
  agents answer ``1`` whatever was asked, and some echo the requested number back, so
  the number alone is not enough. The shapes differ in required fields: a v2 result
  must carry ``info`` (and names its capabilities ``capabilities``); a v1 result has no
  ``info`` and names them ``agentCapabilities`` / ``agentInfo``. So: ``1`` is v1; ``2``
  or more with ``info`` is v2; ``2`` or more without ``info`` is a v1 agent echoing the
  request (a v2 agent must send ``info``, and v1 allows a result of
  ``{protocolVersion}`` alone).
"""

from __future__ import annotations

from typing import Any, Final, Literal

import msgspec

from acp2.errors import NegotiationError

__all__ = [
    "INVALID_PARAMS",
    "NegotiationError",
    "Version",
    "request_version",
    "result_version",
]

#: The JSON-RPC code of a malformed ``initialize``.
INVALID_PARAMS: Final = -32602

#: A negotiated protocol major version.
Version = Literal[1, 2]

_MISSING: Final = msgspec.UNSET


class _Params(msgspec.Struct):
    # Only the deciding keys are declared: msgspec skips every other key unparsed.
    protocolVersion: Any = _MISSING


class _Result(msgspec.Struct):
    protocolVersion: Any = _MISSING
    info: Any = _MISSING


_params_decoder: Final = msgspec.json.Decoder(_Params)
_result_decoder: Final = msgspec.json.Decoder(_Result)


def _decode(data: bytes | msgspec.Raw, decoder: msgspec.json.Decoder[Any], what: str) -> Any:
    try:
        return decoder.decode(data)
    except msgspec.ValidationError:
        raise NegotiationError(f"{what} must be a JSON object") from None
    except msgspec.DecodeError:
        raise NegotiationError(f"{what} is not valid JSON") from None
    except RecursionError:
        raise NegotiationError(f"{what} is nested too deeply") from None


def _major(value: Any, what: str) -> int:
    if value is _MISSING:
        raise NegotiationError(f"{what} has no protocolVersion")
    # bool is an int in Python, but `true` is not a version on the wire.
    if type(value) is not int or not 1 <= value <= 65535:
        raise NegotiationError(f"{what} has an invalid protocolVersion {value!r}")
    return value


def request_version(params: bytes | msgspec.Raw) -> Version:
    """The version to answer a client's ``initialize`` ``params`` with: 1 or 2.

    ``1`` means v1 (decode the params with :mod:`acp2.compat.v1.schema`); a request for 2
    or higher is answered 2. Raises :class:`NegotiationError` (``-32602``) when the
    params are not an object or ``protocolVersion`` is missing, not an integer, or
    outside 1..65535.
    """
    found = _decode(params, _params_decoder, "initialize params")
    return 1 if _major(found.protocolVersion, "initialize params") == 1 else 2


def result_version(result: bytes | msgspec.Raw) -> Version:
    """The version an agent's ``initialize`` ``result`` speaks: 1 or 2 (see the module).

    Raises :class:`NegotiationError` when the result is not an object or its
    ``protocolVersion`` is missing or not a valid version number.
    """
    found = _decode(result, _result_decoder, "initialize result")
    if _major(found.protocolVersion, "initialize result") == 1:
        return 1
    return 2 if found.info is not _MISSING else 1
