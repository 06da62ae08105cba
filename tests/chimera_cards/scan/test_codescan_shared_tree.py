"""The bundle scan parses each Python script once and hands the tree to both the code scan and
the detection pass: a scan given the tree must report what a scan that parses for itself does."""

from __future__ import annotations

import pytest
from test_codescan_prefilter import FRAGMENTS, IMPORTS, SHAPES, programs

from chimera_cards._scan.pyscan import scan_python
from chimera_cards._scan.pyshapes import parse_python

# Non-ASCII text in strings and comments (the pieces path still applies), and in an identifier.
NON_ASCII = ["msg = 'café — naïve'", "# ünïcode comment", "ｅｖａｌ('1')", "x = '→'; os.system(x)"]


@pytest.mark.parametrize("fragments", [FRAGMENTS, SHAPES, IMPORTS + NON_ASCII + SHAPES])
def test_scan_given_the_tree_reports_what_a_scan_parsing_itself_does(fragments):
    compared = 0
    for src in programs(300, seed=11, fragments=fragments):
        tree = parse_python(src)
        if tree is None:
            continue
        given = [f.to_dict() for f in scan_python("s/x.py", src, tree=tree)]
        assert given == [f.to_dict() for f in scan_python("s/x.py", src)], src
        compared += 1
    assert compared > 50  # most programs parse, so the tree path is exercised
