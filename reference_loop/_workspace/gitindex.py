"""Read a git index (the staging area's file) and write changed copies of it, without git.

A workspace at the top of a repository starts from the user's index. Most of its entries are
right as they are; the first snapshot only has to record the few files that differ (edited,
removed, or not tracked at all). This module does the format work that makes that cheap:

- :func:`read_index` parses an index, version 2 or 3: every entry's path and where its bytes
  lie, the entries git would trust without looking at the disk, and the cache-tree extension.
- :func:`rewrite_index` builds the index with some entries replaced, removed or added, by
  copying the unchanged entries' bytes as they are, and the trees of the directories that
  changed (handed to a callback that stores them), reusing the cache tree everywhere else.
- :func:`split_index_over` wraps an index as the shared part of a split index, so git's later
  commands write only the entries they change.

See git's ``Documentation/gitformat-index.txt``. Version 4 (prefix-compressed paths), split and
sparse indexes are not parsed: callers then leave the work to git.
"""

from __future__ import annotations

import bisect
import functools
import hashlib
import os
import struct
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field

# An empty EWAH bitmap (no bits, one zero marker word): a split index's delete and replace
# bitmaps when nothing is deleted or replaced.
EMPTY_EWAH = b"\0\0\0\0" + b"\0\0\0\1" + b"\0" * 8 + b"\0\0\0\0"
_ENTRY = struct.Struct(">10I20sH")
_MASK = 0xFFFFFFFF
# An index entry's mode field -> the mode as a tree entry writes it.
_MODES = {
    (mode).to_bytes(4, "big"): b"%o " % mode for mode in (0o100644, 0o100755, 0o120000, 0o160000)
}

# (path, stat of the file when it was read, git mode, binary sha): one entry to write.
NewEntry = tuple[bytes, os.stat_result, int, bytes]


@dataclass
class Index:
    """A parsed index (version 2 or 3, not split): its entries in order and its cache tree."""

    data: bytes
    paths: list[bytes]  # every entry's path, in the index's (byte) order
    starts: list[int]  # where each entry's bytes start, then where the entries end
    # Entries git trusts without looking at the disk: (path, is a gitlink) for assume-unchanged,
    # skip-worktree and gitlink entries.
    flagged: list[tuple[bytes, bool]]
    # An unmerged entry, or one with extended flags (intent-to-add, skip-worktree): the index
    # is then only read, never rewritten here.
    unusual: bool
    # The cache tree's root id (hex) when it is valid, i.e. covers every entry.
    tree: str | None = None
    # The cache-tree extension's body (b"" when there is none).
    tree_ext: bytes = b""

    @functools.cached_property
    def path_set(self) -> set[bytes]:
        return set(self.paths)

    @functools.cached_property
    def nodes(self) -> dict[bytes, _Node] | None:
        """The cache tree's directories (see :func:`_tree_nodes`); ``None`` when it does not
        parse."""
        return _tree_nodes(self.tree_ext) if self.tree_ext else {}

    def entry(self, path: bytes) -> tuple[int, bytes, int] | None:
        """(git mode, binary sha, size on disk when recorded) of ``path``; ``None`` when the
        index does not hold it."""
        at = bisect.bisect_left(self.paths, path)
        if at == len(self.paths) or self.paths[at] != path:
            return None
        pos = self.starts[at]
        fields = self.data[pos + 24 : pos + 60]
        return (
            int.from_bytes(fields[:4], "big"),
            fields[16:36],
            int.from_bytes(fields[12:16], "big"),
        )


@dataclass
class Rewritten:
    """What :func:`rewrite_index` made: the new index (not split), its cache tree, and the new
    index parsed (when it was asked for)."""

    data: bytes
    tree_ext: bytes  # the TREE extension's body, every node valid
    tree: bytes  # the root tree's binary id
    index: Index | None = None


def read_index(data: bytes) -> Index | None:
    """Parse an index, version 2 or 3.

    Args:
        data: the index file's bytes.

    Returns:
        The parsed index, or ``None`` when ``data`` is not such an index (git is asked instead).
    """
    if len(data) < 32 or data[:4] != b"DIRC" or data[4:8] not in (b"\0\0\0\2", b"\0\0\0\3"):
        return None
    count = int.from_bytes(data[8:12], "big")
    paths: list[bytes] = []
    starts: list[int] = []
    flagged: list[tuple[bytes, bool]] = []
    unusual = False
    pos = 12
    add_path, add_start = paths.append, starts.append
    try:
        for _ in range(count):
            # Byte 26 is the mode's file type (0xE0: gitlink); byte 60 the flags' high byte
            # (0x80 assume-valid, 0x40 extended flags follow, 0x30 the stage, low 4 bits: the
            # name length's top).
            high = data[pos + 60]
            if high < 0x0F and data[pos + 26] != 0xE0:
                # Almost every entry: no flag, not a gitlink, a name shorter than 0xFFF.
                size = (high << 8) | data[pos + 61]
                add_path(data[pos + 62 : pos + 62 + size])
                add_start(pos)
                pos += (70 + size) & ~7
                continue
            extended = high & 0x40
            start = pos + (64 if extended else 62)
            size = ((high & 0x0F) << 8) | data[pos + 61]
            if size == 0xFFF:
                size = data.index(b"\0", start) - start
            path = data[start : start + size]
            paths.append(path)
            starts.append(pos)
            if high & 0x80 or data[pos + 26] == 0xE0 or (extended and data[pos + 62] & 0x40):
                flagged.append((path, data[pos + 26] == 0xE0))
            if extended or high & 0x30:
                unusual = True
            pos = (start + size + 8 - pos) // 8 * 8 + pos
    except (IndexError, ValueError):
        return None
    if pos > len(data) - 20:
        return None
    starts.append(pos)
    body = _extension(data, pos, b"TREE")
    root = _root_of(body) if body else None
    tree = root[1].hex() if root is not None and root[0] == count else None
    return Index(data, paths, starts, flagged, unusual, tree, body or b"")


def split_index_over(data: bytes) -> bytes | None:
    """A split index whose shared part is ``data`` (an index, version 2 or 3, not split) as it
    is: no entries of its own, a ``link`` extension naming ``data`` by its checksum, and the
    cache-tree extension of ``data`` (git reads it from the split part only).

    The extensions are found from the end, without walking every entry: a ``TREE``
    candidate counts only when it is followed by a chain of extensions ending exactly at the
    checksum, follows an entry's NUL padding, and its root records as many entries as the
    header (or is invalidated).

    Args:
        data: the index to share.

    Returns:
        The split part's bytes, or ``None`` when the cache tree cannot be located for certain
        (the caller then uses ``data`` whole).
    """
    if len(data) < 32 or data[:4] != b"DIRC" or data[4:8] not in (b"\0\0\0\2", b"\0\0\0\3"):
        return None
    count = int.from_bytes(data[8:12], "big")
    end = len(data) - 20
    tree: bytes | None = None
    pos = data.rfind(b"TREE", 12, end)
    while pos > 12:
        sigs = _extensions_to(data, pos, end) if data[pos - 1] == 0 else None
        if sigs is not None:
            if b"link" in sigs or b"sdir" in sigs:
                return None  # already split, or a sparse index: left to git
            size = int.from_bytes(data[pos + 4 : pos + 8], "big")
            body = data[pos + 8 : pos + 8 + size]
            newline = body.find(b"\n")
            counts = body[1:newline].split(b" ") if newline > 0 and body[:1] == b"\0" else []
            if len(counts) == 2 and counts[0] in (str(count).encode(), b"-1"):
                tree = body
                break
            return None  # a TREE where one may be, that does not fit: do not guess
        pos = data.rfind(b"TREE", 12, pos)
    if tree is None and b"TREE" in data[12:end]:
        return None
    return split_part(data, tree or b"")


def encode_entry(path: bytes, st: os.stat_result, mode: int, sha: bytes) -> bytes:
    """One index entry (version 2) for ``path`` with the stat data git compares later.

    Args:
        path: the path, relative, ``/``-separated.
        st: the file's stat when it was read (``lstat`` for a symlink).
        mode: the git mode (0o100644, 0o100755 or 0o120000).
        sha: the blob's binary id.

    Returns:
        The entry's bytes, NUL-padded to a multiple of 8.
    """
    # Seconds and nanoseconds as the kernel keeps them (floor division, no float).
    ctime, ctime_ns = divmod(st.st_ctime_ns, 1_000_000_000)
    mtime, mtime_ns = divmod(st.st_mtime_ns, 1_000_000_000)
    size = len(path)
    fixed = _ENTRY.pack(
        ctime & _MASK,
        ctime_ns,
        mtime & _MASK,
        mtime_ns,
        st.st_dev & _MASK,
        st.st_ino & _MASK,
        mode,
        st.st_uid & _MASK,
        st.st_gid & _MASK,
        st.st_size & _MASK,
        sha,
        size if size < 0xFFF else 0xFFF,
    )
    return fixed + path + b"\0" * (8 - (62 + size) % 8)


def rewrite_index(
    index: Index,
    changed: Mapping[bytes, NewEntry | None],
    store_tree: Callable[[bytes], bytes],
    *,
    trees_only: bool = False,
) -> Rewritten | None:
    """The index with ``changed`` applied, and the trees of every directory it changed.

    Unchanged entries are copied byte for byte (their stat data stays as the user's git wrote
    it). A directory no change touches keeps its cache-tree id; every other directory's tree
    is built from its entries and handed to ``store_tree``.

    Args:
        index: the index to start from; it must not be :attr:`Index.unusual`.
        changed: path -> the new entry, or ``None`` to remove a tracked path. A path the index
            does not hold is added.
        store_tree: stores a tree object's content; returns its binary id.
        trees_only: only store the trees (the new index's bytes are not made).

    Returns:
        The new index (parsed too) and cache tree, or ``None`` when the index cannot be
        rewritten here (an unparsed cache tree, a removal of a path it does not hold, a path
        that is both a file and a directory).
    """
    nodes = index.nodes
    if index.unusual or nodes is None:
        return None
    new = _Spliced(index, trees_only)
    for path in sorted(changed):
        if not new.apply(path, changed[path]):
            return None
    new.finish()
    if _file_and_directory(new.paths, changed):
        return None
    # Every directory holding a change is built afresh (the others keep their cached id),
    # and learns the names of the subdirectories a new entry may have made.
    touched: dict[bytes, set[bytes]] = {b"": set()}
    for path in changed:
        cut = path.find(b"/")
        while cut > 0:
            parent = path[: path.rfind(b"/", 0, cut) + 1]
            touched.setdefault(parent, set()).add(path[len(parent) : cut])
            touched.setdefault(path[: cut + 1], set())
            cut = path.find(b"/", cut + 1)
    trees = _TreeBuilder(new.paths, new.starts, new.fresh, index, nodes, touched, store_tree)
    ext: list[bytes] = []
    root = trees.build(b"", b"", 0, len(new.paths), ext)
    tree_ext = b"".join(ext)
    if trees_only:
        return Rewritten(b"", tree_ext, root)
    head = b"DIRC" + struct.pack(">II", 2, len(new.paths))
    body = b"".join([head, *new.chunks, b"TREE", struct.pack(">I", len(tree_ext)), tree_ext])
    body += hashlib.sha1(body).digest()
    parsed = Index(body, new.paths, new.offsets, [], False, root.hex(), tree_ext)
    return Rewritten(body, tree_ext, root, parsed)


class _Spliced:
    """The entries of an index with changes applied in path order: their paths, where each
    one's bytes start in the old index (-1 for a new entry, kept in :attr:`fresh` by
    position) and, unless only trees are wanted, the new index's entry bytes and offsets."""

    def __init__(self, index: Index, trees_only: bool) -> None:
        self._old = index
        self._view = memoryview(index.data)
        self._trees_only = trees_only
        self._done = 0  # old entries before this one are placed
        self.paths: list[bytes] = []
        self.starts: list[int] = []
        self.fresh: dict[int, NewEntry] = {}
        self.chunks: list[bytes | memoryview] = []
        self.offsets: list[int] = []
        self._offset = 12  # after the header

    def apply(self, path: bytes, entry: NewEntry | None) -> bool:
        """Put ``entry`` at ``path`` (``None``: remove it); paths must come in order. False
        when a path to remove is not in the index."""
        paths = self._old.paths
        at = bisect.bisect_left(paths, path, self._done)
        held = at < len(paths) and paths[at] == path
        if entry is None and not held:
            return False
        self._copy_to(at)
        if held:
            self._done = at + 1
        if entry is not None:
            self.fresh[len(self.paths)] = entry
            self.paths.append(path)
            self.starts.append(-1)
            if not self._trees_only:
                self.chunks.append(encode_entry(*entry))
                self.offsets.append(self._offset)
                self._offset += len(self.chunks[-1])
        return True

    def finish(self) -> None:
        """Copy the old entries after the last change; the offsets end with the entries'."""
        self._copy_to(len(self._old.paths))
        self.offsets.append(self._offset)

    def _copy_to(self, at: int) -> None:
        done, starts = self._done, self._old.starts
        self.paths += self._old.paths[done:at]
        self.starts += starts[done:at]
        if not self._trees_only and done < at:
            self.chunks.append(self._view[starts[done] : starts[at]])
            shift = self._offset - starts[done]
            self.offsets += [start + shift for start in starts[done:at]]
            self._offset += starts[at] - starts[done]
        self._done = at


def _file_and_directory(paths: list[bytes], changed: Iterable[bytes]) -> bool:
    """Whether a changed path is also a directory holding the next entry (``a`` beside
    ``a/b``), or sits below a path that is a file: a git index holds neither."""
    for path in changed:
        at = bisect.bisect_left(paths, path)
        if at < len(paths) and paths[at] == path:
            below = bisect.bisect_left(paths, path + b"/", at)
            if below < len(paths) and paths[below].startswith(path + b"/"):
                return True
            cut = path.rfind(b"/")
            while cut > 0:
                parent = path[:cut]
                pos = bisect.bisect_left(paths, parent)
                if pos < len(paths) and paths[pos] == parent:
                    return True
                cut = path.rfind(b"/", 0, cut)
    return False


@dataclass
class _Node:
    """One directory of a cache-tree extension: its entry count (-1: invalidated), its id,
    where its record and its subtrees' records lie, and whether all of them are valid."""

    count: int
    sha: bytes | None
    start: int
    end: int
    whole: bool
    children: set[bytes] = field(default_factory=set)


def _tree_nodes(body: bytes) -> dict[bytes, _Node] | None:
    """Directory (``b""`` for the top, else ending in ``/``) -> its node, for a cache-tree
    extension's body; ``None`` when the body does not parse."""
    nodes: dict[bytes, _Node] = {}

    def parse(pos: int, prefix: bytes) -> tuple[int, bool]:
        nul = body.index(b"\0", pos)
        newline = body.index(b"\n", nul)
        count_text, subs_text = body[nul + 1 : newline].split(b" ")
        count, subs = int(count_text), int(subs_text)
        if count < -1 or subs < 0:
            raise ValueError("bad cache-tree counts")
        at = newline + 1
        sha = None
        if count >= 0:
            sha = body[at : at + 20]
            if len(sha) != 20:
                raise ValueError("short cache-tree id")
            at += 20
        whole = sha is not None
        children = set()
        for _ in range(subs):
            name = body[at : body.index(b"\0", at)]
            if not name or b"/" in name:
                raise ValueError("bad cache-tree name")
            children.add(name)
            at, valid = parse(at, prefix + name + b"/")
            whole = whole and valid
        nodes[prefix] = _Node(count, sha, pos, at, whole, children)
        return at, whole

    try:
        if body[:1] != b"\0" or parse(0, b"")[0] != len(body):
            return None
    except (ValueError, IndexError, RecursionError):
        return None
    return nodes


def _root_of(body: bytes) -> tuple[int, bytes] | None:
    """(entry count, id) of a cache tree's root when it is valid; ``None`` otherwise."""
    newline = body.find(b"\n")
    if body[:1] != b"\0" or newline < 0:
        return None
    counts = body[1:newline].split(b" ")
    if len(counts) != 2 or not counts[0].isdigit() or len(body) < newline + 21:
        return None
    return int(counts[0]), body[newline + 1 : newline + 21]


class _TreeBuilder:
    """Builds the trees of the directories a change touched, and the cache-tree extension of
    the new index: a touched directory's record is written afresh, an untouched one's (with
    everything below it) copied from the old extension."""

    def __init__(
        self,
        paths: list[bytes],
        starts: list[int],
        fresh: Mapping[int, NewEntry],
        index: Index,
        nodes: Mapping[bytes, _Node],
        touched: Mapping[bytes, set[bytes]],
        store: Callable[[bytes], bytes],
    ) -> None:
        self._paths = paths
        self._starts = starts
        self._fresh = fresh
        self._new = sorted(fresh)  # the new entries' positions
        self._data = index.data
        self._old = index.tree_ext
        self._nodes = nodes
        self._touched = touched
        self._store = store

    def build(self, prefix: bytes, name: bytes, lo: int, hi: int, out: list[bytes]) -> bytes:
        """Store the tree of the directory ``prefix`` (entries ``lo`` to ``hi``) and append
        its cache-tree records to ``out``; return its id."""
        out.append(b"")  # this directory's record, once its id is known
        slot = len(out) - 1
        parts = self._parts(prefix, lo, hi) or self._parts_one_by_one(prefix, lo, hi)
        items: list[bytes] = []
        subdirs = 0
        for part in parts:
            if isinstance(part, list):
                items += part
                continue
            sub_name, start, end = part
            sub = prefix + sub_name + b"/"
            node = self._nodes.get(sub)
            if (
                node is not None
                and node.whole
                and node.count == end - start
                and sub not in self._touched
            ):
                sha = node.sha or b""
                out.append(self._old[node.start : node.end])
            else:
                sha = self.build(sub, sub_name, start, end, out)
            items.append(b"40000 " + sub_name + b"\0" + sha)
            subdirs += 1
        sha = self._store(b"".join(items))
        out[slot] = b"%s\0%d %d\n%s" % (name, hi - lo, subdirs, sha)
        return sha

    def _parts(self, prefix: bytes, lo: int, hi: int) -> list[list[bytes] | tuple[bytes, int, int]]:
        """The directory's entries in tree order: runs of file entries (their tree items), and
        subdirectories as (name, first entry, end). Its subdirectories' names come from the
        old cache tree when it holds the directory whole, plus those the changes made;
        ``[]`` when that is not known, or a run of files turns out to hold a deeper path."""
        node = self._nodes.get(prefix)
        if node is None or not node.whole:
            return []
        paths = self._paths
        ranges = []
        for sub_name in node.children | self._touched.get(prefix, set()):
            start = bisect.bisect_left(paths, prefix + sub_name + b"/", lo, hi)
            # Every path below sub_name/ sorts before sub_name + "0" ("0" follows "/").
            end = bisect.bisect_left(paths, prefix + sub_name + b"0", start, hi)
            if start < end:
                ranges.append((start, end, sub_name))
        ranges.sort()
        parts: list[list[bytes] | tuple[bytes, int, int]] = []
        at = lo
        for start, end, sub_name in [*ranges, (hi, hi, b"")]:
            if at < start:
                items = self._file_items(len(prefix), at, start)
                if items is None:
                    return []
                parts.append(items)
            if start < end:
                parts.append((sub_name, start, end))
            at = end
        return parts

    def _file_items(self, skip: int, lo: int, hi: int) -> list[bytes] | None:
        """Tree items for entries ``lo`` to ``hi``, all files of one directory (``skip``: the
        length of its path); ``None`` when one of them is not directly in it."""
        names = [path[skip:] for path in self._paths[lo:hi]]
        if b"/" in b"".join(names):
            return None
        data = self._data
        modes = _MODES
        starts = self._starts
        items: list[bytes] = []
        at = lo
        first = bisect.bisect_left(self._new, lo)
        for end in [*self._new[first : bisect.bisect_left(self._new, hi, first)], hi]:
            # Runs once per file of every touched directory: nothing it can leave out.
            items += [
                (modes.get(data[pos + 24 : pos + 28]) or _mode(data, pos))
                + name
                + b"\0"
                + data[pos + 40 : pos + 60]
                for name, pos in zip(names[at - lo : end - lo], starts[at:end], strict=True)
            ]
            if end < hi:
                entry = self._fresh[end]
                items.append(b"%o %s\0%s" % (entry[2], names[end - lo], entry[3]))
            at = end + 1
        return items

    def _parts_one_by_one(
        self, prefix: bytes, lo: int, hi: int
    ) -> list[list[bytes] | tuple[bytes, int, int]]:
        """:meth:`_parts` for a directory the old cache tree does not hold whole: every
        entry is looked at to tell files from subdirectories."""
        paths = self._paths
        skip = len(prefix)
        parts: list[list[bytes] | tuple[bytes, int, int]] = []
        i = run = lo  # files from ``run`` to ``i`` go in as one run
        while i < hi:
            path = paths[i]
            slash = path.find(b"/", skip)
            if slash < 0:
                i += 1
                continue
            if run < i:
                parts.append(self._file_items(skip, run, i) or [])
            end = bisect.bisect_left(paths, path[:slash] + b"0", i, hi)
            parts.append((path[skip:slash], i, end))
            i = run = end
        if run < hi:
            parts.append(self._file_items(skip, run, hi) or [])
        return parts


def _mode(data: bytes, at: int) -> bytes:
    """The tree-item mode (with its space) of the index entry at ``at``."""
    return b"%o " % int.from_bytes(data[at + 24 : at + 28], "big")


def _extension(data: bytes, pos: int, signature: bytes) -> bytes | None:
    """The body of the extension ``signature`` among those from ``pos`` (the end of the
    entries) to the checksum; ``None`` when there is none."""
    end = len(data) - 20
    while pos + 8 <= end:
        size = int.from_bytes(data[pos + 4 : pos + 8], "big")
        if data[pos : pos + 4] == signature:
            return data[pos + 8 : pos + 8 + size]
        pos += 8 + size
    return None


def _extensions_to(data: bytes, pos: int, end: int) -> list[bytes] | None:
    """The signatures of a chain of extensions (4-letter signature, 4-byte size, data) running
    from ``pos`` to exactly ``end``; ``None`` when there is no such chain."""
    sigs = []
    while pos + 8 <= end:
        sig = data[pos : pos + 4]
        if not sig.isalpha():
            return None
        sigs.append(sig)
        pos += 8 + int.from_bytes(data[pos + 4 : pos + 8], "big")
    return sigs if pos == end else None


def split_part(shared: bytes, tree_ext: bytes) -> bytes:
    """The split part over ``shared``: no entries, the ``link`` extension (the shared part's
    checksum, then empty delete and replace bitmaps, which git requires when it merges the
    shared part in), and ``tree_ext`` as the cache tree."""
    link = b"link" + (20 + 2 * len(EMPTY_EWAH)).to_bytes(4, "big") + shared[-20:] + EMPTY_EWAH * 2
    tree = b"TREE" + len(tree_ext).to_bytes(4, "big") + tree_ext if tree_ext else b""
    body = shared[:8] + b"\0\0\0\0" + link + tree
    return body + hashlib.sha1(body).digest()
