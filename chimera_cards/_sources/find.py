"""Where skills come from: a folder, a collection, an archive, a git repository, a URL.

``find_skills`` turns whatever the user named into the skills it holds, each as a bundle (or the
reason that one skill was refused), with where it came from and whether it crossed the network.
Nothing here touches the store: the importer decides what to keep.

- a folder holding ``SKILL.md`` is one skill; any other folder is a collection (every folder
  below it holding ``SKILL.md``, not looking inside a skill);
- a ``SKILL.md`` file is its folder; any other regular file is an archive (by suffix or magic
  bytes: ``.zip``, ``.skill``, ``.tar.gz``, ``.tgz``, ``.tar``) or else a bare card;
- a git repository (``git://``, ``ssh://``, ``git+…``, ``….git``, ``user@host:path``, a bare
  repository, or any path or URL with ``--ref``) is read at a branch, tag or commit;
- an http(s) URL is an archive (by suffix or magic bytes) or a single ``SKILL.md``.

Provenance follows the origin: a URL or a remote repository is **network** (the importer taints
it); a local folder, archive or repository is a path import.
"""

from __future__ import annotations

import contextlib
import os
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from chimera_cards._bundles.bundle import (
    SKILL_FILE,
    Bundle,
    BundleError,
    bundle_from_files,
    find_bundle_dirs,
    read_bundle_dir,
    split_tree,
)
from chimera_cards._cards.card import MAX_CARD_BYTES, CardReadError, read_card_bytes
from chimera_cards._sources.gitsource import is_git_source, read_git
from chimera_cards._sources.locate import GitHosts, Located, locate
from chimera_cards._sources.marketplace import assign, read_plugins
from chimera_cards._util.paths import LinkEscapeError, check_link_inside
from chimera_cards._util.urls import DEFAULT_TIMEOUT, is_url
from chimera_cards.errors import ChimeraError, UsageError

if TYPE_CHECKING:
    import ssl  # annotations only: importing it costs a folder import's start-up


@dataclass
class SkillSource:
    """One skill found in a source: its bundle or why it was refused, and where it came from."""

    label: str  # what to call it in messages (a folder, archive:folder, url@commit:folder)
    origin: str  # recorded in the store: a path, or the URL as given (@commit for git)
    final_url: str | None  # a URL after redirects
    network: bool  # fetched over the network: the importer taints it
    folder: str  # the skill's folder name ("" when it has none, e.g. a bare card URL)
    bundle: Bundle | None = None
    error: ChimeraError | None = None
    skill_file: Path | None = None  # SKILL.md on disk (a folder import), for approvals beside it
    approvals: bytes | None = None  # approvals.jsonl shipped inside an archive or repository
    info: dict = field(default_factory=dict)  # kind, url, ref, commit, path: for `update`
    # Why it is held for review though it was read from this disk ("" = nothing): an npm
    # package's skills came from a registry.
    taint_reason: str = ""
    # (folder, folder named) of a local skill find_skills(read=False) left for read_skill.
    unread: tuple[Path, Path | None] | None = field(default=None, repr=False, compare=False)


@dataclass
class FoundSource:
    """The skills one source (path, URL, archive) holds."""

    source: str
    skills: list[SkillSource]


def _in_marketplace(
    skills: list[SkillSource], read: Callable[[str], bytes | None], where: str
) -> list[SkillSource]:
    """Only the skills a marketplace's plugins own, each with its plugin's name; every skill
    when the tree is no marketplace."""
    plugins = read_plugins(read, where)
    if plugins is None:
        return skills
    owners = assign((s.info.get("path", "") for s in skills), plugins)
    kept = []
    for skill in skills:
        names = owners.get(skill.info.get("path", ""))
        if names:
            skill.info["plugin"] = names[0]
            if len(names) > 1:
                skill.info["plugins"] = names
            kept.append(skill)
    return kept


def _tree_reader(entries) -> Callable[[str], bytes | None]:
    return lambda path: entries[path][0] if path in entries else None


def _sources(found_skills, *, where: str, origin: str, final_url, network: bool, info: dict):
    """A SkillSource per skill found below ``where``; a skill in a subfolder says which."""
    return [
        SkillSource(
            label=f"{where}:{found.root}" if found.root else where,
            origin=f"{origin}#{found.root}" if found.root else origin,
            final_url=final_url,
            network=network,
            folder=found.root.rsplit("/", 1)[-1],
            bundle=found.bundle,
            error=found.error,
            info={**info, "path": found.root},
            approvals=found.sidecar,
        )
        for found in found_skills
    ]


def _from_tree(entries, *, where: str, origin: str, final_url, network: bool, info: dict):
    found = split_tree(entries, where=where)
    out = _sources(
        found, where=where, origin=origin, final_url=final_url, network=network, info=info
    )
    return _in_marketplace(out, _tree_reader(entries), where)


def _folder_skill(
    path: Path, root: Path | None = None, resolved_root: Path | None = None, read: bool = True
) -> SkillSource:
    # Strings, not Path objects, for what is made once per skill of a collection.
    label = str(path)
    if resolved_root is not None and _parent(label) == str(root) and not os.path.islink(label):
        # A real entry of a resolved folder: resolving it again would lstat every component.
        resolved = os.path.join(resolved_root, path.name)
    else:
        resolved = str(path.resolve())
    skill_file = os.path.join(resolved, SKILL_FILE)
    skill = SkillSource(
        label=label,
        origin=skill_file,
        final_url=None,
        network=False,
        folder=os.path.basename(resolved),
        skill_file=Path(skill_file),
        info={"kind": "folder", "path": resolved},
        unread=(path, root),
    )
    return read_skill(skill) if read else skill


def _parent(path: str) -> str:
    """``str(Path(path).parent)`` for a path as ``str(Path)`` spells it."""
    head, sep, _ = path.rpartition("/")
    return head or ("/" if sep and path.startswith("/") else ".")


def read_skill(skill: SkillSource) -> SkillSource:
    """Read the bundle of a skill ``find_skills(read=False)`` left unread (else a no-op): its
    bundle, or the refusal of that skill alone.

    Args:
        skill: a skill from ``find_skills``.
    Returns:
        The same skill, read.
    """
    if skill.unread is None:
        return skill
    path, root = skill.unread
    skill.unread = None
    try:
        if root is not None and path != root:
            check_link_inside(root, path)  # a skill folder linked out of the folder named
        skill.bundle = read_bundle_dir(path)
    except (BundleError, LinkEscapeError) as exc:
        skill.error = exc
    return skill


def _local(source: str, read: bool = True) -> list[SkillSource]:
    path = Path(source)
    if not path.exists() and not path.is_symlink():
        raise CardReadError(f"{source}: no such file or directory")
    if path.is_dir():
        resolved_root = path.resolve()
        skills = [_folder_skill(d, path, resolved_root, read) for d in find_bundle_dirs(path)]
        if not os.path.lexists(os.path.join(path, ".claude-plugin")):
            return skills
        return _local_marketplace(skills, path, resolved_root)
    if path.name == SKILL_FILE:
        return [_folder_skill(path.parent, read=read)]
    if path.name == "package.json":
        return _package_json(path, read)
    with open(path, "rb") as handle:
        head = handle.read(8)
    # Archive and network code is loaded only for what needs it: a folder import starts faster.
    from chimera_cards._sources.archive import archive_kind, read_archive_file

    if archive_kind(path.name, head):
        resolved = str(path.resolve())
        tree = read_archive_file(str(path))
        return _from_tree(
            tree.entries,
            where=str(path),
            origin=resolved,
            final_url=None,
            network=False,
            info={"kind": "archive", "url": resolved},
        )
    # Any other file: a bare card, as single-file imports have always been.
    data, resolved = read_card_bytes(path)
    skill = SkillSource(
        label=str(path),
        origin=resolved,
        final_url=None,
        network=False,
        folder=Path(resolved).parent.name,
        skill_file=Path(resolved),
        info={"kind": "file", "path": resolved},
    )
    try:
        skill.bundle = bundle_from_files({SKILL_FILE: (data, False)}, where=str(path))
    except BundleError as exc:
        skill.error = exc
    return [skill]


def _npm_skills(found, read: bool) -> list[SkillSource]:
    out = []
    for package_skill in found:
        skill = _folder_skill(package_skill.folder, read=read)
        skill.taint_reason = f"from the npm package {package_skill.package}"
        skill.info["npm"] = {
            "package": package_skill.package,
            "skillPath": package_skill.skill_path,
        }
        out.append(skill)
    return out


def _package_json(path: Path, read: bool) -> list[SkillSource]:
    """What ``npx skills experimental_sync`` syncs for this package.json: its dependencies'
    skills, its ``skills`` array's ``npm:`` packages and git sources (see ``npmpkg``)."""
    from chimera_cards._sources.npmpkg import package_json

    synced = package_json(path)
    out = _npm_skills(synced.skills, read)
    for request in synced.git:
        found = find_skills(request.source, ref=request.ref)
        for name in request.skills:
            pick(found, name, source=request.source)  # each name must be there
        out += [
            s for s in found if not request.skills or any(_has_name(s, n) for n in request.skills)
        ]
    return out


def _has_name(skill: SkillSource, name: str) -> bool:
    try:
        pick([skill], name, source=skill.label)
    except UsageError:
        return False
    return True


def _local_marketplace(
    skills: list[SkillSource], root: Path, resolved_root: Path
) -> list[SkillSource]:
    """A marketplace folder's skills: only what its plugins own (see ``marketplace``)."""

    def read(rel: str) -> bytes | None:
        file = root / rel
        # A manifest behind a link could name anything; it is read only as a plain file here.
        if any(p.is_symlink() for p in (file, *file.parents) if root in (p, *p.parents)):
            return None
        if not file.is_file() or file.stat().st_size > MAX_CARD_BYTES:
            return None
        return file.read_bytes()

    for skill in skills:
        rel = os.path.relpath(skill.info["path"], resolved_root).replace(os.sep, "/")
        # The folder's own SKILL.md is the tree's top (""), as in an archive or a commit: a
        # plugin with no skills/ folder and no list is that one skill.
        skill.info["path"] = "" if rel == "." else rel
    kept = _in_marketplace(skills, read, str(root))
    for skill in skills:
        skill.info["path"] = os.path.join(resolved_root, skill.info["path"])
    return kept


def _url(source: str, timeout: float, ssl_context: ssl.SSLContext | None) -> list[SkillSource]:
    from chimera_cards._sources.archive import MAX_ARCHIVE_BYTES, archive_kind, read_archive
    from chimera_cards._sources.fetch import FetchError, fetch_url

    fetched = fetch_url(
        source, timeout=timeout, max_bytes=MAX_ARCHIVE_BYTES, ssl_context=ssl_context
    )
    kind = archive_kind(source, fetched.data[:8]) or archive_kind(fetched.final_url, b"")
    if kind:
        tree = read_archive(fetched.data, fetched.final_url, where=source)
        return _from_tree(
            tree.entries,
            where=source,
            origin=source,
            final_url=fetched.final_url,
            network=True,
            info={"kind": "archive", "url": source},
        )
    if len(fetched.data) > MAX_CARD_BYTES:
        raise FetchError(f"{fetched.final_url}: body is over the {MAX_CARD_BYTES}-byte limit")
    skill = SkillSource(
        label=source,
        origin=source,
        final_url=fetched.final_url,
        network=True,
        folder="",
        info={"kind": "url", "url": source},
    )
    try:
        skill.bundle = bundle_from_files({SKILL_FILE: (fetched.data, False)}, where=source)
    except BundleError as exc:
        skill.error = exc
    return [skill]


def _scp_like(source: str) -> bool:
    return bool(re.match(r"^[\w.-]+@[\w.-]+:", source)) and not Path(source).exists()


def _git(source: str, ref: str | None, timeout: float) -> list[SkillSource]:
    snap = read_git(source, ref=ref, timeout=timeout)
    return _in_marketplace(_git_skills(source, ref, snap), snap.manifests.get, source)


def _git_skills(source: str, ref: str | None, snap) -> list[SkillSource]:
    local_url = source.lower().startswith(("file://", "git+file://"))
    network = (is_url(source) and not local_url) or _scp_like(source)
    if network:
        url = source
        if _scp_like(source):
            user_host, _, path = source.partition(":")
            url = f"ssh://{user_host}/{path}"
    elif local_url:
        url = source  # a repository on this machine, named as git names it
    else:
        url = str(Path(source).resolve())
    info = {"kind": "git", "url": url, "ref": ref, "commit": snap.commit}
    where = f"{source}@{snap.commit[:12]}"
    origin = f"{url}@{snap.commit}"
    return _sources(
        snap.skills, where=where, origin=origin, final_url=None, network=network, info=info
    )


def _located(text: str, where: Located, ref: str | None, timeout: float) -> list[SkillSource]:
    """A shorthand or web URL's repository, narrowed to the folder and skill it names."""
    from chimera_cards._sources.gitsource import GitError

    try:
        skills = _git(where.url, ref or where.ref, timeout)
    except GitError as exc:
        local = "" if "://" in text else " (no such local path either)"
        raise GitError(f"{text}: read as the repository {where.url}{local}: {exc}") from None
    if where.path:
        inside = [
            s
            for s in skills
            if s.info.get("path") == where.path
            or str(s.info.get("path", "")).startswith(where.path + "/")
        ]
        if not inside:
            raise UsageError(f"{text}: no skill at {where.path!r} in {where.url}")
        skills = inside
    if where.skill:
        skills = pick(skills, where.skill, source=text)
    return skills


def _may_publish_index(url: str) -> bool:
    """Whether a URL may be a site's discovery index rather than one file to fetch."""
    from urllib.parse import urlsplit

    from chimera_cards._sources.archive import archive_kind

    try:
        path = urlsplit(url).path
    except ValueError:
        return False  # malformed: the plain fetch refuses it with its own message
    if "/.well-known/" in path:
        return True
    return not (path.lower().endswith(".md") or archive_kind(path, b""))


def _wellknown(discovery, timeout: float, ssl_context) -> list[SkillSource]:
    from chimera_cards._sources.wellknown import WellKnownError, entry_files

    entries = [e for e in discovery.entries if discovery.wanted in (None, e.name)]
    if not entries:
        raise UsageError(f"{discovery.index_url}: lists no skill named {discovery.wanted!r}")
    out = []
    for entry in entries:
        where = f"{discovery.index_url}#{entry.name}"
        skill = SkillSource(
            label=where,
            origin=where,
            final_url=entry.url or f"{discovery.folder_url}/{entry.name}/{SKILL_FILE}",
            network=True,
            folder=entry.name,
            info={"kind": "wellknown", "url": discovery.index_url, "skill": entry.name},
        )
        try:
            found = split_tree(
                entry_files(entry, discovery, timeout=timeout, ssl_context=ssl_context),
                where=where,
            )
            if len(found) != 1:
                raise WellKnownError(f"{where}: holds {len(found)} skills, not one")
            skill.bundle, skill.error, skill.approvals = found[0].bundle, found[0].error, None
        except ChimeraError as exc:
            skill.error = exc
        out.append(skill)
    return out


def find_skills(
    source: str | os.PathLike,
    *,
    ref: str | None = None,
    timeout: float = DEFAULT_TIMEOUT,
    ssl_context: ssl.SSLContext | None = None,
    read: bool = True,
    hosts: GitHosts | None = None,
) -> list[SkillSource]:
    """Every skill ``source`` holds.

    Args:
        source: a folder, collection, archive, SKILL.md, git repository (path or URL), or URL.
        ref: a git branch, tag or commit (makes any source a git repository).
        timeout: seconds for a fetch (each git command gets at least 60).
        ssl_context: a CA to trust for https (tests).
        read: False leaves the skills of a local folder unread, for ``read_skill`` to read one
            at a time (an importer can start on the first while the rest wait on disk).
        hosts: what ``owner/repo`` and github.com / gitlab.com URLs clone from (default: the
            ``CHIMERA_CARDS_GITHUB_URL`` / ``CHIMERA_CARDS_GITLAB_URL`` bases, else the hosts).
    Returns:
        One SkillSource per skill, each with its bundle or the refusal of that skill alone.
    Raises:
        ChimeraError: the source as a whole cannot be read (missing path, fetch failed, unsafe
            archive, git error); nothing was found then.
    """
    text = str(source)
    if text.startswith("npm:"):
        from chimera_cards._sources.npmpkg import npm_package

        return _npm_skills(npm_package(text), read)
    if is_url(text) or not os.path.lexists(text):
        # owner/repo[@skill], github:…, and code hosts' web URLs name a repository.
        where = locate(text, hosts or GitHosts.from_env())
        if where is not None:
            return _located(text, where, ref, max(timeout, 60.0))
    if ref is not None or is_git_source(text):
        return _git(text, ref, max(timeout, 60.0))
    if is_url(text):
        scheme = text.split("://", 1)[0].lower()
        if scheme not in ("http", "https"):
            raise UsageError(f"{text}: only http(s) URLs and git repositories can be imported")
        if _may_publish_index(text):
            from chimera_cards._sources.wellknown import discover

            discovery = discover(text, timeout=timeout, ssl_context=ssl_context)
            if discovery is not None:
                return _wellknown(discovery, timeout, ssl_context)
        return _url(text, timeout, ssl_context)
    return _local(text, read)


def pick(skills: list[SkillSource], name: str, *, source: str) -> list[SkillSource]:
    """The skills named ``name`` (by folder name, or by the ``name`` in their SKILL.md).

    Raises:
        UsageError: none is.
    """
    from chimera_cards._cards.card import CardParseError, parse_card

    chosen = []
    for skill in skills:
        read_skill(skill)
        named = skill.folder == name
        if not named and skill.bundle is not None:
            try:
                named = parse_card(skill.bundle.skill_md).name == name
            except CardParseError:
                named = False
        if named:
            chosen.append(skill)
    if not chosen:
        found = ", ".join(s.folder or s.label for s in skills) or "none"
        raise UsageError(f"{source}: no skill named {name!r} (found: {found})")
    return chosen


def pick_plugin(skills: list[SkillSource], plugin: str, *, source: str) -> list[SkillSource]:
    """The skills of one marketplace plugin.

    Raises:
        UsageError: the source is no marketplace, or has no plugin of that name.
    """
    plugins = sorted({name for s in skills for name in plugins_of(s)})
    if not plugins:
        raise UsageError(f"{source}: not a plugin marketplace (no .claude-plugin/marketplace.json)")
    chosen = [s for s in skills if plugin in plugins_of(s)]
    if not chosen:
        raise UsageError(f"{source}: no plugin named {plugin!r} (found: {', '.join(plugins)})")
    for skill in chosen:
        skill.info["plugin"] = plugin  # the plugin it was taken for is the one recorded
    return chosen


def plugins_of(skill: SkillSource) -> list[str]:
    """Every marketplace plugin that exposes ``skill`` (none outside a marketplace)."""
    many = skill.info.get("plugins")
    if isinstance(many, list):
        return [str(n) for n in many]
    one = skill.info.get("plugin")
    return [str(one)] if one else []


@dataclass
class SourceEntry:
    """One skill a source holds, as ``import --list`` shows it (nothing is stored)."""

    name: str  # the SKILL.md's name, else the folder's
    folder: str  # the folder inside the source ("" for its top)
    plugin: str | None  # the (first) marketplace plugin that exposes it
    digest: str | None  # the bundle digest; None when the skill was refused
    files: int
    network: bool
    origin: str
    error: str | None = None
    plugins: list[str] = field(default_factory=list)  # every plugin that exposes it

    def to_dict(self) -> dict:
        return {
            "name": self.name,
            "folder": self.folder,
            "plugin": self.plugin,
            "plugins": self.plugins,
            "digest": self.digest,
            "files": self.files,
            "network": self.network,
            "origin": self.origin,
            "error": self.error,
        }


def list_source(
    source: str,
    *,
    ref: str | None = None,
    plugin: str | None = None,
    skill: str | None = None,
    timeout: float = DEFAULT_TIMEOUT,
    ssl_context: ssl.SSLContext | None = None,
    hosts: GitHosts | None = None,
) -> list[SourceEntry]:
    """What ``source`` holds, skill by skill, without importing anything.

    Args:
        source, ref, timeout, ssl_context, hosts: as ``find_skills`` takes them.
        plugin, skill: narrow the listing as ``import --plugin`` / ``--skill`` would.
    Returns:
        One SourceEntry per skill, in the order found.
    Raises:
        ChimeraError: as ``find_skills``, ``pick`` and ``pick_plugin`` raise.
    """
    from chimera_cards._cards.card import CardParseError, parse_card

    skills = find_skills(source, ref=ref, timeout=timeout, ssl_context=ssl_context, hosts=hosts)
    if plugin is not None:
        skills = pick_plugin(skills, plugin, source=source)
    if skill is not None:
        skills = pick(skills, skill, source=source)
    out = []
    for found in skills:
        name = found.folder or found.label
        if found.bundle is not None:
            with contextlib.suppress(CardParseError):  # the listing still shows the folder
                name = parse_card(found.bundle.skill_md).name or name
        out.append(
            SourceEntry(
                name=name,
                folder=str(found.info.get("path", found.folder)),
                plugin=found.info.get("plugin"),
                plugins=[plugin] if plugin is not None else plugins_of(found),
                digest=found.bundle.digest if found.bundle is not None else None,
                files=len(found.bundle.files) if found.bundle is not None else 0,
                network=found.network,
                origin=found.origin,
                error=str(found.error) if found.error is not None else None,
            )
        )
    return out


@dataclass
class BundleHash:
    """What ``chimera-cards hash`` prints for one skill."""

    path: str  # the skill's folder (or archive:folder, or the bare card file)
    sha256: str  # of SKILL.md: what --digest skill_md: and Chimera's published hashes pin
    integrity: str  # the same, as sha256-<base64>
    bytes: int  # SKILL.md's size
    digest: str  # the bundle digest: what --digest and the lockfile pin
    files: list[dict]  # the manifest: path, executable, size, sha256 per file
    npx: str = ""  # npx's computedHash (of the folder as npx reads it, for a folder)
    skill_digest: str = ""  # the proposed Agent Skills skill_digest (likewise)

    def to_dict(self) -> dict:
        return {
            "path": self.path,
            "digest": self.digest,
            "skill_md_sha256": self.sha256,
            "skill_md_integrity": self.integrity,
            "skill_md_bytes": self.bytes,
            "npx": self.npx,
            "skill_digest": self.skill_digest,
            "manifest": self.files,
        }


def hash_paths(paths: list[str]) -> list[BundleHash]:
    """The SKILL.md hash and the bundle digest of every skill under each path.

    Args:
        paths: skill folders, collections, archives or SKILL.md files.
    Returns:
        One BundleHash per skill, in the order found.
    Raises:
        CardReadError: a path does not exist; UsageError: a folder holds no skill;
        BundleError: a skill breaks a bundle rule (the first one found).
    """
    import base64
    import hashlib

    from chimera_cards._bundles import digests

    out: list[BundleHash] = []
    for path in paths:
        found = _local(str(path))
        if not found:
            raise UsageError(f"{path}: no cards found (no SKILL.md in it or below it)")
        for skill in found:
            if skill.error is not None:
                raise skill.error
            assert skill.bundle is not None
            data = skill.bundle.skill_md
            digest = hashlib.sha256(data).digest()
            contents = [(f.path, skill.bundle.contents[f.path]) for f in skill.bundle.files]
            npx, spec = digests.npx_hash(contents), digests.skill_digest(contents)
            if skill.info.get("kind") == "folder" and skill.skill_file is not None:
                where = str(skill.skill_file.parent)
                # Each tool's digest of the folder as that tool reads it (npx keeps .DS_Store).
                npx = digests.npx_hash_folder(where)
                spec = digests.skill_digest_folder(where)
            else:
                where = str(skill.skill_file) if skill.skill_file else skill.label
            out.append(
                BundleHash(
                    path=where,
                    sha256=digest.hex(),
                    integrity="sha256-" + base64.b64encode(digest).decode("ascii"),
                    bytes=len(data),
                    digest=skill.bundle.digest,
                    files=[f.to_dict() for f in skill.bundle.files],
                    npx=npx,
                    skill_digest=spec,
                )
            )
    return out
