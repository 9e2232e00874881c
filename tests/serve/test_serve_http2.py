"""``acp2 serve --http2``: the app under hypercorn, a real subprocess on 127.0.0.1, driven
by an httpx HTTP/2 client (cleartext prior knowledge) through a full Streamable HTTP turn
on one TCP connection: POST initialize, the connection and session SSE streams, a prompt
and its updates to idle."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest
from serve_helpers import initialize, is_idle, new_session, post_headers, prompt, sse

from helpers.serve_process import serving
from helpers.timeouts import TIMEOUT

pytestmark = pytest.mark.anyio


async def test_a_full_prompt_goes_over_http2_streams_of_one_connection(tmp_path: Path) -> None:
    with serving(tmp_path, "--test-agent", "--http2", "--store", str(tmp_path / "h.db")) as port:
        url = f"http://127.0.0.1:{port}/acp"
        async with httpx.AsyncClient(http1=False, http2=True, timeout=TIMEOUT) as client:
            opened = await client.post(url, json=initialize(), headers=post_headers())
            assert opened.http_version == "HTTP/2"
            assert opened.json()["result"]["protocolVersion"] == 2
            cid = opened.headers["acp-connection-id"]
            async with sse(client, url, cid) as main:
                posted = await client.post(url, json=new_session(1), headers=post_headers(cid))
                assert (posted.status_code, posted.http_version) == (202, "HTTP/2")
                created = await main.until(lambda d: d.get("id") == 1)
                sid = created[-1].data["result"]["sessionId"]
                async with sse(client, url, cid, sid) as session:
                    assert session.response.http_version == "HTTP/2"
                    await client.post(
                        url, json=prompt(2, sid, "echo over h2"), headers=post_headers(cid, sid)
                    )
                    events = await session.until(is_idle)
    chunks = [
        e.data["params"]["update"]["content"]["text"]
        for e in events
        if e.data.get("params", {}).get("update", {}).get("sessionUpdate") == "agent_message_chunk"
    ]
    assert "".join(chunks) == "over h2"


async def test_without_http2_the_same_client_cannot_speak_prior_knowledge_h2(
    tmp_path: Path,
) -> None:
    # uvicorn speaks HTTP/1.1 only: an h2-only client fails there, so the test above
    # passes because of --http2, not because any server would do.
    with serving(tmp_path, "--test-agent", "--store", str(tmp_path / "h.db")) as port:
        url = f"http://127.0.0.1:{port}/acp"
        async with httpx.AsyncClient(http1=False, http2=True, timeout=TIMEOUT) as client:
            with pytest.raises(httpx.HTTPError):
                await client.post(url, json=initialize(), headers=post_headers())
