"""A fake ACP registry on 127.0.0.1: a ``registry.json`` in the registry's real format
(written by the test) and agent archives, served by a small HTTP server.

``entry()`` builds one ``agent.json`` entry; ``tar_archive()`` / ``agent_archive()`` build
archives in memory; :class:`FakeRegistry` serves ``/registry.json`` and every file in
``files`` and counts requests; :func:`unreachable_url` is a loopback URL nobody answers.
"""

from __future__ import annotations

import base64
import hashlib
import io
import json
import socket
import sys
import tarfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any

from helpers.http_fake import serve_on_loopback

__all__ = [
    "FakeRegistry",
    "agent_archive",
    "entry",
    "file_member",
    "index",
    "npm_package",
    "serve_registry",
    "sha256",
    "tar_archive",
    "unreachable_url",
]

#: The checkout's sources, so a script unpacked from an archive runs this acp2.
SRC = str(Path(__file__).resolve().parents[2] / "src")


def entry(agent_id: str, **fields: Any) -> dict[str, Any]:
    """One ``agent.json`` entry with every required field; ``fields`` override."""
    base: dict[str, Any] = {
        "id": agent_id,
        "name": agent_id.replace("-", " ").title(),
        "version": "1.2.3",
        "description": f"The {agent_id} agent for tests",
        "repository": f"https://example.invalid/{agent_id}",
        "authors": ["acp2 tests"],
        "license": "MIT",
        "distribution": {"npx": {"package": f"@acp2-tests/{agent_id}@1.2.3", "args": ["--acp"]}},
    }
    base.update(fields)
    return base


def index(*entries: dict[str, Any]) -> bytes:
    """A ``registry.json`` holding ``entries``."""
    return json.dumps({"version": "1.0.0", "agents": list(entries), "extensions": []}).encode()


def sha256(data: bytes) -> str:
    """The hex sha256 of ``data``."""
    return hashlib.sha256(data).hexdigest()


def tar_archive(members: list[tarfile.TarInfo], contents: dict[str, bytes]) -> bytes:
    """A .tar.gz of ``members``; a regular member's bytes come from ``contents``."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as tf:
        for member in members:
            data = contents.get(member.name, b"")
            if member.isfile():
                member.size = len(data)
            tf.addfile(member, io.BytesIO(data) if member.isfile() else None)
    return buffer.getvalue()


def file_member(name: str, mode: int = 0o644) -> tarfile.TarInfo:
    """A regular-file tar member (a folder when ``name`` ends with ``/``)."""
    info = tarfile.TarInfo(name)
    info.mode = mode
    if name.endswith("/"):
        info.type = tarfile.DIRTYPE
    return info


def agent_archive() -> bytes:
    """A .tar.gz whose ``bin/test-agent`` starts ``acp2 test-agent`` with this interpreter."""
    script = f'#!/bin/sh\nPYTHONPATH={SRC} exec {sys.executable} -m acp2 test-agent "$@"\n'
    return tar_archive(
        [file_member("bin/", 0o755), file_member("bin/test-agent", 0o755)],
        {"bin/test-agent": script.encode()},
    )


def npm_package(fake: FakeRegistry, name: str, version: str) -> dict[str, str]:
    """Publish the npm package ``name@version`` on ``fake``, playing an npm registry: its
    one bin, ``name``, starts ``acp2 test-agent`` with this interpreter (all arguments
    passed on). Returns the environment that makes npm and npx use ``fake`` (with a
    private cache: ``npm_config_cache`` is left for the caller to set)."""
    starter = (
        "#!/usr/bin/env node\n"
        "const { spawnSync } = require('child_process');\n"
        f"const env = {{ ...process.env, PYTHONPATH: {json.dumps(SRC)} }};\n"
        f"const run = spawnSync({json.dumps(sys.executable)}, "
        "['-m', 'acp2', 'test-agent', ...process.argv.slice(2)], { stdio: 'inherit', env });\n"
        "process.exit(run.status === null ? 1 : run.status);\n"
    )
    manifest = {"name": name, "version": version, "bin": {name: "agent.js"}}
    tarball = _npm_tarball(
        {"package.json": json.dumps(manifest).encode(), "agent.js": starter.encode()}
    )
    path = f"/{name}/-/{name}-{version}.tgz"
    integrity = "sha512-" + base64.b64encode(hashlib.sha512(tarball).digest()).decode()
    dist = {
        "tarball": fake.url(path),
        "integrity": integrity,
        "shasum": hashlib.sha1(tarball).hexdigest(),
    }
    packument = {
        "name": name,
        "dist-tags": {"latest": version},
        "versions": {version: {**manifest, "dist": dist}},
    }
    fake.files[f"/{name}"] = json.dumps(packument).encode()
    fake.files[path] = tarball
    return {
        "npm_config_registry": fake.url("/"),
        "npm_config_update_notifier": "false",
        "npm_config_audit": "false",
        "npm_config_fund": "false",
    }


def _npm_tarball(files: dict[str, bytes]) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as tf:
        for name, data in files.items():
            info = tarfile.TarInfo(f"package/{name}")
            info.size = len(data)
            info.mode = 0o755
            tf.addfile(info, io.BytesIO(data))
    return buffer.getvalue()


@dataclass
class FakeRegistry:
    """What the fake serves: ``files`` by path (``/registry.json`` first of all)."""

    files: dict[str, bytes] = field(default_factory=dict)
    requests: list[str] = field(default_factory=list)
    port: int = 0

    def url(self, path: str = "/registry.json") -> str:
        """The loopback URL of ``path``."""
        return f"http://127.0.0.1:{self.port}{path}"


class _Handler(BaseHTTPRequestHandler):
    fake: FakeRegistry

    def do_GET(self) -> None:
        self.fake.requests.append(self.path)
        body = self.fake.files.get(self.path)
        if body is None:
            self.send_error(404)
            return
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:
        """Quiet: the test reads ``requests``."""


@contextmanager
def serve_registry(files: dict[str, bytes]) -> Iterator[FakeRegistry]:
    """Serve ``files`` on 127.0.0.1 for the length of the block."""
    with serve_on_loopback(FakeRegistry(files=dict(files)), _Handler) as fake:
        yield fake


def unreachable_url() -> str:
    """A loopback URL on a port that was free a moment ago (connection refused)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}/registry.json"
