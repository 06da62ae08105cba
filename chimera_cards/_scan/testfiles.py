"""Code in a skill's test files that nothing in the skill runs: listed, not flagged.

A skill published from its developer's repository often ships that repository's tests
(`scripts/tests/test_connectors.py` calling `exec` on the code the tool generates,
`__tests__/selector.test.js` asserting that `eval(` in a selector is refused). A test runs under
a test runner; an agent runs what the skill tells it to run. When no other file of the skill
names a test runner or the test file (SKILL.md, a page, a script, a Makefile, a package's install
hooks), what the test's code would do when run is a question about code nobody runs: its
warnings are listed (info) with that said. A test the skill does run (`npx vitest bench --run
tests/logs.bench.ts` in a page, `pytest` in a script, `"prepare": "npm test"`) keeps them, and
errors (a credential store sent, downloaded code run) are never touched: the rule is about which
questions a reviewer must answer, not about trusting a folder name.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping

from chimera_cards._scan.findings import INFO, WARNING, Finding

# What a test's code does when it runs (not what an agent reads in it: a prompt injection in a
# test file is read like any other text).
_RUN_RULES = frozenset(
    {
        "code-eval",
        "code-obfuscation",
        "code-write-outside",
        "network-send",
        "credential-access",
        "persistence",
        "remote-install",
        "sql-from-input",
    }
)
_TEST_FILE_RE = re.compile(
    r"(?:^|/)(?:tests?|__tests__|spec|specs)/"
    r"|(?:^|/)(?:test_[^/]*\.py|[^/]*_test\.(?:py|go)|conftest\.py|"
    r"[^/]*\.(?:test|spec|bench)\.[cm]?[jt]sx?)$"
)
_RUNNER_RE = re.compile(
    r"\b(?:pytest|py\.test|unittest|nose2|tox|nox|vitest|jest|mocha|ava|rspec|phpunit|ctest)\b"
    r"|\b(?:npm|pnpm|yarn|bun)\s+(?:run\s+)?test\b|\b(?:go|cargo|deno|bun|dotnet|mix)\s+test\b"
    r"|\bmake\s+(?:test|check)\b",
    re.IGNORECASE,
)
# Files that configure a runner or list packages: naming one there runs nothing.
_CONFIG_RE = re.compile(
    r"(?:^|/)(?:package-lock\.json|pyproject\.toml|setup\.cfg|tox\.ini|pytest\.ini|uv\.lock|"
    r"poetry\.lock|yarn\.lock|pnpm-lock\.yaml|requirements[^/]*\.txt|Cargo\.(?:toml|lock)|"
    r"go\.(?:mod|sum)|tsconfig[^/]*\.json|[^/]*\.config\.[cm]?[jt]s|\.[^/]*rc(?:\.json)?)$"
)
# Programs in a language other than the shell's, and their lines that start another program.
_PROGRAM_RE = re.compile(r"\.(?:py|pyw|[cm]?[jt]sx?|rb|pl|go|rs|java|kt|php|lua)$")
_STARTS_RE = re.compile(
    r"\b(?:subprocess|system|popen|spawn\w*|exec\w*|run|call|check_output|Popen)\s*\(|"
    r"\b(?:pytest|unittest)\.main\b|`"
)
# package.json scripts npm runs by itself on install or publish.
_LIFECYCLE = ("preinstall", "install", "postinstall", "prepare", "prepublish", "prepack")


def is_test_file(path: str) -> bool:
    """Whether a bundle path is a test by where it is or how it is named."""
    return _TEST_FILE_RE.search(path.replace("\\", "/")) is not None


def _runs_tests(path: str, text: str, tests: Iterable[str]) -> bool:
    """Whether a (non-test) file of the skill starts a test runner or names a test file."""
    if path.replace("\\", "/").rsplit("/", 1)[-1] == "package.json":
        try:
            scripts = json.loads(text).get("scripts") or {}
        except (ValueError, AttributeError):
            scripts = {}
        hooks = scripts if isinstance(scripts, dict) else {}
        text = "\n".join(str(hooks.get(name, "")) for name in _LIFECYCLE)
    elif _CONFIG_RE.search(path):
        return False
    elif _PROGRAM_RE.search(path):
        # A program's comments and docstrings are notes for its developer ("Run tests: uv run
        # pytest …"): it starts a runner only from a line that runs something.
        text = "\n".join(line for line in text.split("\n") if _STARTS_RE.search(line))
    if _RUNNER_RE.search(text):
        return True
    return any(name in text for name in tests)


def list_unrun_tests(contents: Mapping[str, bytes], findings: Iterable[Finding]) -> None:
    """Make each run-time warning of a test file that nothing in the skill runs info, in place.

    Args:
        contents: the bundle's files by path (relative to the skill's folder).
        findings: the skill's findings; a finding's path may carry the folder in front.
    """
    findings = list(findings)
    flagged = [
        f
        for f in findings
        if f.severity == WARNING and f.rule in _RUN_RULES and is_test_file(f.path or "")
    ]
    if not flagged:
        return
    tests = [p for p in contents if is_test_file(p)]
    names = {p.rsplit("/", 1)[-1] for p in tests}
    for path, data in contents.items():
        if path in tests:
            continue
        text = data.decode("utf-8", "replace") if b"\0" not in data[:8192] else ""
        if text and _runs_tests(path, text, names):
            return
    for finding in flagged:
        finding.severity = INFO
        finding.message = f"in a test nothing in the skill runs: {finding.message}"
