"""locate.py: what people paste (npx shorthands, code hosts' web URLs) as repository, ref, path."""

from __future__ import annotations

import pytest

from chimera_cards._sources.locate import GitHosts, Located, locate
from chimera_cards.errors import UsageError

GH = "https://github.com"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("anthropics/skills", Located(f"{GH}/anthropics/skills.git")),
        ("anthropics/skills.git", Located(f"{GH}/anthropics/skills.git")),
        ("anthropics/skills@pdf", Located(f"{GH}/anthropics/skills.git", skill="pdf")),
        ("anthropics/skills/skills/pdf", Located(f"{GH}/anthropics/skills.git", path="skills/pdf")),
        ("github:vercel-labs/agent-skills", Located(f"{GH}/vercel-labs/agent-skills.git")),
        ("o/r#v1.2", Located(f"{GH}/o/r.git", ref="v1.2")),
        ("o/r#v1.2@web", Located(f"{GH}/o/r.git", ref="v1.2", skill="web")),
        ("https://github.com/o/r", Located(f"{GH}/o/r.git")),
        ("https://github.com/o/r.git", Located(f"{GH}/o/r.git")),
        ("https://github.com/o/r/tree/main", Located(f"{GH}/o/r.git", ref="main")),
        (
            "https://github.com/o/r/tree/v2/skills/pdf",
            Located(f"{GH}/o/r.git", ref="v2", path="skills/pdf"),
        ),
        (
            "https://github.com/o/r/blob/main/skills/pdf/SKILL.md",
            Located(f"{GH}/o/r.git", ref="main", path="skills/pdf"),
        ),
        (
            "https://gitlab.com/group/sub/repo/-/tree/dev/skills/x",
            Located("https://gitlab.com/group/sub/repo.git", ref="dev", path="skills/x"),
        ),
        ("https://gitlab.com/group/repo", Located("https://gitlab.com/group/repo.git")),
        ("gitlab:group/repo", Located("https://gitlab.com/group/repo.git")),
        (
            "https://git.example.org/team/repo/-/tree/main/skills",
            Located("https://git.example.org/team/repo.git", ref="main", path="skills"),
        ),
        (
            "https://codeberg.org/o/r/src/branch/main/skills/a",
            Located("https://codeberg.org/o/r.git", ref="main", path="skills/a"),
        ),
        (
            "https://bitbucket.org/o/r/src/main/skills/a",
            Located("https://bitbucket.org/o/r.git", ref="main", path="skills/a"),
        ),
    ],
)
def test_pasted_sources_map_to_a_repository_ref_and_path(text, expected):
    assert locate(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "./skills/pdf",  # a local path, as npx reads it
        "/abs/path",
        "~/skills",
        "https://example.com/skills",  # a site (maybe a .well-known index), not a repository
        "https://example.com/skill.zip",
        "git://host/repo.git",  # already a git URL: the git reader takes it as it is
        "user@host:repo.git",
        "single-word",
        "a/b/c@x",  # npx's @skill form takes no path
    ],
)
def test_paths_sites_and_git_urls_are_not_shorthands(text):
    assert locate(text) is None


def test_a_host_base_points_every_github_form_at_another_server():
    hosts = GitHosts(github="git://127.0.0.1:9418", gitlab="http://127.0.0.1:8080")
    assert locate("o/r@s", hosts) == Located("git://127.0.0.1:9418/o/r.git", skill="s")
    web = locate("https://github.com/o/r/tree/main/skills/s", hosts)
    assert web == Located("git://127.0.0.1:9418/o/r.git", ref="main", path="skills/s")
    assert locate("gitlab:g/r", hosts) == Located("http://127.0.0.1:8080/g/r.git")


def test_host_bases_come_from_the_environment():
    env = {"CHIMERA_CARDS_GITHUB_URL": "git://127.0.0.1:1/", "CHIMERA_CARDS_GITLAB_URL": ""}
    assert GitHosts.from_env(env) == GitHosts("git://127.0.0.1:1", "https://gitlab.com")


@pytest.mark.parametrize(
    "text", ["o/r/../../etc", "https://github.com/o/r/tree/main/../../x", "o/r/a/%2e%2e/b"]
)
def test_a_path_that_climbs_out_of_the_repository_is_refused(text):
    with pytest.raises(UsageError, match=r"'\.\.'"):
        locate(text)
