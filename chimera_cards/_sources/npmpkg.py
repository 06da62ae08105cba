"""Skills shipped in npm packages, found as ``npx skills experimental_sync`` finds them.

npx syncs, into a project's agent folders, the skills of its installed dependencies
(``dependencies``, ``devDependencies``, ``optionalDependencies``, ``peerDependencies``, each
looked up in ``node_modules`` from the project up) and what its ``package.json`` ``skills`` array
names: ``"npm:PACKAGE"`` (optionally ``{"source": "npm:PACKAGE", "skills": [NAME, ...]}``), or
a git source (``owner/repo``, a URL; with ``ref`` and ``skills``). A package's skills are its
top ``SKILL.md`` (the package is one skill), else each ``skills/*/SKILL.md`` and
``dist/skills/*/SKILL.md``.

``npm_package(spec, cwd)`` is one ``npm:`` source; ``package_json(path)`` is what a
``package.json`` syncs. Both only read the disk (npm installed the packages); what they find came
from a registry, so the importer holds it for review. Git entries are returned for the caller to
fetch.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass, field
from pathlib import Path

from chimera_cards.errors import UsageError

NPM_PREFIX = "npm:"
_DEPENDENCY_FIELDS = ("dependencies", "devDependencies", "optionalDependencies", "peerDependencies")
_PACKAGE_NAME = re.compile(r"(?:@[a-z0-9][\w.-]*/)?[a-z0-9][\w.-]*", re.IGNORECASE)


@dataclass(frozen=True)
class PackageSkill:
    """One skill folder inside an installed package."""

    package: str
    folder: Path
    skill_path: str  # inside the package, as npx records it: "skills/x/SKILL.md"


@dataclass(frozen=True)
class GitRequest:
    """A git source a ``skills`` array names (fetched by the caller)."""

    source: str
    ref: str | None = None
    skills: tuple[str, ...] = ()


@dataclass
class PackageSkills:
    """What a ``package.json`` syncs."""

    skills: list[PackageSkill] = field(default_factory=list)
    git: list[GitRequest] = field(default_factory=list)


def _sanitize(name: str) -> str:
    # npx's sanitizeName: lower case, runs of anything else as one hyphen.
    return re.sub(r"[^a-z0-9._]+", "-", name.lower()).strip("-.")


def _read_json(path: Path) -> dict | None:
    try:
        value = json.loads(path.read_bytes())
    except (OSError, ValueError):
        return None
    return value if isinstance(value, dict) else None


def _installed(start: Path, package: str) -> Path | None:
    """``node_modules/PACKAGE`` as Node resolves it from ``start`` upwards (npx's
    findInstalledPackage): the first holding a package.json."""
    if not _PACKAGE_NAME.fullmatch(package):
        return None
    here = start.resolve()
    while True:
        candidate = here / "node_modules" / package
        if (candidate / "package.json").is_file():
            return candidate
        if here.parent == here:
            return None
        here = here.parent


def package_skills(folder: Path, package: str) -> list[PackageSkill]:
    """The skills of an installed package (its top SKILL.md, else skills/* and dist/skills/*)."""
    if (folder / "SKILL.md").is_file():
        return [PackageSkill(package, folder, "SKILL.md")]
    out = []
    for sub in ("skills", "dist/skills"):
        base = folder / sub
        try:
            names = sorted(os.listdir(base))
        except OSError:
            continue
        for name in names:
            if (base / name / "SKILL.md").is_file():
                out.append(PackageSkill(package, base / name, f"{sub}/{name}/SKILL.md"))
    return out


def _wanted(skill: PackageSkill, names: tuple[str, ...]) -> bool:
    if not names:
        return True
    return skill.folder.name in names or _sanitize(skill.folder.name) in names


def npm_package(spec: str, cwd: str | os.PathLike = ".") -> list[PackageSkill]:
    """The skills of ``npm:PACKAGE``, installed under ``node_modules`` from ``cwd`` upwards.

    Raises:
        UsageError: not an ``npm:`` name, not installed, or no skill in it.
    """
    package = spec[len(NPM_PREFIX) :] if spec.startswith(NPM_PREFIX) else spec
    folder = _installed(Path(cwd), package)
    if folder is None:
        raise UsageError(
            f"{spec}: no installed package {package!r} in node_modules (npm install it first)"
        )
    found = package_skills(folder, package)
    if not found:
        raise UsageError(f"{spec}: package {package!r} holds no skill")
    return found


def package_json(path: str | os.PathLike) -> PackageSkills:
    """What ``npx skills experimental_sync`` syncs for the project of this ``package.json``.

    Raises:
        UsageError: unreadable, not JSON, a ``skills`` field that is not an array, an entry npx
            refuses, an ``npm:`` entry that is not installed.
    """
    where = Path(path)
    doc = _read_json(where)
    if doc is None:
        raise UsageError(f"{where}: not a readable package.json")
    root = where.parent
    out = PackageSkills()
    seen: set[str] = set()

    def add(found: list[PackageSkill]) -> None:
        for skill in found:
            key = os.path.realpath(skill.folder)
            if key not in seen:
                seen.add(key)
                out.skills.append(skill)

    for dep_field in _DEPENDENCY_FIELDS:
        deps = doc.get(dep_field)
        for package in sorted(deps) if isinstance(deps, dict) else ():
            folder = _installed(root, package)
            if folder is not None:
                add(package_skills(folder, package))
    field_value = doc.get("skills")
    if field_value is None:
        return out
    if not isinstance(field_value, list):
        raise UsageError(f'{where}: "skills" must be an array')
    for raw in field_value:
        source, names, ref = _entry(raw, where)
        if source.startswith(NPM_PREFIX):
            if ref is not None:
                raise UsageError(f'{where}: "ref" cannot be used with "{source}"')
            found = npm_package(source, root)
            add([s for s in found if _wanted(s, names)])
        else:
            out.git.append(GitRequest(source, ref, names))
    return out


def _entry(raw: object, where: Path) -> tuple[str, tuple[str, ...], str | None]:
    if isinstance(raw, str):
        return raw, (), None
    if isinstance(raw, dict) and isinstance(raw.get("source"), str):
        names = raw.get("skills", [])
        ref = raw.get("ref")
        names_ok = isinstance(names, list) and all(isinstance(n, str) for n in names)
        if names_ok and (ref is None or isinstance(ref, str)):
            return raw["source"], tuple(names), ref
    raise UsageError(f'{where}: invalid "skills" entry {json.dumps(raw)[:200]}')
