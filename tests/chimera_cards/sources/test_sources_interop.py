"""Sources npx accepts are read as npx reads them: an Azure Repos URL is a git repository
(``…/_git/REPO``, ``version=GB…``/``GT…`` the ref, ``path=`` the folder), not a plain URL to
fetch; a ``file://`` URL is a repository on this machine; and a failed clone keeps every line git
said (ssh's reason comes before git's "fatal:"), as one ``error:`` line."""

from __future__ import annotations

import socket

import pytest
from click.testing import CliRunner
from conftest import make_git_repo, make_skill

from chimera_cards._cli.app import main
from chimera_cards._sources.find import find_skills
from chimera_cards._sources.gitsource import GitError
from chimera_cards._sources.locate import Located, locate


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.mark.parametrize(
    ("url", "located"),
    [
        (
            "https://dev.azure.com/org/proj/_git/skills?path=/skills/pdf&version=GBmain",
            Located("https://dev.azure.com/org/proj/_git/skills", "main", "skills/pdf"),
        ),
        (
            "https://org.visualstudio.com/proj/_git/my%20repo?version=GTv1.2",
            Located("https://org.visualstudio.com/proj/_git/my%20repo", "v1.2", ""),
        ),
        (
            "https://user@dev.azure.com/org/proj/_git/skills.git",
            Located("https://user@dev.azure.com/org/proj/_git/skills", None, ""),
        ),
    ],
)
def test_an_azure_repos_url_names_its_repository_ref_and_folder(url, located):
    assert locate(url) == located


def test_an_azure_repos_url_is_cloned_with_git_not_fetched_as_a_page():
    port = _closed_port()
    url = f"http://127.0.0.1:{port}/org/proj/_git/skills?path=/skills/pdf&version=GBmain"
    with pytest.raises(GitError) as info:
        find_skills(url, timeout=10)
    message = str(info.value)
    assert f"127.0.0.1:{port}/org/proj/_git/skills" in message  # the clone URL, query gone
    assert "git clone failed" in message and "Failed to connect" in message


def test_a_failed_ssh_clone_keeps_every_line_git_printed(tmp_path):
    port = _closed_port()
    result = CliRunner().invoke(
        main,
        ["import", f"ssh://git@127.0.0.1:{port}/skills.git", "--store", str(tmp_path / "s.db")],
    )
    assert result.exit_code == 1
    [line] = result.stderr.splitlines()
    assert line.startswith("error: ")
    assert "Connection refused" in line and "Could not read from remote repository" in line
    assert not (tmp_path / "s.db").exists() or "Traceback" not in result.output


def test_a_file_url_is_a_repository_on_this_machine(tmp_path, store):
    from chimera_cards._importer.pipeline import import_source

    repo = make_git_repo(make_skill(tmp_path / "repo" / "skills", "pdf-tools").parent.parent)
    [result] = import_source(store, f"file://{repo}")
    assert result.outcome == "imported" and result.provenance == "clean"
    [version] = store.versions(name="pdf-tools")
    assert version.source["kind"] == "git" and version.source["url"] == f"file://{repo}"
