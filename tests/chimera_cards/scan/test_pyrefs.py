"""The references of a Python script, resolved the way the flow analysis folds names."""

from __future__ import annotations

import pytest

from chimera_cards._scan.pyrefs import python_refs


def names(text: str, kind: str) -> set[str]:
    return {r.name for r in python_refs("x.py", text).refs if r.kind == kind}


@pytest.mark.parametrize(
    ("text", "kind", "name"),
    [
        ("import os as o\no._exit(0)\n", "call", "os._exit"),
        ("from os import _exit as e\ne(0)\n", "call", "os._exit"),
        ("import os\nx = os._exit\nx(0)\n", "call", "os._exit"),
        ("getattr(__import__('o' + 's'), '_ex' + 'it')(0)\n", "name", "os._exit"),
        ("import importlib\nimportlib.import_module('g' + 'c')\n", "import", "gc"),
        ("import os\nvars(os)['_exit'](0)\n", "name", "os._exit"),
        ("__builtins__['__import__']('gc')\n", "name", "builtins.__import__"),
        ("import sys\nsys.modules['_pytest.runner'] = None\n", "store", "sys.modules"),
        ("import sys\ndel sys.modules['x']\n", "delete", "sys.modules"),
        ("import os\nsetattr(os, '_exit', print)\n", "store", "os._exit"),
        ("exec('import gc\\ngc.get_objects()')\n", "call", "gc.get_objects"),
        (
            "import base64\nexec(base64.b64decode('aW1wb3J0IGdjOyBnYy5nZXRfb2JqZWN0cygp'))\n",
            "call",
            "gc.get_objects",
        ),
        ("open('/proc/self/' + 'fd')\n", "string", "/proc/self/fd"),
        ("f = lambda: 0\nf.__code__ = g.__code__\n", "store", "f.__code__"),
        ("class A:\n    __eq__ = lambda s, o: True\n", "define", "__eq__"),
    ],
)
def test_a_name_is_resolved_however_it_is_spelled(text, kind, name):
    assert name in names(text, kind)


def test_a_name_built_at_run_time_is_a_dynamic_reference():
    refs = python_refs("x.py", "import os\ndef f(n):\n    getattr(os, n)(0)\n    exec(n)\n").refs
    dynamic = {(r.name, r.line) for r in refs if r.kind == "dynamic"}
    assert dynamic == {("getattr:os", 3), ("exec", 4)}


def test_a_reference_knows_its_line_and_scope():
    refs = python_refs("x.py", "import os\n\nclass A:\n    def f(self):\n        os._exit(0)\n")
    (call,) = [r for r in refs.refs if r.kind == "call"]
    assert (call.line, call.scope, call.last) == (5, "A.f", "_exit")


def test_a_docstring_is_not_a_string_the_code_builds():
    text = '"""Reads /proc/self/fd, in words only."""\n'
    assert names(text, "string") == set()


def test_text_that_does_not_parse_has_no_tree():
    refs = python_refs("x.py", "def (:\n")
    assert refs.tree is None and refs.refs == []


@pytest.mark.parametrize(
    "text",
    [
        "import sys\nsys.modules['os']._exit(0)\n",
        "import os\nvars(os).get('_exit')(0)\n",
        "import os\nos.__dict__.get('_ex' + 'it')(0)\n",
        "import sys\nsys.modules.get('o' + 's')._exit(0)\n",
    ],
)
def test_a_module_reached_through_its_namespace_is_resolved(text):
    found = names(text, "name") | names(text, "call")
    assert "os._exit" in found, found
