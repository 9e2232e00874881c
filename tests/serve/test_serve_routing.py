"""The RFD's routing of server-to-client messages to SSE streams, sans-IO."""

from __future__ import annotations

from acp2.rpc.envelope import read
from acp2.serve.routing import MAX_PENDING, Router


def test_a_response_goes_where_its_request_was_posted() -> None:
    router = Router()
    assert router.posted(read(b'{"jsonrpc":"2.0","id":3,"method":"session/prompt"}'), "s1")
    assert router.posted(read(b'{"jsonrpc":"2.0","id":"x","method":"session/new"}'), None)
    assert router.destination(b'{"jsonrpc":"2.0","id":3,"result":{}}') == "s1"
    assert router.destination(b'{"jsonrpc":"2.0","id":"x","result":{}}') is None
    # Answered once: a second response with the id has no route (connection stream).
    assert router.destination(b'{"jsonrpc":"2.0","id":3,"result":{}}') is None


def test_session_load_is_answered_on_the_connection_stream() -> None:
    router = Router()
    load = b'{"jsonrpc":"2.0","id":1,"method":"session/load","params":{"sessionId":"s"}}'
    router.posted(read(load), "s")
    assert router.destination(b'{"jsonrpc":"2.0","id":1,"result":{}}') is None


def test_notifications_and_requests_go_to_their_sessions_stream() -> None:
    router = Router()
    update = b'{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s2","update":{}}}'
    assert router.destination(update) == "s2"
    ask = (
        b'{"jsonrpc":"2.0","id":9,"method":"session/request_permission",'
        b'"params":{"sessionId":"s3"}}'
    )
    assert router.destination(ask) == "s3"
    assert router.destination(b'{"jsonrpc":"2.0","method":"_ext/thing","params":[1]}') is None
    assert router.destination(b"not json") is None


def test_the_same_id_spelled_differently_has_one_route() -> None:
    router = Router()
    assert router.posted(read(b'{"jsonrpc":"2.0","id": 1 ,"method":"m"}'), "a")
    assert router.posted(read(b'{"jsonrpc":"2.0","id":"1","method":"m"}'), "b")
    assert router.destination(b'{"jsonrpc":"2.0","result":{},"id":1}') == "a"
    assert router.destination(b'{"jsonrpc":"2.0","id":"\\u0031","result":{}}') == "b"


def test_an_invalid_call_is_answered_where_it_was_posted() -> None:
    # The agent's reader answers a frame without "jsonrpc" with -32600 and its id.
    router = Router()
    assert router.posted(read(b'{"id":4,"method":"session/prompt"}'), "s1")
    assert router.destination(b'{"jsonrpc":"2.0","id":4,"error":{"code":-32600}}') == "s1"


def test_a_connection_remembers_a_bounded_number_of_pending_routes() -> None:
    router = Router()
    for n in range(MAX_PENDING):
        assert router.posted(read(b'{"jsonrpc":"2.0","id":%d,"method":"m"}' % n), None)
    assert not router.posted(read(b'{"jsonrpc":"2.0","id":-1,"method":"m"}'), None)


def test_the_agents_cancel_of_its_own_request_goes_to_that_requests_session_stream() -> None:
    """A permission question withdrawn (another controller answered it) is withdrawn on
    the stream the question went to: a client reading only its session streams over
    Streamable HTTP never saw the cancel on the connection stream."""
    router = Router()
    ask = (
        b'{"jsonrpc":"2.0","id":7,"method":"session/request_permission",'
        b'"params":{"sessionId":"s1"}}'
    )
    assert router.destination(ask) == "s1"
    cancel = b'{"jsonrpc":"2.0","method":"$/cancel_request","params":{"requestId":7}}'
    assert router.destination(cancel) == "s1"
    # Once: a second cancel of the same id, or one of an id never asked, is the
    # connection's.
    assert router.destination(cancel) is None
    other = b'{"jsonrpc":"2.0","method":"$/cancel_request","params":{"requestId":"x"}}'
    assert router.destination(other) is None
