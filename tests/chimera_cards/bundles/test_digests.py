"""The three digests of a skill folder: npx's computedHash as the real ``skills`` CLI writes it,
the proposed skill_digest as docs/bundles.md's stand-alone script computes it, and how a pin names
its kind."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import REPO_ROOT

from chimera_cards._bundles.digests import (
    BUNDLE,
    NPX,
    SKILL_DIGEST,
    UnknownDigestError,
    collation_key,
    npx_hash,
    npx_hash_folder,
    parse_digest,
    skill_digest,
    skill_digest_folder,
)

DOCS = REPO_ROOT / "docs" / "bundles.md"


def _skill(root: Path, name: str, files: dict[str, bytes]) -> Path:
    folder = root / name
    (folder).mkdir(parents=True)
    (folder / "SKILL.md").write_text(f"---\nname: {name}\ndescription: The {name} skill.\n---\nx\n")
    for rel, data in files.items():
        path = folder / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    return folder


# Paths whose order differs between byte order and ICU's: capitals, '_' and '-' before letters,
# '.' after '-', digits after punctuation, nested folders, and what npx keeps and skips.
AWKWARD = {
    "README.md": b"readme",
    "_private.txt": b"underscore",
    "a-b.txt": b"dash",
    "a.b.txt": b"dot",
    "a_b.txt": b"lowdash",
    "AB.txt": b"capitals",
    "ab.txt": b"lower",
    "Zeta/x.txt": b"capital folder",
    "scripts/run.sh": b"echo hi\n",
    "scripts/Run2.sh": b"echo two\n",
    "9lives.txt": b"digit",
    ".DS_Store": b"litter npx hashes",
    "node_modules/dep/index.js": b"skipped by npx",
    "__pycache__/x.pyc": b"kept by the hash, skipped by its copy",
}


@pytest.mark.slow
def test_npx_hash_is_the_computed_hash_the_real_cli_writes(skills_cli, tmp_path):
    src = tmp_path / "src" / "skills"
    _skill(src, "awkward", AWKWARD)
    _skill(src, "plain", {})
    project, home = tmp_path / "project", tmp_path / "home"
    project.mkdir()
    home.mkdir()
    args = ["add", str(src.parent), "--agent", "claude-code", "--copy", "-y"]
    done = skills_cli.run(args, project, home)
    assert done.returncode == 0, done.stdout + done.stderr
    lock = json.loads((project / "skills-lock.json").read_text())["skills"]
    assert set(lock) == {"awkward", "plain"}
    for name in lock:
        assert npx_hash_folder(src / name) == lock[name]["computedHash"], name


def test_collation_orders_ascii_paths_as_icu_root():
    # The order Node 24's localeCompare gives these paths (read off it once).
    node_order = [
        "_private.txt", "9lives.txt", "a-b.txt", "a_b.txt", "a.b.txt", "ab.txt", "AB.txt",
        "README.md", "scripts/run.sh", "scripts/Run2.sh", "SKILL.md", "Zeta/x.txt",
    ]  # fmt: skip
    assert sorted(node_order, key=collation_key) == sorted(reversed(node_order), key=collation_key)
    assert sorted(node_order, key=collation_key)[0] == "_private.txt"
    assert sorted(["b", "A", "a", "B"], key=collation_key) == ["a", "A", "b", "B"]


def test_npx_hash_concatenates_path_and_bytes_without_separators():
    import hashlib

    assert npx_hash([("b", b"2"), ("a", b"1")]) == hashlib.sha256(b"a1b2").hexdigest()


def _docs_script(name: str) -> str:
    text = DOCS.read_text(encoding="utf-8")
    match = re.search(rf"```python\n(# {re.escape(name)}\n.*?)```", text, re.S)
    assert match, f"docs/bundles.md has no ```python block starting '# {name}'"
    return match.group(1)


@pytest.mark.parametrize(
    ("script", "ours"),
    [("npx-computed-hash.py", npx_hash_folder), ("skill-digest.py", skill_digest_folder)],
)
def test_each_digest_is_what_the_stand_alone_script_in_the_docs_prints(tmp_path, script, ours):
    folder = _skill(tmp_path, "awkward", {k: v for k, v in AWKWARD.items()})
    (folder / "SKILL.sig").write_bytes(b"a signature the skill_digest leaves out")
    path = tmp_path / script
    path.write_text(_docs_script(script))
    out = subprocess.run(
        [sys.executable, str(path), str(folder)],
        check=False,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == ours(folder)


def test_skill_digest_leaves_out_the_signature_and_git_only():
    base = [("SKILL.md", b"x"), ("a/b", b"y")]
    assert skill_digest(base) == skill_digest([*base, ("SKILL.sig", b"s"), (".git/HEAD", b"h")])
    assert skill_digest(base) != skill_digest([*base, (".DS_Store", b"d")])
    assert re.fullmatch(r"sha256-[A-Za-z0-9_-]{43}", skill_digest(base))


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ("a" * 64, BUNDLE),
        ("bundle:" + "A" * 64, BUNDLE),
        ("sha256:" + "b" * 64, BUNDLE),
        ("npx:" + "c" * 64, NPX),
        ("sha256-" + "d" * 43, SKILL_DIGEST),
        ("skill_digest:sha256-" + "_" * 43, SKILL_DIGEST),
    ],
)
def test_a_digest_is_named_by_its_prefix(text, kind):
    assert parse_digest(text).kind == kind


@pytest.mark.parametrize(
    "text", ["md5:" + "a" * 32, "npx:" + "a" * 63, "npx:sha256-" + "a" * 43, "sha256-short", ""]
)
def test_a_digest_of_unknown_kind_or_shape_is_a_usage_error(text):
    with pytest.raises(UnknownDigestError):
        parse_digest(text)
