"""Integrity checks: the changes that would let an attempt pass without fixing the code.

Each check looks at the *unfiltered* change set (every path that differs from the snapshot,
whatever an ignore rule says) and names a violation by its class:

- ``shadowing``: a new top-level module or package named like one the verifier imports (the
  standard library, the runner, anything installed), or a new ``__init__.py`` that turns a
  pinned test's folder into a package whose code runs first;
- ``runner-config``: a new or changed runner configuration (``pytest.ini``, ``pytest.toml``,
  the runner's section of ``pyproject.toml``/``setup.cfg``/``tox.ini``, ``conftest.py`` at any
  depth, other runners' config files); other edits to the shared files stay allowed;
- ``startup-hook``: ``sitecustomize``/``usercustomize`` modules and ``.pth`` files, which run
  when the interpreter starts;
- ``bytecode``: compiled code Python would load instead of its source (a sourceless ``.pyc``,
  a cached ``.pyc`` whose header matches the source but whose code does not, an extension
  module beside a source module);
- ``ignore-rules``: any of the above, or a protected test, hidden from the diff by an ignore
  rule;
- ``protected-path``: an existing protected path (the tests, the files the verify command runs)
  edited, deleted or renamed, or a new non-test file added under a protected folder;
- ``changed-during-verify``: a protected path that changed while the verifier ran;
- ``outlived-attempt``: processes the attempt left running (they are killed);
- ``forged-exit``: the verifier exited 0 but its report says the pinned tests did not pass;
- ``runner-tampered``: code in the run replaced part of the test runner (its report is void);
- ``evidence-disagrees``: the report, the process's exit status and pytest's summary line do
  not agree (:mod:`reference_loop._verdict.crosscheck`);
- ``reaches-verifier``: the patch review marked the attempt's code (it reaches into the
  verifier: :mod:`reference_loop._verdict.reach`);
- ``linked-file``: a symbolic link the attempt made that points outside the workspace, into
  ``.git`` or at a protected file (or a folder holding one), or a hard link (its bytes are
  another name's, a test's or a file outside that the patch does not show);
- ``outside-code``: the verifier ran code from a file outside the workspace that changed after
  the run started (:mod:`reference_loop._verdict.outside`);
- ``test-module-changed``: a pinned test module held a name its import did not make on the
  untouched tree, or had one rebound while a test ran (``session``);
- ``oversized-file``: a file the workspace's look refused unread (over 1 GiB, sparse, past
  8 GiB changed in all or a million new files) and undid at once (``_workspace.limits``).

The protected-path rules come from ``reference_loop._verdict.protect``; this module adds the
classes the runner reads before any test runs.
"""

from __future__ import annotations

import configparser
import contextlib
import importlib.util
import marshal
import os
import shutil
import stat as statmod
import sys
import tomllib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from fnmatch import fnmatchcase
from pathlib import Path
from typing import Any, Protocol

from reference_loop._verdict.protect import is_protected

CLASSES = (
    "shadowing",
    "runner-config",
    "startup-hook",
    "bytecode",
    "ignore-rules",
    "protected-path",
    "changed-during-verify",
    "outlived-attempt",
    "forged-exit",
    "runner-tampered",
    "evidence-disagrees",
    "reaches-verifier",
    "games-tests",
    "order-dependent",
    "false-equality",
    "host-hook",
    "linked-file",
    "outside-code",
    "test-module-changed",
    "oversized-file",
)

# What the next prompt says, after "attempt N ...".
_SAID = {
    "shadowing": "added a module that shadows one the verifier imports",
    "runner-config": "changed the test runner's config",
    "startup-hook": "added an interpreter start-up hook",
    "bytecode": "planted compiled code the verifier would load instead of the source",
    "ignore-rules": "hid a protected change behind an ignore rule",
    "protected-path": "changed a protected path",
    "changed-during-verify": "changed a protected path while the verifier ran",
    "outlived-attempt": "left processes running after it ended",
    "forged-exit": "made the verifier exit 0 without its tests passing",
    "runner-tampered": "changed the test runner while it ran",
    "evidence-disagrees": "left a test report that the exit status or pytest's summary contradicts",
    "reaches-verifier": "wrote code that reaches into the verifier or its evidence",
    "games-tests": (
        "wrote code that reads its caller or the tests, or runs the tests, to choose its answer"
    ),
    "order-dependent": (
        "passed only as the tests ran (played again in another order, under another name, "
        "they fail)"
    ),
    "false-equality": (
        "returned a value that says it equals what it is not (an assertion passed between "
        "different values)"
    ),
    "host-hook": "added a file that runs on the host by itself later (direnv, editor, git hook)",
    "linked-file": "added a link to a protected file or to a place outside the workspace",
    "outside-code": "ran code from outside the workspace that changed after the run started",
    "test-module-changed": "changed a test module's names while the tests ran",
    "oversized-file": "left a file too large (or sparse) to read, or too many new files",
}

RUNNER_CONFIG_FILES = (
    "pytest.ini",
    ".pytest.ini",
    "pytest.toml",
    ".pytest.toml",
    "conftest.py",
    # A virtual environment's own: its home decides whose standard library the interpreter runs.
    "pyvenv.cfg",
    # Other runners' own config files: read before any test, never the code under test.
    ".mocharc.*",
    "jest.config.*",
    "vitest.config.*",
    "vitest.workspace.*",
    "ava.config.*",
    ".nycrc*",
    "karma.conf.*",
    "phpunit.xml*",
    ".rspec",
    "nextest.toml",
)
RUNNER_CONFIG_DIRS = (".cargo", ".config")  # .cargo/config.toml, .config/nextest.toml
SHARED_CONFIGS = ("pyproject.toml", "setup.cfg", "tox.ini")
STARTUP_NAMES = ("sitecustomize", "usercustomize")
TEST_MODULE = ("test_*.py", "*_test.py")
_BYTECODE = (".pyc", ".pyo")


class Change(Protocol):
    """One changed path, as the workspace reports it (``FileChange``)."""

    path: str
    status: str
    old_path: str | None


@dataclass(frozen=True)
class Violation:
    """One integrity violation: its class, the path, and why it counts."""

    kind: str
    path: str
    why: str

    def line(self) -> str:
        return f"{self.kind}: {self.path} ({self.why})"


StatKey = tuple[int, int, int, int, int]  # inode, size, mtime_ns, ctime_ns, mode


@dataclass
class StartFacts:
    """What the untouched tree held, gathered in one walk at the start of the run."""

    shared: dict[str, bytes] = field(default_factory=dict)  # shared config files' contents
    watched: dict[str, StatKey] = field(default_factory=dict)  # protected files' stat keys
    caches: list[str] = field(default_factory=list)  # __pycache__ dirs, *.pyc at the start
    tops: dict[str, frozenset[str]] = field(default_factory=dict)  # root -> entry names


@dataclass
class IntegrityContext:
    """Everything the checks need besides the changes."""

    root: Path
    protect: Sequence[str]
    facts: StartFacts
    shadowable: frozenset[str] = frozenset()
    import_roots: tuple[str, ...] = ("",)  # folders on the verifier's sys.path ('' = root)
    site_roots: tuple[str, ...] = ()  # the verifier's site-packages inside the workspace
    pinned_files: tuple[str, ...] = ()
    evidence: bool = False  # the verdict comes from a report: new test modules are allowed
    cache_tag: str = sys.implementation.cache_tag
    magic: str = importlib.util.MAGIC_NUMBER.hex()
    ext_suffixes: tuple[str, ...] = ()


def describe(kind: str) -> str:
    """What a class of violation says in a prompt after ``attempt N``."""
    return _SAID.get(kind, kind)


def is_test_module(path: str) -> bool:
    name = path.rsplit("/", 1)[-1]
    return any(fnmatchcase(name, p) for p in TEST_MODULE)


def _stat_key(path: Path) -> StatKey | None:
    try:
        st = os.lstat(path)
    except OSError:
        return None
    return (st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_mode)


def _watch(rel: str, protect: Sequence[str]) -> bool:
    name = rel.rsplit("/", 1)[-1]
    return (
        is_protected(rel, protect) is not None
        or _runner_config(rel)
        or name in SHARED_CONFIGS
        or _startup_hook(rel)
    )


def gather_start_facts(
    root: Path, protect: Sequence[str], import_roots: Iterable[str] = ("",)
) -> StartFacts:
    """Walk the untouched tree once (``.git`` skipped).

    Args:
        root: the workspace.
        protect: the protected-path patterns.
        import_roots: folders (relative) whose entries could shadow an installed module.

    Returns:
        The StartFacts the later checks compare against.
    """
    facts = StartFacts()
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = [d for d in dirnames if d != ".git"]
        rel_dir = os.path.relpath(dirpath, root)
        rel_dir = "" if rel_dir == "." else rel_dir.replace(os.sep, "/")
        if os.path.basename(dirpath) == "__pycache__":
            facts.caches.append(rel_dir)
            dirnames[:] = []
            continue
        for name in filenames:
            rel = f"{rel_dir}/{name}" if rel_dir else name
            full = Path(dirpath) / name
            if name.endswith(_BYTECODE):
                facts.caches.append(rel)
            if name in SHARED_CONFIGS:
                with contextlib.suppress(OSError):
                    facts.shared[rel] = full.read_bytes()
            if _watch(rel, protect):
                key = _stat_key(full)
                if key is not None:
                    facts.watched[rel] = key
    for where in import_roots:
        try:
            facts.tops[where] = frozenset(os.listdir(root / where if where else root))
        except OSError:
            facts.tops[where] = frozenset()
    return facts


def remove_caches(root: Path, paths: Iterable[str]) -> list[str]:
    """Remove compiled-code caches (``__pycache__`` folders, ``*.pyc``) at ``paths`` so the
    verifier never reads bytecode from the workspace; returns what was removed."""
    removed = []
    for rel in sorted(set(paths)):
        full = root / rel
        try:
            st = os.lstat(full)
        except OSError:
            continue
        if statmod.S_ISDIR(st.st_mode):
            shutil.rmtree(full, ignore_errors=True)
        else:
            try:
                os.unlink(full)
            except OSError:
                continue
        removed.append(rel)
    return removed


def cache_paths(changes: Iterable[Change]) -> list[str]:
    """The changed paths that are compiled-code caches."""
    out = []
    for ch in changes:
        parts = ch.path.split("/")
        if "__pycache__" in parts[:-1]:
            out.append("/".join(parts[: parts.index("__pycache__") + 1]))
        elif parts[-1].endswith(_BYTECODE):
            out.append(ch.path)
    return out


def stat_changes(root: Path, facts: StartFacts, before: Mapping[str, StatKey] | None) -> list[str]:
    """The watched (protected) files whose inode, size, times or mode differ from ``before``
    (default: the start). A file rewritten and put back still has a new ctime."""
    ref = facts.watched if before is None else before
    return sorted(rel for rel, key in ref.items() if _stat_key(root / rel) != key)


def snapshot_stats(root: Path, facts: StartFacts) -> dict[str, StatKey]:
    """The watched files' stat keys now (missing files left out)."""
    out = {}
    for rel in facts.watched:
        key = _stat_key(root / rel)
        if key is not None:
            out[rel] = key
    return out


# -- the checks --------------------------------------------------------------------------------


def _runner_config(rel: str) -> bool:
    parts = rel.split("/")
    name = parts[-1]
    if any(fnmatchcase(name, p) for p in RUNNER_CONFIG_FILES):
        return True
    return (
        len(parts) > 1
        and parts[-2] in RUNNER_CONFIG_DIRS
        and name.startswith(("config", "nextest"))
    )


def _startup_hook(rel: str) -> bool:
    parts = rel.split("/")
    name = parts[-1]
    if name.endswith(".pth"):
        return True
    stem = name.split(".", 1)[0]
    return stem in STARTUP_NAMES or any(p in STARTUP_NAMES for p in parts[:-1])


def _runner_sections(name: str, data: bytes | None) -> dict[str, Any]:
    """The parts of a shared config file the runner reads, by section (the runner's own
    options, and the entry points a plugin is registered by); raises ValueError when the file
    cannot be read at all."""
    if data is None:
        return {}
    text = data.decode("utf-8", "replace")
    if name == "pyproject.toml":
        try:
            doc = tomllib.loads(text)
        except tomllib.TOMLDecodeError as exc:
            raise ValueError(str(exc)) from None
        tool = doc.get("tool", {})
        project = doc.get("project", {})
        found = {
            "[tool.pytest]": tool.get("pytest") if isinstance(tool, dict) else tool,
            "[project.entry-points]": (
                project.get("entry-points") if isinstance(project, dict) else project
            ),
        }
        return {k: v for k, v in found.items() if v is not None}
    parser = configparser.ConfigParser(interpolation=None, strict=False)
    try:
        parser.read_string(text)
    except configparser.Error as exc:
        raise ValueError(str(exc)) from None
    wanted = (
        ("tool:pytest", "pytest", "options.entry_points") if name == "setup.cfg" else ("pytest",)
    )
    return {f"[{s}]": dict(parser.items(s)) for s in wanted if parser.has_section(s)}


def _shared_config_changed(rel: str, root: Path, facts: StartFacts) -> str | None:
    name = rel.rsplit("/", 1)[-1]
    try:
        new = (root / rel).read_bytes() if (root / rel).is_file() else None
    except OSError:
        new = None
    try:
        before = _runner_sections(name, facts.shared.get(rel))
    except ValueError:
        before = {"the whole file": "unreadable"}
    try:
        after = _runner_sections(name, new)
    except ValueError as exc:
        return f"the file no longer parses, so the runner's part of it cannot be checked: {exc}"
    changed = sorted(k for k in {*before, *after} if before.get(k) != after.get(k))
    if changed:
        return f"its {', '.join(changed)} section, which the runner reads before any test, changed"
    return None


def _package_metadata(rel: str) -> bool:
    """Installed-package metadata: ``importlib.metadata`` finds its entry points (a ``pytest11``
    plugin) wherever the folder is on ``sys.path``."""
    parts = rel.split("/")
    return (
        any(p.endswith((".dist-info", ".egg-info", ".egg")) for p in parts[:-1])
        or parts[-1] in ("entry_points.txt", "PKG-INFO")
        or parts[-1].endswith((".egg-link", ".egg-info"))
    )


def _pyc_problem(root: Path, rel: str, ctx: IntegrityContext) -> str | None:
    parts = rel.split("/")
    name = parts[-1]
    if len(parts) < 2 or parts[-2] != "__pycache__":
        return "a compiled module outside __pycache__ is imported by name, with no source"
    stem, _, rest = name.partition(".")
    tag = rest.split(".", 1)[0]
    if tag != ctx.cache_tag:
        return None  # another interpreter's cache: never read by the verifier
    source = root.joinpath(*parts[:-2], stem + ".py")
    try:
        data = (root / rel).read_bytes()
        src = source.read_bytes()
        st = os.stat(source)
    except OSError:
        return None  # no source: a cached module is only used beside its source
    if len(data) < 16 or data[:4].hex() != ctx.magic:
        return None  # the interpreter rejects it and compiles the source
    flags = int.from_bytes(data[4:8], "little")
    if flags & 1:
        checked = bool(flags & 2)
        if checked and data[8:16] != importlib.util.source_hash(src):
            return None
    else:
        mtime = int.from_bytes(data[8:12], "little")
        size = int.from_bytes(data[12:16], "little")
        if (mtime, size) != (int(st.st_mtime) & 0xFFFFFFFF, st.st_size & 0xFFFFFFFF):
            return None  # stale: the interpreter compiles the source instead
    opt = 0
    if ".opt-" in name:
        level = name.split(".opt-", 1)[1].split(".", 1)[0]
        opt = int(level) if level.isdigit() else 0
    try:
        planted = marshal.loads(data[16:])
        honest = compile(src, str(source), "exec", dont_inherit=True, optimize=opt)
    except (ValueError, EOFError, TypeError, SyntaxError):
        return "a cached module the interpreter would load that does not decode as its source"
    if planted != honest:
        return f"its header matches {source.name} but its code is not that source's"
    return None


def _extension_problem(root: Path, rel: str, ctx: IntegrityContext) -> str | None:
    name = rel.rsplit("/", 1)[-1]
    for suffix in ctx.ext_suffixes:
        if name.endswith(suffix):
            stem = name[: -len(suffix)]
            folder = (root / rel).parent
            if (folder / f"{stem}.py").exists() or (folder / stem).is_dir():
                return f"a compiled extension that is imported instead of {stem}.py"
    return None


def _module_name(rel_in_root: str, suffixes: Sequence[str]) -> str | None:
    """The top-level import name a path inside an import root provides, if any."""
    first, _, rest = rel_in_root.partition("/")
    if rest:
        return first if first.isidentifier() and first != "__pycache__" else None
    for suffix in sorted(suffixes, key=len, reverse=True):
        if first.endswith(suffix):
            stem = first[: -len(suffix)]
            return stem if stem.isidentifier() else None
    return None


_PY_SUFFIXES = (".py", ".pyc", ".pyw")


def _shadow_problem(rel: str, ctx: IntegrityContext) -> str | None:
    suffixes = (*_PY_SUFFIXES, *ctx.ext_suffixes)
    for site in ctx.site_roots:
        if rel.startswith(site + "/"):
            return f"changes what the verifier has installed ({site}/)"
    for where in ctx.import_roots:
        if where and not rel.startswith(where + "/"):
            continue
        inside = rel[len(where) + 1 :] if where else rel
        module = _module_name(inside, suffixes)
        if module is None or module not in ctx.shadowable:
            continue
        first = inside.split("/", 1)[0]
        if first in ctx.facts.tops.get(where, frozenset()):
            continue  # the project's own module, there from the start
        place = f"{where}/" if where else "the workspace root"
        return f"a new module {module!r} in {place} is imported instead of the installed one"
    name = rel.rsplit("/", 1)[-1]
    if name == "__init__.py":
        folder = rel.rsplit("/", 1)[0] if "/" in rel else ""
        for test in ctx.pinned_files:
            chain = test.split("/")[:-1]
            dirs = {"/".join(chain[:i]) for i in range(len(chain) + 1)}
            if folder in dirs:
                return f"makes {folder or 'the workspace root'} a package, run before {test}"
    return None


def _link_problem(root: Path, rel: str, ctx: IntegrityContext) -> str | None:
    """A link whose reads land on a protected file, ``.git`` or outside the workspace: code
    reading an innocent-looking name reads the tests, or runs what the patch does not show."""
    full = root / rel
    try:
        st = os.lstat(full)
    except OSError:
        return None
    if statmod.S_ISREG(st.st_mode) and st.st_nlink > 1:
        return "a hard link: its bytes are another name's, which the patch does not show"
    if not statmod.S_ISLNK(st.st_mode):
        return None
    target = Path(os.path.realpath(full))
    try:
        inside = target.relative_to(root).as_posix()
    except ValueError:
        return f"a link to {target}, outside the workspace"
    if not target.exists():
        return None  # a dangling link inside reads nothing
    if inside == "." or inside.split("/", 1)[0] == ".git":
        return f"a link to {inside if inside != '.' else 'the workspace itself'}"
    if is_protected(inside, ctx.protect) is not None or is_test_module(inside):
        return f"a link to the protected {inside}"
    if any(w.startswith(inside + "/") for w in (*ctx.facts.watched, *ctx.pinned_files)):
        return f"a link to {inside}/, which holds protected files"
    return None


def _content_problems(
    rel: str, status: str, root: Path, ctx: IntegrityContext
) -> list[tuple[str, str]]:
    """(class, why) for what a new or changed path is: a link, compiled code."""
    found: list[tuple[str, str]] = []
    name = rel.rsplit("/", 1)[-1]
    why_link = _link_problem(root, rel, ctx)
    if why_link:
        found.append(("linked-file", why_link))
    parts = rel.split("/")
    if name.endswith(_BYTECODE) or "__pycache__" in parts[:-1]:
        why_pyc = _pyc_problem(root, rel, ctx) if name.endswith(_BYTECODE) else None
        if why_pyc:
            found.append(("bytecode", why_pyc))
    elif status == "A":
        why_ext = _extension_problem(root, rel, ctx)
        if why_ext:
            found.append(("bytecode", why_ext))
    return found


def _check_path(rel: str, status: str, root: Path, ctx: IntegrityContext) -> list[tuple[str, str]]:
    """(class, why) for one changed path; ``status`` A (new), M/T (changed), D (deleted)."""
    found: list[tuple[str, str]] = []
    name = rel.rsplit("/", 1)[-1]
    if _runner_config(rel):
        what = "pytest reads it before any test" if name == "conftest.py" else "runner config"
        found.append(("runner-config", f"{what}; {'new' if status == 'A' else 'changed'}"))
    elif name in SHARED_CONFIGS:
        why = _shared_config_changed(rel, root, ctx.facts)
        if why:
            found.append(("runner-config", why))
    if _package_metadata(rel):
        found.append(
            (
                "runner-config",
                "package metadata: the entry points a runner loads plugins from "
                f"({'new' if status == 'A' else 'changed'})",
            )
        )
    if _startup_hook(rel):
        found.append(("startup-hook", "the interpreter runs it when it starts"))
    if status != "D":
        found += _content_problems(rel, status, root, ctx)
    if status == "A" or any(rel.startswith(s + "/") for s in ctx.site_roots):
        why_shadow = _shadow_problem(rel, ctx)
        if why_shadow:
            found.append(("shadowing", why_shadow))
    pattern = is_protected(rel, ctx.protect)
    if pattern is not None:
        new_test = status == "A" and ctx.evidence and is_test_module(rel)
        if not new_test:
            found.append(("protected-path", f"matches {pattern}"))
    return found


def check_changes(
    changes: Iterable[Change], ctx: IntegrityContext, *, hidden: Iterable[str] = ()
) -> list[Violation]:
    """Every violation in ``changes`` (the unfiltered change set since the snapshot).

    Args:
        changes: the changed paths; a rename counts as its source deleted and its target new.
        ctx: what the checks compare against.
        hidden: the changed paths an ignore rule kept out of the diff.

    Returns:
        The violations, in path order; an empty list means the change may be verified.
    """
    hidden_set = set(hidden)
    out: list[Violation] = []
    for ch in changes:
        pairs = [(ch.path, "A" if ch.status == "R" else ch.status)]
        if ch.old_path:
            pairs.append((ch.old_path, "D"))
        for rel, status in pairs:
            for kind, why in _check_path(rel, status, ctx.root, ctx):
                if rel in hidden_set:
                    out.append(Violation("ignore-rules", rel, f"an ignore rule hid it: {why}"))
                out.append(Violation(kind, rel, why))
    return sorted(set(out), key=lambda v: (v.path, CLASSES.index(v.kind)))
