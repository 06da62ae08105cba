"""The Python pre-filter and the per-content cache must not change a single finding."""

from __future__ import annotations

import random

from chimera_cards.bundle import bundle_from_files
from chimera_cards.codescan import (
    ScanCache,
    _parse_and_scan_python,
    _python_may_flag,
    scan_bundle,
    scan_python,
)

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


def programs(count: int, seed: int = 5):
    rng = random.Random(seed)
    for _ in range(count):
        yield "\n".join(rng.choice(FRAGMENTS) for _ in range(rng.randint(1, 6))) + "\n"
    yield from FRAGMENTS


def test_python_prefilter_gives_the_findings_of_the_full_parse():
    skipped = 0
    for src in programs(3000):
        fast = [f.to_dict() for f in scan_python("s/x.py", src)]
        full = [f.to_dict() for f in _parse_and_scan_python("s/x.py", src)]
        assert fast == full, src
        skipped += not _python_may_flag(src)
    assert skipped > 100  # the filter does skip scripts (else this test proves nothing)


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
