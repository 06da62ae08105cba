"""What people paste, as a git repository with a ref and a path: ``owner/repo``, web URLs.

``npx skills add`` taught users to name skills as ``owner/repo``, ``owner/repo@skill``,
``github:owner/repo``, ``gitlab:group/repo`` or by a host's web URL (``…/tree/REF/PATH``,
GitLab's ``…/-/tree/REF/PATH``, Gitea's ``…/src/branch/REF/PATH``, Bitbucket's
``…/src/REF/PATH``, a ``…/blob/REF/PATH/SKILL.md`` page). ``locate`` maps each to the
repository to clone, the ref and the folder inside it. It is pure: which host a shorthand means
is an argument (``GitHosts``), so tests point ``owner/repo`` at a ``git daemon`` on 127.0.0.1.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from urllib.parse import unquote, urlsplit

from chimera_cards.errors import UsageError

# Where `owner/repo` and github.com / gitlab.com URLs are cloned from (a mirror, an enterprise
# host, a test's git daemon): the base URL that replaces https://github.com (or gitlab.com).
GITHUB_ENV = "CHIMERA_CARDS_GITHUB_URL"
GITLAB_ENV = "CHIMERA_CARDS_GITLAB_URL"

_NAME = r"[A-Za-z0-9_.-]+"
_SHORTHAND = re.compile(rf"^(?P<owner>{_NAME})/(?P<repo>{_NAME})(?:/(?P<path>[^@#]+?))?/?$")
_CODE_HOSTS = frozenset(
    {"github.com", "www.github.com", "bitbucket.org", "codeberg.org", "gitea.com"}
)
_SHORTHAND_SKILL = re.compile(rf"^(?P<owner>{_NAME})/(?P<repo>{_NAME})@(?P<skill>[^/@#]+)$")


@dataclass(frozen=True)
class GitHosts:
    """The base URLs that github.com and gitlab.com stand for."""

    github: str = "https://github.com"
    gitlab: str = "https://gitlab.com"

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> GitHosts:
        """The hosts named by ``CHIMERA_CARDS_GITHUB_URL`` / ``CHIMERA_CARDS_GITLAB_URL``.

        Args:
            env: the environment (default: this process's).
        Returns:
            GitHosts with those bases, or the public hosts.
        """
        seen = os.environ if env is None else env
        return cls(
            github=(seen.get(GITHUB_ENV) or cls.github).rstrip("/"),
            gitlab=(seen.get(GITLAB_ENV) or cls.gitlab).rstrip("/"),
        )


@dataclass(frozen=True)
class Located:
    """A git repository to clone, and what to take from it."""

    url: str  # what git clones
    ref: str | None = None  # branch, tag or commit; None: the default branch
    path: str = ""  # the folder inside the repository ("" = the whole repository)
    skill: str | None = None  # only the skill of this name


def _clean_path(path: str, source: str) -> str:
    parts = [p for p in unquote(path).replace("\\", "/").split("/") if p and p != "."]
    if any(p == ".." for p in parts):
        raise UsageError(f"{source}: the path inside the repository may not contain '..'")
    if parts and parts[-1].lower() == "skill.md":
        parts = parts[:-1]  # a page of the SKILL.md itself names its folder
    return "/".join(parts)


def _fragment(text: str) -> tuple[str, str | None, str | None]:
    """``SOURCE#ref@skill`` as npx reads it: (source, ref, skill)."""
    head, sep, frag = text.partition("#")
    if not sep or not frag:
        return text, None, None
    ref, _, skill = frag.partition("@")
    return head, unquote(ref) or None, unquote(skill) or None


def _web(url: str, hosts: GitHosts, source: str) -> Located | None:
    """A code host's web URL (repository page, tree, blob) as a repository, ref and path."""
    try:
        parts = urlsplit(url)
    except ValueError:  # a malformed URL: the fetch that follows says what is wrong with it
        return None
    host = parts.netloc.lower()
    segs = [s for s in parts.path.split("/") if s]
    if host in ("github.com", "www.github.com"):
        base = hosts.github
    elif host in ("gitlab.com", "www.gitlab.com"):
        base = hosts.gitlab
    else:
        base = f"{parts.scheme}://{parts.netloc}"
    if "_git" in segs[:-1]:  # Azure Repos: ORG/PROJECT/_git/REPO?path=/P&version=GBref
        return _azure(parts, segs, source)
    if "-" in segs:  # GitLab (any host): GROUP/…/REPO/-/tree|blob/REF/PATH
        cut = segs.index("-")
        group, tail = segs[:cut], segs[cut + 1 :]
        if len(group) < 2 or len(tail) < 2 or tail[0] not in ("tree", "blob"):
            return None
        path = _clean_path("/".join(tail[2:]), source)
        return Located(f"{base}/{'/'.join(group)}.git", tail[1], path)
    if host in ("gitlab.com", "www.gitlab.com"):
        if len(segs) < 2:
            return None
        return Located(f"{base}/{'/'.join(segs).removesuffix('.git')}.git")
    if len(segs) < 2:
        return None
    owner, repo, rest = segs[0], segs[1].removesuffix(".git"), segs[2:]
    clone = f"{base}/{owner}/{repo}.git"
    if not rest:
        # A bare /owner/repo is a repository only on a known code host; elsewhere it is a site
        # (which may publish .well-known/agent-skills).
        return Located(clone) if host in _CODE_HOSTS else None
    if rest[0] in ("tree", "blob") and len(rest) >= 2:  # GitHub, Gitea's old form
        return Located(clone, rest[1], _clean_path("/".join(rest[2:]), source))
    if rest[0] == "src" and len(rest) >= 3 and rest[1] in ("branch", "tag", "commit"):  # Gitea
        return Located(clone, rest[2], _clean_path("/".join(rest[3:]), source))
    if rest[0] == "src" and len(rest) >= 2 and host.endswith("bitbucket.org"):
        return Located(clone, rest[1], _clean_path("/".join(rest[2:]), source))
    return None


def _azure(parts, segs: list[str], source: str) -> Located:
    """An Azure Repos URL as npx reads it: clone ``…/_git/REPO``; ``version=GB<branch>`` or
    ``GT<tag>`` is the ref, ``path=`` the folder."""
    from urllib.parse import parse_qs, quote

    cut = segs.index("_git")
    repo = segs[cut + 1].removesuffix(".git")
    clone_path = "/".join(quote(unquote(s), safe="") for s in [*segs[:cut], "_git", repo])
    query = parse_qs(parts.query)
    version = (query.get("version") or [""])[0]
    ref = version[2:] if version[:2].upper() in ("GB", "GT") and len(version) > 2 else None
    path = _clean_path((query.get("path") or [""])[0], source)
    return Located(f"{parts.scheme}://{parts.netloc}/{clone_path}", ref, path)


def locate(text: str, hosts: GitHosts | None = None) -> Located | None:
    """The git repository, ref and folder that ``text`` names, when it is a shorthand or a code
    host's web URL; None for anything else (a local path, a plain URL, an archive URL).

    Callers check for an existing local path first: ``owner/repo`` is also a relative path.

    Args:
        text: what the user typed (``owner/repo``, ``owner/repo@skill``, ``github:o/r``,
            ``gitlab:g/r``, ``https://github.com/o/r/tree/REF/PATH``, ``#ref@skill`` suffix …).
        hosts: what github.com and gitlab.com stand for (default: the public hosts).
    Returns:
        Located, or None.
    Raises:
        UsageError: a path inside the repository that climbs out of it (``..``).
    """
    hosts = hosts or GitHosts()
    source, ref, skill = _fragment(text.strip())
    if source.startswith("github:"):
        source = source[len("github:") :]
    elif source.startswith("gitlab:"):
        found = _web(f"https://gitlab.com/{source[len('gitlab:') :]}", hosts, text)
        return _with(found, ref, skill)
    if "://" in source:
        scheme = source.split("://", 1)[0].lower()
        if scheme not in ("http", "https"):
            return None
        return _with(_web(source, hosts, text), ref, skill)
    if source.startswith((".", "/", "~")) or ":" in source:
        return None
    m = _SHORTHAND_SKILL.match(source)
    if m:
        return Located(
            f"{hosts.github}/{m['owner']}/{m['repo'].removesuffix('.git')}.git",
            ref,
            "",
            skill or m["skill"],
        )
    m = _SHORTHAND.match(source)
    if m:
        path = _clean_path(m["path"] or "", text)
        return Located(
            f"{hosts.github}/{m['owner']}/{m['repo'].removesuffix('.git')}.git", ref, path, skill
        )
    return None


def _with(found: Located | None, ref: str | None, skill: str | None) -> Located | None:
    if found is None:
        return None
    return Located(found.url, found.ref or ref, found.path, skill or found.skill)
