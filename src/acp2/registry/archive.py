"""Downloading and unpacking an agent's binary archive, safely.

The archive is streamed over HTTPS into a private temporary file, hashed on the way, and
refused when the entry gives a ``sha256`` that differs. It is unpacked member by member
into a private folder: only regular files and folders are accepted (no links, no devices,
no absolute names, no ``..``), with caps on the download, the unpacked total and the
member count; set-id bits and write bits for others are dropped. A finished unpack is
moved into place in one rename and marked with the archive's digest, so the next start
reuses it (and a changed ``sha256`` in the entry fetches it again).
"""

from __future__ import annotations

import hashlib
import os
import shutil
import tarfile
import tempfile
import zipfile
from collections.abc import Iterator
from pathlib import Path, PurePosixPath
from typing import IO, Final

from acp2.errors import RegistryError, UnsafeDownload
from acp2.registry.index import download
from acp2.registry.model import BinaryTarget
from acp2.registry.paths import make_dirs, private_dir

__all__ = ["MAX_ARCHIVE_BYTES", "MAX_MEMBERS", "MAX_UNPACKED_BYTES", "fetch_archive", "unpack"]

#: The largest archive acp2 downloads.
MAX_ARCHIVE_BYTES: Final = 512 * 1024 * 1024
#: The most bytes one archive may unpack to.
MAX_UNPACKED_BYTES: Final = 2 * 1024 * 1024 * 1024
#: The most members one archive may hold.
MAX_MEMBERS: Final = 20000
_STAMP: Final = ".acp2-archive-sha256"
_CHUNK: Final = 1 << 16


def fetch_archive(target: BinaryTarget, folder: Path) -> Path:
    """The unpacked archive of ``target`` in ``folder`` (created ``0700``), downloading and
    unpacking it unless a previous unpack with a matching digest is there.

    Raises :class:`UnsafeDownload` (bad checksum, unsafe member, too large) or
    :class:`RegistryError` (download failed); nothing partial is left behind.
    """
    dest = folder / "unpacked"
    if _reusable(dest, target.sha256):
        return dest
    private_dir(folder)
    with tempfile.TemporaryDirectory(dir=folder, prefix=".download-") as tmp:
        archive = Path(tmp) / "archive"
        digest = _download_to(target.archive, archive)
        if target.sha256 and digest != target.sha256.lower():
            raise UnsafeDownload(
                f"the archive at {target.archive} has sha256 {digest}, but the registry entry "
                f"says {target.sha256.lower()}; it was deleted and nothing was run"
            )
        staged = Path(tmp) / "unpacked"
        staged.mkdir(mode=0o700)
        unpack(archive, staged)
        (staged / _STAMP).write_text(digest)
        _move_into_place(staged, dest, target.sha256)
    return dest


def _move_into_place(staged: Path, dest: Path, sha256: str | None) -> None:
    """Replace ``dest`` by ``staged``. Another acp2 may have put the same unpack there a
    moment ago (two chats started together): then that one is kept."""
    if dest.exists() and not _reusable(dest, sha256):
        shutil.rmtree(dest)
    try:
        os.replace(staged, dest)
    except OSError:
        if not _reusable(dest, sha256):
            raise


def _reusable(dest: Path, sha256: str | None) -> bool:
    try:
        recorded = (dest / _STAMP).read_text().strip()
    except OSError:
        return False
    return not sha256 or recorded == sha256.lower()


def _download_to(url: str, path: Path) -> str:
    digest = hashlib.sha256()
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    with os.fdopen(fd, "wb") as out:

        def sink(chunk: bytes) -> None:
            digest.update(chunk)
            out.write(chunk)

        download(url, MAX_ARCHIVE_BYTES, sink)
    return digest.hexdigest()


def unpack(archive: Path, dest: Path) -> None:
    """Unpack the zip or tar (plain, gzip, bzip2, xz) ``archive`` into the existing folder
    ``dest``; :class:`UnsafeDownload` on the first unsafe member (``dest`` may then hold
    part of it: the caller unpacks into a staging folder it deletes)."""
    budget = _Budget()
    if zipfile.is_zipfile(archive):
        with zipfile.ZipFile(archive) as zf:
            for info in zf.infolist():
                _unpack_zip_member(zf, info, dest, budget)
        return
    try:
        with tarfile.open(archive, "r:*") as tf:
            for member in _tar_members(tf):
                _unpack_tar_member(tf, member, dest, budget)
    except tarfile.TarError as exc:
        raise RegistryError(f"the agent archive is neither zip nor tar: {exc}") from None


def _tar_members(tf: tarfile.TarFile) -> Iterator[tarfile.TarInfo]:
    member = tf.next()
    while member is not None:
        yield member
        member = tf.next()


class _Budget:
    """Counts members and unpacked bytes against the caps."""

    def __init__(self) -> None:
        self.members = 0
        self.bytes = 0

    def member(self) -> None:
        self.members += 1
        if self.members > MAX_MEMBERS:
            raise UnsafeDownload(f"the agent archive has more than {MAX_MEMBERS} members")

    def add(self, count: int) -> None:
        self.bytes += count
        if self.bytes > MAX_UNPACKED_BYTES:
            limit = MAX_UNPACKED_BYTES
            raise UnsafeDownload(f"the agent archive unpacks to more than {limit} bytes")


def safe_member_path(dest: Path, name: str) -> Path:
    """Where member ``name`` goes below ``dest``; :class:`UnsafeDownload` for an empty or
    absolute name, a drive or backslash name, a NUL, or any ``..`` part."""
    if not name or "\0" in name or "\\" in name or name.startswith("/") or ":" in name:
        raise UnsafeDownload(f"the agent archive has an unsafe member name {name!r}")
    parts = [p for p in PurePosixPath(name).parts if p not in ("", ".")]
    if any(p == ".." for p in parts):
        raise UnsafeDownload(f"the agent archive has a member outside its folder: {name!r}")
    return dest.joinpath(*parts) if parts else dest


def _unpack_tar_member(
    tf: tarfile.TarFile, member: tarfile.TarInfo, dest: Path, budget: _Budget
) -> None:
    budget.member()
    path = safe_member_path(dest, member.name)
    if member.isdir():
        make_dirs(path)
        return
    if not member.isfile():
        kind = "link" if member.issym() or member.islnk() else "special file"
        raise UnsafeDownload(f"the agent archive has a {kind}: {member.name!r}; refused")
    source = tf.extractfile(member)
    if source is None:
        raise UnsafeDownload(f"the agent archive member {member.name!r} cannot be read")
    with source:
        _write_member(source, path, member.mode, budget)


def _unpack_zip_member(
    zf: zipfile.ZipFile, info: zipfile.ZipInfo, dest: Path, budget: _Budget
) -> None:
    budget.member()
    path = safe_member_path(dest, info.filename)
    mode = (info.external_attr >> 16) & 0o170000
    if info.is_dir():
        make_dirs(path)
        return
    if mode not in (0, 0o100000):  # a zip made on Unix may carry a link or a device
        raise UnsafeDownload(f"the agent archive has a link or special file: {info.filename!r}")
    with zf.open(info) as source:
        _write_member(source, path, (info.external_attr >> 16) & 0o777, budget)


def _write_member(source: IO[bytes], path: Path, mode: int, budget: _Budget) -> None:
    """Copy one member into a new file: never through a link, never over a file that is
    there already; executable for us when the archive says so, never writable by others."""
    make_dirs(path.parent)
    perms = 0o700 if mode & 0o111 else 0o600
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, perms)
    except FileExistsError:
        raise UnsafeDownload(f"the agent archive holds {path.name!r} twice") from None
    with os.fdopen(fd, "wb") as out:
        while chunk := source.read(_CHUNK):
            budget.add(len(chunk))
            out.write(chunk)
