"""Parsing only the statements a scan needs must find what the whole parse finds: the lexer's
statement starts are compared with the tree's, and the findings of both scans, on the
benchmark's scripts, on hand-written hard cases and attacks, and on generated scripts."""

from __future__ import annotations

import ast
import importlib.util
import random
import warnings

import pytest
from conftest import REPO_ROOT

from chimera_cards._scan.pyscan import _parse_and_scan_python, scan_python
from chimera_cards._scan.pystatements import parse_spanning, top_level


def tree_starts(text: str) -> list[int]:
    """The first line of every top-level statement of the whole parse (its first decorator's)
    that starts its line (``a = [\n]; b = 1``: ``b`` is in the piece of ``a``)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        body = ast.parse(text).body
    lines = text.split("\n")
    starts = set()
    for st in body:
        decorators = getattr(st, "decorator_list", None)
        first, column = (decorators[0], decorators[0].col_offset - 1) if decorators else (st, None)
        column = st.col_offset if column is None else column
        if not lines[first.lineno - 1][:column].strip():
            starts.add(first.lineno)
    return sorted(starts)


def findings(text: str, *, pieces: bool) -> list[dict]:
    return [f.to_dict() for f in _parse_and_scan_python("s/x.py", text, pieces=pieces)]


def same_as_whole(text: str) -> bool:
    """Assert the pieces give the whole parse's findings and, when the lexer is sure, exactly the
    tree's statement starts; returns whether it was sure."""
    starts = tree_starts(text)  # every script here parses as a whole
    table = top_level(text)
    if table is not None:
        assert table.lines == starts, text
    assert findings(text, pieces=True) == findings(text, pieces=False), text
    return table is not None


def load_skillgen():
    path = REPO_ROOT / "benchmarks" / "skillgen.py"
    spec = importlib.util.spec_from_file_location("skillgen", path)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_benchmark_scripts_parse_in_pieces_with_the_same_findings():
    skillgen = load_skillgen()
    rng = random.Random(11)
    for size in (9000, 7000, 6000, 300):
        text = skillgen.python_script(rng, size)
        assert same_as_whole(text)
        assert any(f["message"] == "calls subprocess.run" for f in findings(text, pieces=True))


# Each parses as a whole; a flagged call hides in or next to what could confuse a lexer.
HARD = [
    # Column-0 lines inside triple-quoted strings, both quotes, with quotes and escapes inside.
    'import subprocess\nDOC = """\nsubprocess.run(["in a string"])\ndef x():\n"""\n'
    'subprocess.run(["real"])\n',
    "X = '''\nelse:\n@d\n'''\nos.system('x')\n",
    'X = """a\\"""\nsubprocess.run(["in the string"])\n"""\nimport os\n',
    "X = '''''a'''\nimport subprocess\nsubprocess.call('x')\n",
    'X = """"""; Y = ""; Z = \'\'\nimport subprocess; subprocess.run([])\n',
    "X = '''a''' '''\nsubprocess.run([])\n'''\n",
    # Brackets over column-0 lines, shallow and deeper than the lexer's one-step groups.
    'import subprocess\nx = [\nsubprocess.run(["a"]),\n]\n',
    "x = f(g(h(i(j(k(\nsubprocess.run(['a'])\n))))))\nimport subprocess\n",
    "x = {\n'k': (\n1,\n# a ' comment\n),\n}\neval('1')\n",
    "w = (\n((((((\nsubprocess.run(['a'])\n))))))\n)\nimport subprocess\n",
    "x = [  # it's\n  1,\n]\nsubprocess.run([])\n",
    # Backslash continuations, outside and inside strings and brackets.
    "import subprocess\nx = 1 + \\\nsubprocess.run(['a']).returncode\n",
    "x = 1 if y \\\nelse subprocess.run([])\n",
    "x = (1 +\\\n2)\nos.system('x')\n",
    'x = "abc\\\nsubprocess.run()"\nsubprocess.run(["b"])\n',
    "x = 'a\\\\'\nsubprocess.run(['after an escaped backslash'])\n",
    "def f():\n    x = 1\n    \\\nsubprocess.run(['a'])\n",
    # Decorators, with blank and comment lines between them.
    "import subprocess\n@subprocess.run\n@other\ndef f():\n    pass\n",
    "@a\n\n# c\n@b\nclass K:\n    x = subprocess.run(['x'])\n",
    "@a(\n1)\nasync def f():\n    await asyncio.create_subprocess_shell('x')\n",
    # Clauses at column 0.
    "if x:\n    pass\nelse:\n    subprocess.run(['a'])\n",
    "if a:\n  b\nelif c:\n  subprocess.call(d)\nelse:\n  e\n",
    "try:\n    import subprocess as sp\nexcept ImportError:\n    sp = None\nfinally:\n"
    "    sp.run(['x'])\n",
    "try:\n  pass\nexcept* ValueError:\n  os.system('x')\n",
    "for i in x:\n  pass\nelse:\n  eval(i)\nwhile y:\n  pass\nelse :\n  exec(y)\n",
    "elsewhere = 1\nfinally_ = subprocess.run\nexcept_ = open('/etc/x', 'w')\n",
    "match x:\n    case [a] if eval(a):\n        import requests\n    case _:\n        pass\n",
    "case = 1\nmatch = 2\nos.system(case)\n",
    # Class bodies and nested definitions.
    "class C:\n    def m(self):\n        def inner():\n            return subprocess.run(['a'])\n"
    "        return inner\n",
    # Comments holding quotes and brackets.
    "import subprocess  # it's \"quoted\nsubprocess.run(['a'])  # '''\n# \"\"\"\nx = 1  # (\n",
    # Raw strings ending in backslash-quote forms, byte strings, f-strings.
    'x = r"\\\\"\nsubprocess.run(["a"])\n',
    'x = r"\\""\nsubprocess.run(["a"])\n',
    "x = r'\\''; y = rb'\\\\'\nsubprocess.run(['a'])\n",
    'x = r"""\\""""\nos.system("x")\n',
    "x = Br'''\\''''\ny = b'\\x00'\nsubprocess.run(['a'])\n",
    'x = f"{d[\'k\']}" f\'{subprocess.run(["in", "fstring"])}\'\n',
    'x = f"""\n{y}\nsubprocess.run(["no"])\n"""\nimport os\nos.system(x)\n',
    "x = rf'{a}\\' \\\\'\nimport subprocess as sp\nsp.Popen('x')\n",
    # Several statements on a line, no newline at the end, tabs, blank and comment lines.
    "import subprocess; subprocess.run(['a']); x = 1",
    "def f():\n\tsubprocess.run(['a'])\n\n\t# c\n\ng = 2\n",
    "# only\n\n   # comments\n",
    "x = 1\n# the last line, without a newline",
    "x = 1\n   ",
    '"""docstring only"""\n',
    "",
    # Aliases made in a nested block, used at the top.
    "if x:\n    from subprocess import run as go\ngo(['ls'])\n",
    "import base64\nexec(base64.b64decode('eA=='))\nK = '" + "ab12" * 60 + "'\n",
]


def test_hard_cases_parse_in_pieces_with_the_same_findings():
    sure = sum(same_as_whole(text) for text in HARD)
    assert sure >= len(HARD) - 3  # the lexer handles them, it does not just give up


# Scripts whose every statement start the lexer must refuse to guess (it parses them whole).
DOUBT = [
    "x = 1\n\\\ny = 2\n",  # a backslash starting a statement's line
    "x = 1\n\x0cdef f():\n    pass\n",  # a form feed resets the indentation
    "x = 1\n  \x0cdef f(): pass\n",
    "ｅｖａｌ('1')\n",  # a non-ASCII identifier
    "x = 'a'\r\ny = 2\n",  # CR is a line end
    "  x = 1\n",  # indented first statement
    "x = (\n",  # brackets still open
    "x = )\n",
    "x = '''\n",  # an unterminated string
    "x = 'a\ny = 2'\n",
    "x = 1 \\ y\n",  # a backslash not before a newline
]


def test_the_lexer_gives_up_where_it_cannot_be_sure():
    for text in DOUBT:
        assert top_level(text) is None, text


def test_non_ascii_in_strings_and_comments_keeps_the_pieces():
    text = "# héllo\nX = '🚀'\nimport subprocess\nsubprocess.run([X])  # —\n"
    assert same_as_whole(text)
    assert [f["line"] for f in findings(text, pieces=True)] == [3, 4]


# An attacker wants subprocess.run hidden from the scan; each script runs it for real.
ATTACKS = [
    # A string the lexer might think still open, hiding the call after it.
    "import subprocess\nx = 'a\\\\'\nsubprocess.run(['x'])\n",
    "import subprocess\nx = r'\\\\'\nsubprocess.run(['x'])\n",
    "import subprocess\nx = '''a\\\\'''\nsubprocess.run(['x'])\n",
    "import subprocess\nx = ''''''\nsubprocess.run(['x'])\n",
    # Quotes in a comment, a string with '#'.
    "import subprocess\n# '''\nsubprocess.run(['x'])\n# '''\n",
    "import subprocess\nx = '#'; subprocess.run(['x'])\n",
    # The call on a line the lexer might merge away or not look at.
    "import subprocess\n@d\n\n# c\n@subprocess.run(['x'])\ndef f(): pass\n",
    "import subprocess\nif 0:\n    pass\nelse:\n    subprocess.run(['x'])\n",
    "import subprocess\nx = 1 + \\\nsubprocess.run(['x']).returncode\n",
    "import subprocess\nx = [\n1,\n]; subprocess.run(['x'])\n",
    "import subprocess\n@subprocess.run(['x'])\ndef f(): pass\n",
    # An alias made where the lexer might not look.
    "try:\n    from subprocess import run as go\nexcept ImportError:\n    pass\ngo(['x'])\n",
    "x = '''\n'''; import subprocess as s\ns.run(['x'])\n",
    # A piece that would mean something else alone: Python refuses it alone, so the whole parse.
    "from __future__ import annotations\nimport subprocess\nsubprocess.run(['x'])\n",
]


def test_attacks_do_not_hide_a_call_from_the_pieces():
    for text in ATTACKS:
        assert same_as_whole(text)
        found = findings(text, pieces=True)
        assert any(
            f["rule"] == "code-exec" and f["message"].startswith("calls subprocess.") for f in found
        ), text


# Pieces a generated script is made of: strings of every form, calls, brackets, clauses.
PREFIXES = ["", "r", "b", "rb", "Br", "u", "R", "f", "rf", "F"]
UNITS = ["a", " ", "#", "(", "]", "{{", "}}", "\\\\", "\\'", '\\"', "\\n", "subprocess.run(['x'])"]
UNITS += ["\u00e9", "\U0001f680"]  # non-ASCII inside strings and comments keeps the pieces
NEWLINE_UNITS = ["\n", "\nsubprocess.run(['in a string'])\n", "\nelse:\n", "\n@d\n", "\\\n"]
COMMENT_BITS = ["'''", '"""', "it's", "'", '"', "(", "]", "\\", "\u2014"]
BETWEEN_DECORATORS = ["", "# c\n", "\n"]
CALLS = [
    "subprocess.run(['ls'])",
    "sp.run({s})",
    "go({s})",
    "os.system('x')",
    "eval(compile('1', 'x', 'exec'))",
    "exec(base64.b64decode({s}))",
    "Path('~/.x').write_text('k')",
    "open('/tmp/x', 'w')",
    "print({s})",
]


def literal(rng: random.Random) -> str:
    """A random string literal that Python accepts on its own."""
    while True:
        prefix = rng.choice(PREFIXES)
        quote = rng.choice(["'", '"', "'''", '"""'])
        units = UNITS + (NEWLINE_UNITS if len(quote) == 3 else ["\\\n"])
        if "f" in prefix.lower():
            units = [u for u in units if "\\" not in u] + ["{a}", "{d[0]}"]
        if "b" in prefix.lower():
            units = [u for u in units if u != "\\n" and u.isascii()]
        body = "".join(rng.choice(units) for _ in range(rng.randint(0, 6)))
        if len(quote) == 1:
            body = body.replace(quote, "\\" + quote).replace("\\\\" + quote, "\\" + quote)
        text = prefix + quote + body + quote
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                tree = ast.parse(text)
        except SyntaxError:
            continue
        if len(tree.body) == 1 and isinstance(tree.body[0], ast.Expr):
            return text


def statement(rng: random.Random, depth: int = 0) -> str:
    """A random top-level statement (or a few), possibly spanning column-0 lines."""

    def s() -> str:
        return literal(rng)

    def call() -> str:
        return rng.choice(CALLS).replace("{s}", s())

    choices = [
        lambda: f"x = {s()}",
        lambda: rng.choice(
            ["import subprocess", "import subprocess as sp", "import os, base64", "import json"]
        ),
        lambda: "from subprocess import run as go",
        call,
        lambda: f"y = [\n{call()},\n{s()}\n]",
        lambda: f"z = f(\n  a,\n{s()}, (\n{call()}))",
        lambda: f"w = ((((((\n{call()}\n))))))",
        lambda: f"u = (\n((((((\n{call()}\n))))))\n)",
        lambda: f"v = 1 + \\\n{call()}",
        lambda: f"a = 1; {call()}; b = {s()}",
        lambda: "x = 1  # " + rng.choice(COMMENT_BITS),
        lambda: "# a comment with " + rng.choice(COMMENT_BITS),
        lambda: "",
        lambda: f"if x:\n    {call()}\nelif y:\n    q = {s()}\nelse:\n    {call()}",
        lambda: (
            f"try:\n    {call()}\nexcept* E:\n    pass\nelse:\n    pass\nfinally:\n    {call()}"
        ),
        lambda: f"for i in x:\n    {call()}\nelse:\n    pass",
        lambda: (
            f"@{rng.choice(['d', 'subprocess.run', 'w(' + s() + ')'])}\n"
            + rng.choice(BETWEEN_DECORATORS)
            + f"@e\ndef f(a={s()}):\n    {call()}\n"
            f"    def g():\n        return {call()}"
        ),
        lambda: f"class K:\n    d = {s()}\n    def m(self):\n        {call()}",
        lambda: f"match m:\n    case {{'k': v}} if {call()}:\n        pass",
        lambda: f"with open('a') as h:\n\t{call()}",
        lambda: f"def h():\n    doc = {s()}\n    \\\n{call()}",
    ]
    return rng.choice(choices)()


@pytest.mark.slow
def test_generated_scripts_parse_in_pieces_with_the_same_findings():
    rng = random.Random(3)
    sure = flagged = 0
    for _ in range(2500):
        text = "\n".join(statement(rng) for _ in range(rng.randint(1, 8))) + rng.choice(
            ["\n", "", "\n\n# end\n"]
        )
        sure += same_as_whole(text)
        flagged += bool(findings(text, pieces=True))
    assert sure > 2400 and flagged > 2000  # the lexer is sure almost always; calls are found


def test_a_piece_that_does_not_parse_alone_is_doubt():
    # "<>" is an operator only after this future import: the piece alone is a SyntaxError,
    # which sends the scan to the whole parse.
    text = "from __future__ import barry_as_FLUFL\nx = 1 <> 2\n"
    table = top_level(text)
    assert table is not None
    try:
        parse_spanning(text, table, [1])
    except SyntaxError:
        pass
    else:
        raise AssertionError("the piece parsed alone")
    assert [f.to_dict() for f in scan_python("x.py", text)] == findings(text, pieces=False)


def test_a_script_that_does_not_parse_whole_reports_what_its_pieces_find():
    # Python refuses to run it; the statements naming a flagged word still parse alone.
    text = "import subprocess\nsubprocess.run(['x'])\nx = = 1\n"
    found = [(f.rule, f.line) for f in scan_python("x.py", text)]
    assert ("code-exec", 2) in found
