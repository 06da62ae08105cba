"""Sources as people paste them, end to end: ``owner/repo[@skill]`` and web URLs cloned from a
real ``git daemon`` (the host base pointed at it), marketplaces per plugin, and sites publishing
``/.well-known/agent-skills`` over a real HTTP server. Whatever crossed the network arrives
tainted and pending."""

from __future__ import annotations

import hashlib
import io
import json
import zipfile

import pytest
from click.testing import CliRunner
from conftest import card_text, git, make_card, make_git_repo, make_skill

from chimera_cards._bundles.bundle import read_bundle_dir
from chimera_cards._cli.app import main
from chimera_cards._importer.pipeline import import_source
from chimera_cards._importer.update import update
from chimera_cards._sources.find import find_skills, list_source
from chimera_cards._sources.locate import GitHosts
from chimera_cards._sources.marketplace import MarketplaceError
from chimera_cards._sources.wellknown import DISCOVERY_SCHEMA_V2, WellKnownError
from chimera_cards.errors import UsageError


def run(*args, env=None):
    result = CliRunner().invoke(main, [str(a) for a in args], env=env)
    if result.exception and not isinstance(result.exception, SystemExit):
        raise result.exception
    return result


@pytest.fixture
def hosted(git_server):
    """``acme/skills`` on the daemon, the way a GitHub repository of skills looks."""
    repo = git_server.root / "acme" / "skills.git"
    make_skill(repo / "skills", "pdf-tools", {"scripts/run.sh": ("echo hi\n", True)})
    make_card(repo / "skills", "web-search")
    (repo / "README.md").write_text("skills\n")
    make_git_repo(repo)
    git(repo, "tag", "v1")
    return GitHosts(github=f"git://127.0.0.1:{git_server.port}")


def test_owner_repo_at_skill_imports_that_skill_only_and_tainted(store, hosted):
    results = import_source(store, "acme/skills@web-search", hosts=hosted)
    assert [(r.name, r.status, r.provenance) for r in results] == [
        ("web-search", "pending", "tainted")
    ]
    version = store.versions(name="web-search")[0]
    assert version.source["url"] == f"{hosted.github}/acme/skills.git"
    assert store.versions(name="pdf-tools") == []


def test_a_web_tree_url_imports_the_folder_it_names_at_its_ref(store, hosted, git_server):
    repo = git_server.root / "acme" / "skills.git"
    (repo / "skills" / "pdf-tools" / "scripts" / "run.sh").write_text("echo changed\n")
    git(repo, "commit", "-qam", "after v1")
    url = "https://github.com/acme/skills/tree/v1/skills/pdf-tools"
    [result] = import_source(store, url, hosts=hosted)
    assert (result.name, result.status) == ("pdf-tools", "pending")
    bundle = store.get_bundle(store.versions(name="pdf-tools")[0])
    assert bundle.contents["scripts/run.sh"] == b"echo hi\n"  # v1's bytes, not main's
    assert store.versions(name="pdf-tools")[0].source["ref"] == "v1"


def test_a_path_that_holds_no_skill_is_refused_naming_it(store, hosted):
    with pytest.raises(UsageError, match="no skill at 'docs'"):
        import_source(store, "acme/skills/docs", hosts=hosted)
    assert store.versions() == []


def test_the_cli_takes_shorthands_through_the_host_base_variable(tmp_path, hosted):
    db = tmp_path / "cards.db"
    env = {"CHIMERA_CARDS_GITHUB_URL": hosted.github}
    result = run("import", "acme/skills@pdf-tools", "--store", db, env=env)
    assert result.exit_code == 0, result.output
    assert "pdf-tools" in result.stdout and "pending" in result.stdout


def test_import_list_shows_what_a_source_holds_and_stores_nothing(tmp_path, hosted):
    db = tmp_path / "cards.db"
    env = {"CHIMERA_CARDS_GITHUB_URL": hosted.github}
    result = run("import", "acme/skills", "--list", "--store", db, "--json", env=env)
    assert result.exit_code == 0, result.output
    listed = json.loads(result.stdout)
    assert [(e["name"], e["folder"], e["network"]) for e in listed] == [
        ("pdf-tools", "skills/pdf-tools", True),
        ("web-search", "skills/web-search", True),
    ]
    assert all(len(e["digest"]) == 64 for e in listed)
    assert not db.exists()
    text = run("import", "acme/skills", "--list", "--store", db, env=env)
    assert "2 skill(s) in acme/skills (from the network" in text.stdout


def marketplace_repo(root):
    """Two plugins (one lists a skill by path, one uses its skills/ folder) and a template."""
    make_card(root / "plugins" / "docs" / "skills", "pdf-tools")
    make_card(root / "plugins" / "docs" / "extra", "docx-tools")
    make_card(root / "plugins" / "search" / "skills", "web-search")
    make_card(root / "template", "template-skill")
    manifest = {
        "name": "acme-market",
        "plugins": [
            {"name": "docs", "source": "./plugins/docs", "skills": ["./extra/docx-tools"]},
            {"name": "search", "source": "./plugins/search"},
            {"name": "remote", "source": {"source": "github", "repo": "x/y"}},
        ],
    }
    (root / ".claude-plugin").mkdir(parents=True)
    (root / ".claude-plugin" / "marketplace.json").write_text(json.dumps(manifest))
    return root


def test_a_marketplace_brings_only_what_its_plugins_list_grouped_by_plugin(tmp_path, git_server):
    repo = make_git_repo(marketplace_repo(git_server.root / "market.git"))
    hosts = GitHosts(github=f"git://127.0.0.1:{git_server.port}")
    entries = list_source(git_server.url("market.git"), hosts=hosts)
    assert [(e.name, e.plugin) for e in entries] == [
        ("docx-tools", "docs"),
        ("pdf-tools", "docs"),
        ("web-search", "search"),
    ]  # template-skill is in no plugin: not part of the marketplace
    assert repo.exists()


def test_import_plugin_picks_one_plugin_and_records_it(store, tmp_path):
    folder = marketplace_repo(tmp_path / "market")
    results = import_source(store, str(folder), plugin="docs")
    assert sorted(r.name for r in results) == ["docx-tools", "pdf-tools"]
    assert {v.source["plugin"] for v in store.versions()} == {"docs"}
    with pytest.raises(UsageError, match=r"no plugin named 'nope' \(found: docs, search\)"):
        import_source(store, str(folder), plugin="nope")


def test_list_groups_imported_skills_under_their_plugin(tmp_path):
    db = tmp_path / "cards.db"
    folder = marketplace_repo(tmp_path / "market")
    assert run("import", folder, "--store", db).exit_code == 0
    assert run("import", make_card(tmp_path / "solo", "loner"), "--store", db).exit_code == 0
    lines = run("list", "--store", db).stdout.splitlines()
    assert lines[0].startswith("loner")
    assert lines[1] == "plugin docs:" and lines[4] == "plugin search:"
    assert lines[2].lstrip().startswith("docx-tools") and lines[2].startswith("  ")


def test_plugin_on_a_plain_folder_is_a_usage_error(store, tmp_path):
    make_card(tmp_path / "plain", "one")
    with pytest.raises(UsageError, match="not a plugin marketplace"):
        import_source(store, str(tmp_path / "plain"), plugin="docs")


def test_a_broken_marketplace_manifest_refuses_the_source(tmp_path):
    folder = marketplace_repo(tmp_path / "market")
    (folder / ".claude-plugin" / "marketplace.json").write_text("{not json")
    with pytest.raises(MarketplaceError, match="not valid JSON"):
        find_skills(str(folder))


def test_a_marketplace_plugin_source_that_climbs_out_is_ignored(tmp_path):
    folder = marketplace_repo(tmp_path / "market")
    doc = {"plugins": [{"name": "evil", "source": "../../elsewhere"}]}
    (folder / ".claude-plugin" / "marketplace.json").write_text(json.dumps(doc))
    assert find_skills(str(folder)) == []


# -- .well-known/agent-skills ------------------------------------------------------------------


def test_a_site_index_v1_imports_each_listed_skill_tainted(store, card_server):
    base = "/.well-known/agent-skills"
    index = {
        "skills": [
            {"name": "site-helper", "description": "Helps.", "files": ["SKILL.md", "ref/a.md"]},
        ]
    }
    card_server.serve(f"{base}/index.json", json.dumps(index), content_type="application/json")
    card_server.serve(f"{base}/site-helper/SKILL.md", card_text("site-helper"))
    card_server.serve(f"{base}/site-helper/ref/a.md", "# A\n")
    results = import_source(store, card_server.url("/"))
    assert [(r.name, r.status, r.provenance) for r in results] == [
        ("site-helper", "pending", "tainted")
    ]
    bundle = store.get_bundle(store.versions(name="site-helper")[0])
    assert sorted(bundle.contents) == ["SKILL.md", "ref/a.md"]


def _v2_site(card_server, artifact: bytes, kind: str, digest: str | None = None):
    path = "/skills/helper.zip" if kind == "archive" else "/skills/helper.md"
    card_server.serve(path, artifact, content_type="application/octet-stream")
    entry = {
        "name": "v2-helper",
        "description": "Helps.",
        "type": kind,
        "url": path,
        "digest": digest or "sha256:" + hashlib.sha256(artifact).hexdigest(),
    }
    index = {"$schema": DISCOVERY_SCHEMA_V2, "skills": [entry]}
    card_server.serve(
        "/docs/.well-known/agent-skills/index.json", json.dumps(index), content_type="text/json"
    )
    return card_server.url("/docs/")


def test_a_site_index_v2_skill_md_is_checked_against_its_digest(store, card_server):
    url = _v2_site(card_server, card_text("v2-helper").encode(), "skill-md")
    [result] = import_source(store, url)
    assert (result.name, result.status) == ("v2-helper", "pending")


def test_a_site_index_v2_archive_is_read_as_one_skill(store, card_server, tmp_path):
    skill = make_skill(tmp_path, "v2-helper", {"scripts/x.py": "print(1)\n"})
    data = io.BytesIO()
    with zipfile.ZipFile(data, "w") as zf:
        for f in sorted(skill.rglob("*")):
            if f.is_file():
                zf.write(f, f"v2-helper/{f.relative_to(skill)}")
    url = _v2_site(card_server, data.getvalue(), "archive")
    [result] = import_source(store, url)
    assert result.ok and result.status == "pending"
    assert store.versions(name="v2-helper")[0].digest == read_bundle_dir(skill).digest


def test_an_artifact_whose_bytes_miss_the_index_digest_is_refused(store, card_server):
    url = _v2_site(card_server, card_text("v2-helper").encode(), "skill-md", "sha256:" + "0" * 64)
    [result] = import_source(store, url)
    assert not result.ok and "the index says sha256:000" in result.error
    assert store.versions() == []


def test_an_explicit_well_known_url_without_an_index_is_refused(card_server):
    with pytest.raises(WellKnownError, match="no usable discovery index"):
        find_skills(card_server.url("/.well-known/agent-skills/"))


def test_a_site_without_an_index_is_fetched_as_one_card_as_before(store, card_server):
    url = card_server.serve("/card", card_text("plain-card"))
    [result] = import_source(store, url)
    assert (result.name, result.status) == ("plain-card", "pending")


def test_update_refetches_a_well_known_skill_and_holds_new_bytes(store, card_server):
    card_server.serve(
        "/.well-known/agent-skills/index.json",
        json.dumps(
            {"skills": [{"name": "site-helper", "description": "d", "files": ["SKILL.md"]}]}
        ),
    )
    card_server.serve("/.well-known/agent-skills/site-helper/SKILL.md", card_text("site-helper"))
    import_source(store, card_server.url("/"))
    card_server.serve(
        "/.well-known/agent-skills/site-helper/SKILL.md",
        card_text("site-helper", description="Changed at the origin."),
    )
    [result] = update(store, ["site-helper"])
    assert result.state == "imported"
    assert [v.status for v in store.versions(name="site-helper")] == ["pending", "pending"]


def test_a_shorthand_that_is_neither_a_path_nor_a_repository_says_both(tmp_path, git_server):
    db = tmp_path / "cards.db"
    env = {"CHIMERA_CARDS_GITHUB_URL": f"git://127.0.0.1:{git_server.port}"}
    result = run("import", "nobody/nothing", "--store", db, env=env)
    assert result.exit_code == 1
    [line] = result.stderr.strip().splitlines()
    assert line.startswith("error: nobody/nothing: read as the repository git://127.0.0.1:")
    assert "(no such local path either)" in line
