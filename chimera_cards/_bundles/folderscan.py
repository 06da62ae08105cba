"""Skill folders as they are on disk: which names belong to a bundle, which sub-folders of a
skills directory are skills, and each folder's files hashed as the bundle manifest lists them.

``check`` hashes every installed file on every run. This module imports only ``os``, ``stat``
and ``integrity``'s hashing, so the console entry can start hashing (``start_scan``) before it
loads the store and the rest; ``bundle`` and ``install`` build their types on what is found
here. Nothing here refuses: links, special files and unreadable files become *problems* (the
folder is then ``modified``), and listing errors wait until the result is asked for.
"""

from __future__ import annotations

import os
import stat
import sys
from collections.abc import Sequence
from pathlib import Path

from chimera_cards._util.integrity import HashBudget, sha256_of

# typing.TYPE_CHECKING, without importing typing: this module is on check's start-up path.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from chimera_cards._bundles.links import LinkInfo


SKILL_FILE = "SKILL.md"
# What the reference validator (and some agents) read when there is no SKILL.md.
LOWER_SKILL_FILE = "skill.md"
# Left out wherever they appear (file or directory of that name): version-control metadata and
# the files operating systems and archivers drop into folders. They are never part of a skill.
IGNORED_NAMES = frozenset({".git", ".hg", ".svn", ".DS_Store", "Thumbs.db", "__MACOSX"})
# install's receipt inside each installed skill folder.
RECEIPT_NAME = ".chimera-install.json"
# Written beside a skill's files by export (signed review statements) and by install (its
# receipt): left out at the top of a bundle so exporting or installing an approved skill and
# hashing or re-importing it gives back the same digest.
# Signed review statements shipped beside a SKILL.md (read by import, written by export).
APPROVALS_FILENAME = "approvals.jsonl"
SIDECAR_FILES = (APPROVALS_FILENAME, RECEIPT_NAME)

# (path, executable, size, sha256): a bundle.BundleFile's fields, in its order.
FileRecord = tuple[str, bool, int, str]
# A folder's files (sorted by path bytes), what cannot be a bundle file (e.g. "x: symlink"),
# and its receipt's bytes (``read_receipt_bytes``).
FolderRecord = tuple[list[FileRecord], list[str], bytes | None]
# A receipt is a few hundred bytes; anything this large is not one of ours.
MAX_RECEIPT_BYTES = 64 * 1024
# The most a bundle may hold (``bundle`` refuses more, so no approved bundle is larger). Hashing
# an installed folder stops at the first limit it passes: the folder cannot be an approved
# bundle, so it is reported, never read further (a 1 TiB sparse file costs one fstat).
MAX_FILES = 1000
MAX_TOTAL_BYTES = 20 * 1024 * 1024
MAX_FILE_BYTES = 5 * 1024 * 1024
# Directories a file may sit inside: "a/b/c.txt" has depth 2; a file at the top has depth 0.
MAX_DEPTH = 16
# Entries of any kind (folders, links, files) one walk looks at before it gives up.
MAX_ENTRIES = 4 * MAX_FILES
_RECEIPT_KEYS = frozenset({"digest", "format", "installed_at", "name", "store", "tool"})

READ_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
# Read in one call up to this size; a larger file is read on in chunks, never whole.
_ONE_READ = 1 << 22
_CHUNK = 1 << 20
# Below this many folders a second process costs more than it saves.
_FORK_MIN_FOLDERS = 32


def find_skill_folders(directory: str | os.PathLike) -> list[Path]:
    """The skill entries directly inside a skills directory (``DIR/<name>``), sorted by name.

    Everything an agent could read as a skill is listed: a folder holding a ``SKILL.md`` (or a
    lone ``skill.md``) or our receipt, a hidden folder holding a ``SKILL.md`` (a skill in a dot
    folder is still a skill), and a link to a folder holding one, wherever it leads
    (``links.resolve_entry`` says whether it may be read). Files (the index, notes) and folders
    holding neither are not skills, so an installed folder whose ``SKILL.md`` was deleted is
    still checked and an empty temp folder is not.

    Args:
        directory: e.g. ``.claude/skills``.
    Returns:
        The entries; none if ``directory`` does not exist.
    Raises:
        OSError: it exists but cannot be listed (callers say which folder).
    """
    return [path for path, _ in skill_entries(directory)]


def skill_entries(directory: str | os.PathLike) -> list[tuple[Path, bool]]:
    """``find_skill_folders`` with, for each entry, whether it is a link (from the listing: no
    extra system call per folder).

    Raises:
        OSError: the directory exists but cannot be listed.
    """
    try:
        entries = sorted(os.scandir(os.fspath(directory)), key=lambda e: e.name)
    except FileNotFoundError:
        return []
    exists = os.path.exists

    def is_skill(entry: os.DirEntry) -> bool:
        # A link counts by what an agent would find through it (a look, never a read: the
        # scan decides whether it may be read at all).
        if not entry.is_dir(follow_symlinks=entry.is_symlink()):
            return False
        base = entry.path
        if exists(f"{base}/{SKILL_FILE}") or exists(f"{base}/{LOWER_SKILL_FILE}"):
            return True
        return not entry.name.startswith(".") and exists(f"{base}/{RECEIPT_NAME}")

    return [(Path(entry.path), entry.is_symlink()) for entry in entries if is_skill(entry)]


def read_receipt_bytes(folder: str | os.PathLike) -> bytes | None:
    """The bytes of the receipt inside ``folder``, or None: there is none, it is not a regular
    file (a link is not followed), it cannot be read, or it is too large to be a receipt."""
    try:
        fd = os.open(os.path.join(os.fspath(folder), RECEIPT_NAME), READ_FLAGS)
    except OSError:
        return None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        # A regular file's read returns less than asked only at its end.
        limit = MAX_RECEIPT_BYTES + 1
        data = os.read(fd, limit)
        while len(data) < limit and (chunk := os.read(fd, limit - len(data))):
            data += chunk
    except OSError:
        return None
    finally:
        os.close(fd)
    return None if len(data) > MAX_RECEIPT_BYTES else data


def hash_folder(folder: str | os.PathLike, budget: HashBudget | None = None) -> FolderRecord:
    """Every file of a skill folder as the bundle manifest lists it, what cannot be one, and
    the folder's receipt.

    Every name in the folder is looked at, because an agent can read every file of it. The
    receipt at the top is left out of the files (the bundle reader leaves it out) but must be
    one install wrote, byte for byte; an ``approvals.jsonl`` at the top is a problem (install
    never writes one, so no reviewer saw it there). A file or folder under an ignored name
    (``.git``, ``.DS_Store``, ``__MACOSX``, ...) is a problem too: no bundle holds it. The walk
    stops at the bundle limits (``MAX_FILES``, ``MAX_FILE_BYTES``, ``MAX_TOTAL_BYTES``,
    ``MAX_DEPTH``): past one the folder cannot be an approved bundle, so it is reported and no
    more is read. A file's size is taken from its open descriptor before any byte is read.

    Args:
        folder: the skill folder.
        budget: the hashing budget of the job this folder is part of (default: its own).
    Returns:
        (files sorted by path bytes, problems, the receipt's bytes or None).
    """
    # This loop runs once per installed file on every check: plain strings and os calls only.
    files: list[FileRecord] = []
    problems: list[str] = []
    receipt = None
    total = 0
    seen = 0
    budget = HashBudget() if budget is None else budget
    stack: list[tuple[str, str, int]] = [(os.fspath(folder), "", 0)]
    while stack:
        directory, prefix, depth = stack.pop()
        try:
            with os.scandir(directory) as it:
                entries = list(it)
        except OSError as exc:
            problems.append(f"{prefix[:-1] or '.'}: cannot read ({exc.strerror})")
            continue
        seen += len(entries)
        if seen > MAX_ENTRIES:
            problems.append(f"more than {MAX_ENTRIES} entries: not read further")
            break
        for entry in entries:
            name = entry.name
            rel = prefix + name
            if not prefix and name in SIDECAR_FILES:
                receipt, problem = _sidecar(folder, entry)
                if problem:
                    problems.append(problem)
                continue
            unnamed = _name_problem(name, rel)
            if unnamed:
                problems.append(unnamed)
                continue
            # The entry's type comes with the directory listing; the mode and size come from
            # the opened file itself, so a file swapped for a link meanwhile is not followed.
            try:
                if entry.is_dir(follow_symlinks=False):
                    if depth >= MAX_DEPTH:
                        problems.append(f"{rel}: nested deeper than {MAX_DEPTH} folders")
                    else:
                        stack.append((entry.path, rel + "/", depth + 1))
                elif entry.is_file(follow_symlinks=False):
                    record, problem = _file_record(entry.path, rel, budget)
                    if record is None:
                        problems.append(problem)
                    else:
                        files.append(record)
                        total += record[2]
                elif entry.is_symlink():
                    problems.append(f"{rel}: symlink")
                else:
                    problems.append(f"{rel}: not a regular file")
            except OSError as exc:
                problems.append(f"{rel}: cannot read ({exc.strerror})")
            if len(files) > MAX_FILES or total > MAX_TOTAL_BYTES:
                problems.append(
                    f"more than {MAX_FILES} files or {MAX_TOTAL_BYTES} bytes: not read further"
                )
                stack.clear()
                break
    files.sort(key=_path_bytes)
    return files, problems, receipt


def _name_problem(name: str, rel: str) -> str:
    """Why no bundle can hold a file of this name ("" when one can)."""
    if name in IGNORED_NAMES:
        # Left out of every bundle, yet an agent can read it: never silently ok.
        return f"{rel}: not part of the reviewed bundle"
    if not name.isascii() and not _is_utf8(name):
        # No bundle holds such a name (the manifest is UTF-8): planted, so modified.
        return f"{rel!r}: name is not UTF-8"
    return ""


def _sidecar(folder: str | os.PathLike, entry: os.DirEntry) -> tuple[bytes | None, str]:
    """(the receipt's bytes, "") for a receipt install wrote; (None, the problem) otherwise."""
    if entry.name == RECEIPT_NAME and entry.is_file(follow_symlinks=False):
        receipt = read_receipt_bytes(folder)
        if receipt is not None and _install_wrote(receipt):
            return receipt, ""
        return None, f"{entry.name}: not a receipt chimera-cards wrote"
    return None, f"{entry.name}: not part of the reviewed bundle"


def _file_record(path: str, rel: str, budget: HashBudget) -> tuple[FileRecord | None, str]:
    """(the file's record, "") or (None, why it cannot be a bundle file)."""
    found = _hash_file(path, budget)
    if found is None:
        return None, f"{rel}: not a regular file"
    executable, size, sha = found
    if sha is None:
        return None, f"{rel}: {size} bytes; a bundle file holds at most {MAX_FILE_BYTES}: not read"
    return (rel, executable, size, sha), ""


def _install_wrote(data: bytes) -> bool:
    """Whether ``data`` is a receipt exactly as install writes one (its keys, its layout, plain
    values): any other bytes under that name are unreviewed text an agent could read."""
    import json  # only for a folder that holds a receipt

    try:
        value = json.loads(data)
    except ValueError:
        return False
    if not isinstance(value, dict) or set(value) != _RECEIPT_KEYS:
        return False
    if not all(isinstance(value[k], str) for k in _RECEIPT_KEYS - {"format"}):
        return False
    if any(c < " " for k in _RECEIPT_KEYS - {"format"} for c in value[k]):
        return False
    return (json.dumps(value, indent=2, sort_keys=True) + "\n").encode("utf-8") == data


def manifest_line(path: str, executable: bool, size: int, sha256: str) -> bytes:
    """One line of the canonical manifest (docs/bundles.md): ``MODE SIZE SHA256 PATH``."""
    return f"{'755' if executable else '644'} {size} {sha256} {path}\n".encode()


def records_digest(files: Sequence[FileRecord]) -> str:
    """The bundle digest of ``hash_folder``'s files (sorted by path bytes, as it returns them):
    SHA-256 of their manifest, the same digest ``bundle.bundle_digest`` gives."""
    return sha256_of(b"".join(manifest_line(*record) for record in files)).hexdigest()


def _path_bytes(record: FileRecord) -> bytes:
    return record[0].encode("utf-8")


def _is_utf8(name: str) -> bool:
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:  # undecodable bytes, kept by os as lone surrogates
        return False
    return True


def _hash_file(path: str, budget: HashBudget) -> tuple[bool, int, str | None] | None:
    """(executable, size, SHA-256) of a regular file, read through one descriptor; None when it
    is not a regular file (it changed since it was listed). A file over ``MAX_FILE_BYTES`` is
    not read: its SHA-256 is None (its size is what ``fstat`` says, or what was read)."""
    fd = os.open(path, READ_FLAGS)
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            return None
        executable = bool(st.st_mode & stat.S_IXUSR)
        if st.st_size > MAX_FILE_BYTES:
            return executable, st.st_size, None
        # Asking for one byte more than the size reads a usual file and notices its end in one
        # call (a regular file's read comes back short only at its end; were it ever short
        # early, the digest would differ and the folder be reported modified, never ok).
        want = min(st.st_size + 1, _ONE_READ)
        data = os.read(fd, want)
        digest = sha256_of(data, budget)
        size = len(data)
        if size == want:
            # It grew since fstat: read on, never past the limit.
            while size <= MAX_FILE_BYTES and (chunk := os.read(fd, _CHUNK)):
                digest.update(chunk)
                size += len(chunk)
            if size > MAX_FILE_BYTES:
                return executable, size, None
        return executable, size, digest.hexdigest()
    finally:
        os.close(fd)


def idle_core() -> bool:
    """A Linux machine with a core that nothing else is running on right now (on a busy one a
    second process only adds the cost of forking and of waiting for it)."""
    try:
        with open("/proc/loadavg", "rb") as handle:  # "0.42 0.30 0.25 RUNNING/TOTAL LASTPID"
            running = int(handle.read().split()[3].split(b"/")[0])  # this process included
        cores = len(os.sched_getaffinity(0))
    except (OSError, ValueError, IndexError, AttributeError):
        return False
    return cores >= 2 and running <= cores - 1


class Scan:
    """Hashing of skill folders under way; ``result()`` finishes it.

    With a second process, the child hashes folders from the last one down while this process
    goes on with whatever it has to do (``check`` loads the store meanwhile); ``result()`` then
    hashes from the first one up until the two meet. Each side marks the folder it takes next in
    a shared page before hashing it, so they rarely take the same one; whatever the child did
    not deliver (it crashed, it was slow, both stepped back from one folder) this process hashes
    itself, so every folder is hashed exactly as ``hash_folder`` does, whichever side did it.
    Threads would not help: every open and read hands the GIL over, which costs more than the
    hashing it frees.
    """

    def __init__(
        self,
        folders: Sequence[str | os.PathLike],
        parallel: bool | None = None,
        listed: list[tuple[Path, list[Path]]] | None = None,
        unreadable: tuple[Path, OSError] | None = None,
    ) -> None:
        self.folders = list(folders)
        # For start_scan: each skills directory with its skill folders, and the first one that
        # could not be listed (then nothing is hashed; the caller reports it).
        self.listed = listed if listed is not None else []
        self.unreadable = unreadable
        # For start_scan: the entries that are links, each with its links.LinkInfo.
        self.links: dict[Path, LinkInfo] = {}
        self._found: list[FolderRecord | None] = [None] * len(self.folders)
        # One budget for every folder of the scan (each process of a forked scan spends its own).
        self._budget = HashBudget()
        self._pid = 0
        self._pipe = -1
        if parallel is None:
            parallel = len(self.folders) >= _FORK_MIN_FOLDERS and idle_core()
        if parallel and len(self.folders) > 1 and sys.platform.startswith("linux"):
            self._fork()

    def _fork(self) -> None:
        import marshal  # a format for this pipe between two copies of one program
        import mmap

        # [first folder the child has not taken, first folder this process has not taken]:
        # the child takes folders below the first number, this process from the second one up.
        self._shared = mmap.mmap(-1, 16)
        self._set(0, len(self.folders))
        read_end, write_end = os.pipe()
        pid = os.fork()
        if pid == 0:  # the child: hash, write, leave without running any cleanup of the parent's
            status = 1
            try:
                os.close(read_end)
                done = {}
                while True:
                    mine = self._get(0) - 1
                    if mine < self._get(8):
                        break
                    self._set(0, mine)
                    if mine < self._get(8):  # the parent took it meanwhile
                        break
                    done[mine] = hash_folder(self.folders[mine], self._budget)
                data = memoryview(marshal.dumps(done))
                while data:
                    data = data[os.write(write_end, data) :]
                status = 0
            finally:
                os._exit(status)
        os.close(write_end)
        self._pid, self._pipe = pid, read_end

    def _get(self, at: int) -> int:
        return int.from_bytes(self._shared[at : at + 8], "little")

    def _set(self, at: int, value: int) -> None:
        self._shared[at : at + 8] = value.to_bytes(8, "little")

    def result(self) -> list[FolderRecord]:
        """Each folder's ``hash_folder`` record, in order (waits for the child, if any)."""
        if self._pid:
            index = 0
            while index < self._get(0):
                self._set(8, index + 1)
                if index >= self._get(0):  # the child took it meanwhile
                    break
                self._found[index] = hash_folder(self.folders[index], self._budget)
                index += 1
            self._collect()
        return [
            found if found is not None else hash_folder(folder, self._budget)
            for folder, found in zip(self.folders, self._found, strict=True)
        ]

    def _collect(self) -> None:
        import marshal

        pid, self._pid = self._pid, 0
        try:
            with os.fdopen(self._pipe, "rb") as pipe:
                data = pipe.read()
        finally:
            _, status = os.waitpid(pid, 0)
        if status != 0:
            return
        try:
            theirs = marshal.loads(data)
            for index, (files, problems, receipt) in theirs.items():
                if self._found[index] is None:
                    self._found[index] = ([tuple(f) for f in files], list(problems), receipt)
        except (ValueError, TypeError, EOFError, IndexError, AttributeError):
            return  # what it sent is unusable: this process hashes what is missing

    def close(self) -> None:
        """Stop the child, if it still runs (the result is no longer wanted)."""
        if self._pid:
            import signal

            pid, self._pid = self._pid, 0
            os.close(self._pipe)
            try:
                os.kill(pid, signal.SIGKILL)
            finally:
                os.waitpid(pid, 0)

    def __enter__(self) -> Scan:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def start_scan(
    directories: Sequence[str | os.PathLike],
    *,
    parallel: bool | None = None,
    boundary: str | os.PathLike | None = None,
    only: frozenset[str] | None = None,
) -> Scan:
    """List each skills directory and start hashing every skill folder in them.

    An entry that is a link is hashed at its target when ``links.resolve_entry`` allows it (a
    folder inside the boundary), and not at all otherwise: ``links`` then says why.

    Args:
        directories: skills directories (``find_skill_folders`` of each).
        parallel: use a second process (True: whenever the system can fork; False: never;
            None: when there are many folders and a core is idle).
        boundary: where links may lead (default: ``links.boundary_for`` each directory).
        only: list and hash only the entries of these names (a hook judging one skill must not
            pay for its siblings).
    Returns:
        The scan under way: ``listed`` (directory, entries) in order; ``links`` the LinkInfo of
        each entry that is a link, by entry; ``result()`` a record per hashed folder, in the
        order of the entries that have one (``hashed``). ``unreadable`` names a directory that
        could not be listed (then nothing is hashed). Use it as a context manager, so a scan
        whose result is not wanted after all stops its child.
    """
    listed: list[tuple[Path, list[Path]]] = []
    kinds: list[list[bool]] = []
    for directory in directories:
        try:
            found = skill_entries(directory)
            if only is not None:
                found = [(path, link) for path, link in found if path.name in only]
        except OSError as exc:
            return Scan([], False, listed, (Path(directory), exc))
        listed.append((Path(directory), [path for path, _ in found]))
        kinds.append([is_link for _, is_link in found])
    targets: list[Path] = []
    links: dict[Path, LinkInfo] = {}
    for (directory, entries), is_link in zip(listed, kinds, strict=True):
        for entry, linked in zip(entries, is_link, strict=True):
            if not linked:
                targets.append(entry)
                continue
            # Only a project with links pays for loading the resolver.
            from chimera_cards._bundles.links import boundary_for, resolve_entry

            info = resolve_entry(
                entry, boundary if boundary is not None else boundary_for(directory)
            )
            links[entry] = info
            if info.target is not None:
                targets.append(info.target)
    scan = Scan(targets, parallel, listed)
    scan.links = links
    return scan
