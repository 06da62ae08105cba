"""Write a directory's first snapshot straight into a git object store, without ``git add``.

A workspace that is not a repository has every byte hashed and stored once. ``git add`` does it
at a fraction of ``git hash-object``'s speed (two collision-detecting SHA-1 passes, deflate, one
process walk); here each file is read once, hashed with OpenSSL's SHA-1 and copied into one pack
as *stored* (uncompressed) deflate blocks, so the cost is close to reading and hashing every byte.
The result is ordinary git: a pack v2 with its idx v2 (``git verify-pack`` accepts them), and an
index v2 with each file's stat data (so the next ``git add`` rehashes only changed files). The
pack's object count (one blob a file, one tree a directory) is written first, so its checksum is
computed by a thread as the bytes go out instead of reading the pack back; a file that turns out
to be a duplicate leaves room for a small filler blob that nothing refers to.

Anything git would refuse or treat specially (a name git's path checks reject, such as ``.git``
lookalikes) makes :func:`store_tree` return ``None`` so the caller falls back to ``git add``.
"""

from __future__ import annotations

import gc
import hashlib
import os
import queue
import re
import stat
import struct
import threading
import zlib
from collections.abc import Iterator
from dataclasses import dataclass, field

from reference_loop._workspace.gitindex import encode_entry

# Files up to this size are read whole; larger ones are streamed in pieces of this size.
_PIECE = 1 << 20
# The pack is written in pieces of at least this size.
_WRITE_SIZE = 4 << 20
# The largest stored deflate block.
_BLOCK = 0xFFFF
_BLOB, _TREE = 3, 2
_ADLER = struct.Struct(">I")
_BLOCK_HEADER = struct.Struct("<BHH")
_ONE_BLOCK = b"\x78\x01"  # a zlib header (no compression) before the stored block
# Unicode code points HFS+ ignores in a name (".g\u200cit" is ".git" there), as UTF-8.
_HFS_IGNORABLE = re.compile(rb"\xe2\x80[\x8c-\x8f\xaa-\xae]|\xe2\x81[\xaa-\xaf]|\xef\xbb\xbf")


class TreeChanged(Exception):
    """A file changed size while it was read; the caller snapshots again through git."""


@dataclass
class StoredTree:
    """What :func:`store_tree` wrote: the root tree id, index entries, nested repositories."""

    tree: str
    entries: list[tuple[bytes, os.stat_result, int, bytes]]  # path, stat, mode, binary sha
    nested: set[str] = field(default_factory=set)
    objects: int = 0


class PackWriter:
    """One pack v2 written object by object, with its idx v2 written by :meth:`finish`.

    Objects are stored uncompressed (deflate "stored" blocks): the data is copied, never
    compressed, which is what makes the first snapshot cost about one read and hash per byte.
    """

    def __init__(self, pack_dir: str, count: int | None = None) -> None:
        """Args:
        pack_dir: where the pack and its idx go.
        count: the number of objects the pack will hold, when the caller knows at most how
            many it adds: the pack's bytes are then hashed as they are written (by a thread),
            not read back at the end, and objects the caller does not add (duplicates) are
            made up with filler blobs, so that the header written first stays true.
        """
        self._dir = pack_dir
        self._tmp = os.path.join(pack_dir, "tmp_pack_hand")
        flags = os.O_RDWR | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC
        self._fd = os.open(self._tmp, flags, 0o444)
        self._offset = 0
        # Bytes not yet written: (file offset of the first, the parts). They go out in writes of
        # several MiB, which the page cache keeps in large folios; freeing a pack written in
        # per-object writes (small pages) cost several times more when the store is removed.
        self._pending: list[bytes | memoryview] = []
        self._pending_at = 0
        self._pending_size = 0
        self._count = count
        self._hasher: _Hasher | None = _Hasher() if count is not None else None
        self._put([b"PACK" + struct.pack(">II", 2, count or 0)])
        # binary sha -> (offset, crc32 of the object's bytes in the pack)
        self.objects: dict[bytes, tuple[int, int]] = {}
        self.fillers = 0  # filler blobs among them

    def add(self, kind: int, data: bytes) -> bytes:
        """Store one object held in memory; return its binary sha (written once per id)."""
        size = len(data)
        hasher = hashlib.sha1(_object_header(kind, size))
        hasher.update(data)
        sha = hasher.digest()
        if sha in self.objects:
            return sha
        if size <= _BLOCK:
            # One stored block (most files), put without the part loop: this runs per file.
            head = (
                _pack_header(kind, size) + _ONE_BLOCK + _BLOCK_HEADER.pack(1, size, size ^ 0xFFFF)
            )
            tail = _ADLER.pack(zlib.adler32(data))
            self.objects[sha] = (self._offset, zlib.crc32(tail, zlib.crc32(data, zlib.crc32(head))))
            pending = self._pending
            pending += (head, data, tail)
            size += len(head) + 4
            self._offset += size
            self._pending_size += size
            if self._pending_size >= _WRITE_SIZE or len(pending) > 1000:
                self._flush()
            return sha
        start = self._offset
        parts = _stored_zlib(_pack_header(kind, size), data)
        crc = 0
        for part in parts:
            crc = zlib.crc32(part, crc)
        self._put(parts)
        self.objects[sha] = (start, crc)
        return sha

    def add_tree(self, data: bytes) -> bytes:
        """Store one tree object's content; return its binary sha."""
        return self.add(_TREE, data)

    def add_stream(self, kind: int, size: int, pieces: Iterator[bytes]) -> bytes:
        """Store one object read piece by piece (``size`` bytes in all); bounded memory."""
        start = self._offset
        hasher = hashlib.sha1(_object_header(kind, size))
        head = _pack_header(kind, size) + b"\x78\x01"
        crc = zlib.crc32(head)
        self._put([head])
        adler = 1
        left = size
        for piece in pieces:
            hasher.update(piece)
            adler = zlib.adler32(piece, adler)
            left -= len(piece)
            parts: list[bytes | memoryview] = []
            view = memoryview(piece)
            for pos in range(0, len(piece), _BLOCK):
                block = view[pos : pos + _BLOCK]
                last = 1 if left == 0 and pos + _BLOCK >= len(piece) else 0
                parts += [_block_header(last, len(block)), block]
            for part in parts:
                crc = zlib.crc32(part, crc)
            self._put(parts)
        if left != 0:
            raise TreeChanged
        tail: list[bytes | memoryview] = [struct.pack(">I", adler)]
        if size == 0:
            tail.insert(0, _block_header(1, 0))
        for part in tail:
            crc = zlib.crc32(part, crc)
        self._put(tail)
        sha = hasher.digest()
        if sha in self.objects:  # the same bytes were stored already: take this copy back
            self._truncate(start)
        else:
            self.objects[sha] = (start, crc)
        return sha

    def _put(self, parts: list[bytes | memoryview], size: int = -1) -> None:
        """Append ``parts`` (``size`` bytes in all, when the caller knows) to the pack,
        written out once enough has gathered."""
        self._pending += parts
        if size < 0:
            size = sum(len(p) for p in parts)
        self._pending_size += size
        self._offset += size
        # pwritev takes at most 1024 parts: flush before that rather than join them.
        if self._pending_size >= _WRITE_SIZE or len(self._pending) > 1000:
            self._flush()

    def _flush(self) -> None:
        parts, self._pending = self._pending, []
        if self._hasher is not None:
            self._hasher.feed(parts)
        total, self._pending_size = self._pending_size, 0
        pos, self._pending_at = self._pending_at, self._pending_at + total
        done = os.pwritev(self._fd, parts, pos) if len(parts) <= 1024 else 0
        if done != total:
            view = memoryview(b"".join(parts))[done:]
            pos += done
            while view:
                n = os.pwrite(self._fd, view, pos)
                view = view[n:]
                pos += n

    def _truncate(self, offset: int) -> None:
        """Drop everything from ``offset`` on (an object just written that was a duplicate)."""
        if offset >= self._pending_at:
            keep: list[bytes | memoryview] = []
            size = self._pending_at
            for part in self._pending:
                if size >= offset:
                    break
                keep.append(part[: offset - size])
                size += len(keep[-1])
            self._pending = keep
            self._pending_size = offset - self._pending_at
        else:
            # Bytes already hashed are taken back: the pack is read back at the end instead.
            if self._hasher is not None:
                self._hasher.stop()
                self._hasher = None
            self._pending = []
            self._pending_size = 0
            os.ftruncate(self._fd, offset)
            self._pending_at = offset
        self._offset = offset

    def finish(self) -> str:
        """Write the object count and trailer, then the idx; return the pack's path."""
        if self._count is not None and len(self.objects) > self._count:
            raise ValueError(f"{len(self.objects)} objects added to a pack of {self._count}")
        tried = 0
        while self._count is not None and len(self.objects) < self._count:
            # A blob of its own for each object the caller did not add (a duplicate).
            before = len(self.objects)
            self.add(_BLOB, b"reference-loop pack filler %d\n" % tried)
            self.fillers += len(self.objects) - before
            tried += 1
        self._flush()
        if self._hasher is not None:
            checksum = self._hasher.digest()
            self._hasher = None
        else:
            os.pwrite(self._fd, struct.pack(">I", len(self.objects)), 8)
            checksum = self._read_back()
        self._put([checksum])
        self._flush()
        os.close(self._fd)
        self._fd = -1
        name = os.path.join(self._dir, f"pack-{checksum.hex()}")
        with open(name + ".idx.tmp", "wb") as out:
            out.write(_idx_bytes(self.objects, checksum))
        os.rename(self._tmp, name + ".pack")
        os.rename(name + ".idx.tmp", name + ".idx")
        return name + ".pack"

    def _read_back(self) -> bytes:
        """The SHA-1 of the pack's bytes so far, read back from the file."""
        hasher = hashlib.sha1()
        pos = 0
        while pos < self._offset:
            piece = os.pread(self._fd, min(_PIECE, self._offset - pos), pos)
            if not piece:
                break
            hasher.update(piece)
            pos += len(piece)
        return hasher.digest()

    def abort(self) -> None:
        """Remove the unfinished pack."""
        if self._hasher is not None:
            self._hasher.stop()
            self._hasher = None
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1
        os.unlink(self._tmp)


class _Hasher:
    """SHA-1 of a stream of byte pieces, computed in a thread as they come (hashlib lets go
    of the GIL on large pieces, so it runs on another core beside the writer)."""

    def __init__(self) -> None:
        self._sha = hashlib.sha1()
        self._queue: queue.SimpleQueue[list[bytes | memoryview] | None] = queue.SimpleQueue()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while (parts := self._queue.get()) is not None:
            for part in parts:
                self._sha.update(part)

    def feed(self, parts: list[bytes | memoryview]) -> None:
        self._queue.put(parts)

    def digest(self) -> bytes:
        self.stop()
        return self._sha.digest()

    def stop(self) -> None:
        self._queue.put(None)
        self._thread.join()


def store_tree(root: bytes, pack_dir: str) -> StoredTree | None:
    """Hash every file and symlink under ``root`` into one pack in ``pack_dir``, with a tree
    for every directory that holds one. ``.git`` entries are skipped (their directory is a
    nested repository, stored as plain files). Returns ``None`` for a tree git would not take.

    Args:
        root: the directory, as bytes.
        pack_dir: the private store's ``objects/pack``.

    Returns:
        The root tree id and the index entries, or ``None`` to let ``git add`` do it.

    Raises:
        TreeChanged: a file changed size while it was read.
        OSError: a file or directory could not be read.
    """
    # The cyclic garbage collector is paused meanwhile: the entries hold no cycles, yet their
    # hundreds of thousands of new objects start collections that walk the whole heap.
    paused = gc.isenabled()
    if paused:
        gc.disable()
    try:
        return _store_tree(root, pack_dir)
    finally:
        if paused:
            gc.enable()


def _store_tree(root: bytes, pack_dir: str) -> StoredTree | None:
    found = _walk(root)
    if found is None:
        return None
    files, nested = found
    files.sort(key=lambda f: f[0])
    # Every file is a blob and every directory holding one a tree: the pack's count is known
    # before anything is written, so its checksum is computed as it is written.
    dirs = {b""}
    for rel, _st in files:
        parent = rel.rpartition(b"/")[0]
        while parent not in dirs:
            dirs.add(parent)
            parent = parent.rpartition(b"/")[0]
    writer = PackWriter(pack_dir, count=len(files) + len(dirs))
    try:
        entries = []
        for rel, st in files:
            entries.append(store_file(writer, root + b"/" + rel, rel, st))
        tree = _store_trees(writer, entries)
        writer.finish()
    except BaseException:
        writer.abort()
        raise
    return StoredTree(tree.hex(), entries, nested, len(writer.objects) - writer.fillers)


def _walk(root: bytes) -> tuple[list[tuple[bytes, os.stat_result | None]], set[str]] | None:
    """Every file (with ``None``: the open that reads it stats it) and symlink (with its
    ``lstat``) under ``root``, by the directory entries' types; and the nested repositories."""
    files: list[tuple[bytes, os.stat_result | None]] = []
    nested: set[str] = set()
    todo = [b""]
    while todo:
        d = todo.pop()
        with os.scandir(root + b"/" + d if d else root) as it:
            for entry in it:
                name = entry.name
                rel = d + b"/" + name if d else name
                if name == b".git":
                    if d:
                        nested.add(os.fsdecode(d))
                    continue
                if not name_ok(name):
                    return None
                if entry.is_dir(follow_symlinks=False):
                    todo.append(rel)
                elif entry.is_file(follow_symlinks=False):
                    files.append((rel, None))
                elif entry.is_symlink():
                    files.append((rel, entry.stat(follow_symlinks=False)))
    return files, nested


def name_ok(name: bytes) -> bool:
    """False for a name git's path checks might refuse or treat as a repository: ``.git``
    in any case and as NTFS also reads it (trailing dots or spaces, a stream name, the short
    name ``git~1``) or HFS+ (with ignorable code points), ``.gitmodules`` (refused as a
    symlink), a backslash, ``.`` and ``..``. Those trees go through git, which says what it
    refuses; ``.gitattributes.orig`` or ``.gitlab-ci.yml`` are ordinary names."""
    low = name.lower()
    if low in (b".", b"..") or b"\\" in name or _HFS_IGNORABLE.search(name):
        return False
    if low.startswith(b".git"):
        rest = low[4:]
        return bool(rest.strip(b". ")) and not rest.startswith((b":", b"modules"))
    return not low.startswith((b"git~", b"gitmod~"))


def store_file(
    writer: PackWriter, full: bytes, rel: bytes, st: os.stat_result | None
) -> tuple[bytes, os.stat_result, int, bytes]:
    """Store one file or symlink as a blob; return its index entry.

    Args:
        writer: the pack being written.
        full: the file's path to open.
        rel: its path in the tree.
        st: its ``lstat``, or ``None`` for a regular file (its open is stat'ed instead).

    Returns:
        (rel, the stat the content was read under, git mode, binary sha).

    Raises:
        TreeChanged: it is no longer a regular file or symlink, or changed size while read.
        OSError: it could not be read.
    """
    if st is not None and stat.S_ISLNK(st.st_mode):
        return rel, st, 0o120000, writer.add(_BLOB, os.readlink(full))
    fd = os.open(full, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise TreeChanged
        mode = 0o100755 if st.st_mode & stat.S_IXUSR else 0o100644
        size = st.st_size
        if size <= _PIECE:
            data = os.read(fd, size + 1) if size else os.read(fd, 1)
            if len(data) != size:
                raise TreeChanged
            return rel, st, mode, writer.add(_BLOB, data)
        return rel, st, mode, writer.add_stream(_BLOB, size, _pieces(fd, size))
    finally:
        os.close(fd)


def _pieces(fd: int, size: int) -> Iterator[bytes]:
    left = size
    while left:
        piece = os.read(fd, min(left, _PIECE))
        if not piece:
            return
        left -= len(piece)
        yield piece
    if os.read(fd, 1):
        raise TreeChanged


def _store_trees(
    writer: PackWriter, entries: list[tuple[bytes, os.stat_result, int, bytes]]
) -> bytes:
    """Write a tree for every directory; return the root tree's binary sha."""
    children: dict[bytes, list[tuple[bytes, bytes, bytes]]] = {b"": []}  # dir -> (key, mode, sha)
    for rel, _st, mode, sha in entries:
        parent, _, name = rel.rpartition(b"/")
        up = parent
        while up not in children:
            children[up] = []
            up = up.rpartition(b"/")[0]
        children[parent].append((name, b"%o" % mode, sha))
    # Deepest first, so each tree's subtrees are written before it.
    root_sha = b""
    for d in sorted(children, key=lambda p: p.count(b"/") + (1 if p else 0), reverse=True):
        # git orders a tree's entries by name, a subtree's name compared as if it ended in "/".
        items = sorted(
            children[d], key=lambda item: item[0] + (b"/" if item[1] == b"40000" else b"")
        )
        data = b"".join(mode + b" " + name + b"\0" + sha for name, mode, sha in items)
        sha = writer.add(_TREE, data)
        if d:
            parent, _, name = d.rpartition(b"/")
            children[parent].append((name, b"40000", sha))
        else:
            root_sha = sha
    return root_sha


def write_index(path: str, entries: list[tuple[bytes, os.stat_result, int, bytes]]) -> None:
    """Write an index v2 holding ``entries`` (sorted by path) with their stat data.

    Args:
        path: where the index goes (written beside it, then renamed over it).
        entries: (path, stat, mode, binary sha) per file, sorted by path bytes.
    """
    head = b"DIRC" + struct.pack(">II", 2, len(entries))
    data = b"".join([head, *(encode_entry(*entry) for entry in entries)])
    data += hashlib.sha1(data).digest()
    with open(path + ".tmp", "wb") as fh:
        fh.write(data)
    os.rename(path + ".tmp", path)


def _object_header(kind: int, size: int) -> bytes:
    return (b"blob" if kind == _BLOB else b"tree") + b" %d\0" % size


def _pack_header(kind: int, size: int) -> bytes:
    """An object's type and size as a pack writes them (4 bits, then 7 bits a byte)."""
    first = (kind << 4) | (size & 0x0F)
    rest = size >> 4
    if rest < 0x80:  # up to 2 KiB: the common sizes take no loop
        return bytes((first | 0x80, rest)) if rest else bytes((first,))
    out = bytearray((first | 0x80,))
    while rest >= 0x80:
        out.append((rest & 0x7F) | 0x80)
        rest >>= 7
    out.append(rest)
    return bytes(out)


def _block_header(last: int, length: int) -> bytes:
    return struct.pack("<BHH", last, length, length ^ 0xFFFF)


def _stored_zlib(pack_header: bytes, data: bytes) -> list[bytes | memoryview]:
    """The pack header and ``data`` as a zlib stream of stored (uncompressed) deflate blocks."""
    if len(data) <= _BLOCK:
        return [
            pack_header + b"\x78\x01" + _block_header(1, len(data)),
            data,
            struct.pack(">I", zlib.adler32(data)),
        ]
    parts: list[bytes | memoryview] = [pack_header + b"\x78\x01"]
    view = memoryview(data)
    for pos in range(0, len(data), _BLOCK):
        block = view[pos : pos + _BLOCK]
        parts += [_block_header(1 if pos + _BLOCK >= len(data) else 0, len(block)), block]
    parts.append(struct.pack(">I", zlib.adler32(data)))
    return parts


def _idx_bytes(objects: dict[bytes, tuple[int, int]], pack_checksum: bytes) -> bytes:
    shas = sorted(objects)
    fanout = [0] * 256
    for sha in shas:
        fanout[sha[0]] += 1
    total = 0
    for i in range(256):
        total += fanout[i]
        fanout[i] = total
    small: list[int] = []
    large: list[int] = []
    for sha in shas:
        offset = objects[sha][0]
        if offset < 0x80000000:
            small.append(offset)
        else:
            small.append(0x80000000 | len(large))
            large.append(offset)
    n = len(shas)
    data = b"".join(
        [
            b"\xfftOc" + struct.pack(">I", 2),
            struct.pack(">256I", *fanout),
            *shas,
            struct.pack(f">{n}I", *(objects[s][1] for s in shas)),
            struct.pack(f">{n}I", *small),
            struct.pack(f">{len(large)}Q", *large),
            pack_checksum,
        ]
    )
    return data + hashlib.sha1(data).digest()
