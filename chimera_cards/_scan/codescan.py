"""None"""

from __future__ import annotations

import ast
import gc
import hashlib
import math
import os
import re
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path

from chimera_cards._bundles.bundle import SKILL_FILE, Bundle, BundleError, read_bundle_dir
from chimera_cards._bundles.manifest import BundleFile
from chimera_cards._cards.card import (
    Card,
    CardParseError,
    CardReadError,
    find_card_files,
    parse_card,
)
from chimera_cards._scan.detect import DetectFile, detect_files
from chimera_cards._scan.findings import ERROR, INFO, WARNING, Finding
from chimera_cards._scan.innerfiles import carried_files
from chimera_cards._scan.linerules import _GENERIC_RULES, _SHELL_RULES, _scan_lines
from chimera_cards._scan.lint import (
    LintReport,
    is_markdown_path,
    lint_card,
    lint_paths,
    lint_text,
    resolve_profile,
)
from chimera_cards._scan.opaquecode import (
    bytecode_findings,
    is_bytecode,
    is_pickle_path,
    pickle_findings,
)
from chimera_cards._scan.ownservice import list_own_service_sends
from chimera_cards._scan.owntools import list_own_tool_installs
from chimera_cards._scan.pdfwords import pdf_words
from chimera_cards._scan.pyscan import scan_python
from chimera_cards._scan.pyshapes import parse_python
from chimera_cards._scan.testfiles import list_unrun_tests

CODE_RULES: dict[str, str] = {
    "code-network": "A script opens network connections or downloads (info for the reviewer).",
    "code-exec": "A script runs other programs (info for the reviewer).",
    "code-eval": "A script runs code built at run time (eval, exec, compile, dynamic import).",
    "code-write-outside": "A script writes or deletes outside the skill folder.",
    "code-obfuscation": "A long base64/hex blob or a decode-then-run pattern in a script.",
    "binary-file": "A binary file, listed with its size, type and SHA-256.",
    "binary-opaque": (
        "A binary of no known format whose bytes read as random (encrypted or packed)."
    ),
    "binary-executable": "A native executable (ELF, Mach-O, PE) shipped inside the skill.",
    "archive-unread": (
        "Part of an archive the skill ships was not read (past a member, size or inflation "
        "limit, encrypted, nested too deep): nobody has reviewed those bytes."
    ),
    "pickle-code": (
        "A pickle that names a callable able to run commands, code or network calls: loading it"
        " calls that."
    ),
    "malware-signature": "A file carrying the antivirus test signature (EICAR).",
}

SCRIPT_EXTENSIONS = {
    ".py": "python",
    ".pyw": "python",
    ".sh": "shell",
    ".bash": "shell",
    ".zsh": "shell",
    ".ksh": "shell",
    ".js": "javascript",
    ".mjs": "javascript",
    ".cjs": "javascript",
    ".ts": "javascript",
    ".rb": "ruby",
    ".pl": "perl",
    ".ps1": "powershell",
    ".bat": "batch",
    ".cmd": "batch",
}
_SHEBANG_LANGUAGES = (
    ("python", "python"),
    ("bash", "shell"),
    ("zsh", "shell"),
    ("ksh", "shell"),
    ("dash", "shell"),
    ("/sh", "shell"),
    (" sh", "shell"),
    ("node", "javascript"),
    ("deno", "javascript"),
    ("ruby", "ruby"),
    ("perl", "perl"),
    ("pwsh", "powershell"),
)

_MAGIC: tuple[tuple[bytes, int, str], ...] = (
    (b"\x7fELF", 0, "ELF executable"),
    (b"\xcf\xfa\xed\xfe", 0, "Mach-O executable"),
    (b"\xce\xfa\xed\xfe", 0, "Mach-O executable"),
    (b"\xca\xfe\xba\xbe", 0, "Mach-O universal binary"),
    (b"MZ", 0, "PE/DOS executable"),
    (b"\x00asm", 0, "WebAssembly module"),
    (b"\x89PNG\r\n\x1a\n", 0, "PNG image"),
    (b"\xff\xd8\xff", 0, "JPEG image"),
    (b"GIF8", 0, "GIF image"),
    (b"RIFF", 0, "RIFF (WebP/WAV/AVI)"),
    (b"%PDF-", 0, "PDF document"),
    (b"PK\x03\x04", 0, "zip archive"),
    (b"\x1f\x8b", 0, "gzip data"),
    (b"BZh", 0, "bzip2 data"),
    (b"\xfd7zXZ\x00", 0, "xz data"),
    (b"7z\xbc\xaf\x27\x1c", 0, "7-zip archive"),
    (b"ustar", 257, "tar archive"),
    (b"SQLite format 3\x00", 0, "SQLite database"),
    (b"wOFF", 0, "WOFF font"),
    (b"wOF2", 0, "WOFF2 font"),
    (b"\x00\x01\x00\x00", 0, "TrueType font"),
    (b"OTTO", 0, "OpenType font"),
)
NATIVE = ("ELF executable", "Mach-O executable", "Mach-O universal binary", "PE/DOS executable")


@dataclass
class FileReport:
    """One file of a bundle as the scan classified it: what kind, how big, its hash."""

    path: str
    kind: str  # "skill" | "text" | "script" | "binary"
    size: int
    sha256: str
    executable: bool
    language: str | None = None  # for scripts
    type: str | None = None  # for binaries: what the first bytes say

    def to_dict(self) -> dict:
        return {k: v for k, v in self.__dict__.items() if v is not None}


@dataclass
class BundleScan:
    """Every file of a bundle, classified, and the findings of scanning them."""

    files: list[FileReport]
    findings: list[Finding] = field(default_factory=list)

    def to_dict(self) -> dict:
        return {
            "files": [f.to_dict() for f in self.files],
            "findings": [f.to_dict() for f in self.findings],
        }


def binary_type(data: bytes) -> str:
    """A short description of a binary file from its first bytes ("data" when unknown).

    Args:
        data: the file's bytes.
    Returns:
        e.g. "PNG image", "ELF executable", "data".
    """
    for magic, offset, label in _MAGIC:
        if data[offset : offset + len(magic)] == magic:
            return label
    return "data"


def _language(path: str, text: str | None, executable: bool) -> str | None:
    dot = path.rfind(".")
    if dot > path.rfind("/"):
        lang = SCRIPT_EXTENSIONS.get(path[dot:].lower())
        if lang:
            return lang
    if text is not None and text.startswith("#!"):
        first = text.split("\n", 1)[0].lower()
        for needle, lang in _SHEBANG_LANGUAGES:
            if needle in first:
                return lang
        return "unknown"
    if executable:
        return "unknown"
    return None


def classify(
    path: str, data: bytes, executable: bool, sha256: str = ""
) -> tuple[FileReport, str | None]:
    """Classify one file and decode it if it is text.

    Args:
        path: its path in the bundle.
        data: its bytes.
        executable: its executable bit.
        sha256: its hash (from the manifest).
    Returns:
        (FileReport, text or None for a binary).
    """
    text: str | None
    if b"\0" in data:
        text = None
    else:
        try:
            # A byte-order mark at byte 0 says how the file is encoded (editors on Windows
            # write one), as SKILL.md's is read: not a character of its text.
            text = data.decode("utf-8-sig")
        except UnicodeDecodeError:
            text = None
    if text is None:
        return FileReport(
            path, "binary", len(data), sha256, executable, type=binary_type(data)
        ), None
    if path == SKILL_FILE:
        return FileReport(path, "skill", len(data), sha256, executable), text
    language = _language(path, text, executable)
    kind = "script" if language else "text"
    return FileReport(path, kind, len(data), sha256, executable, language=language), text


def scan_shell(path: str, text: str) -> list[Finding]:
    """Findings for a shell script, line by line (whole-line comments skipped).

    Args:
        path: its path in the bundle.
        text: its source.
    Returns:
        code-* findings with path and line.
    """
    return _scan_lines(path, text, _SHELL_RULES, comment="#")


def scan_script(
    path: str, text: str, language: str | None, *, tree: ast.Module | None = None
) -> list[Finding]:
    """Findings for one script in the language it is written in.

    Args:
        path: its path in the bundle.
        text: its source.
        language: from ``classify`` ("python", "shell", "javascript", ...).
        tree: a Python script's ``ast``, when the caller has parsed it.
    Returns:
        code-* findings with path and line.
    """
    if language == "python":
        return scan_python(path, text, tree=tree)
    if language == "shell":
        return scan_shell(path, text)
    return _scan_lines(path, text, _GENERIC_RULES)


@dataclass
class ScanCache:
    """Findings of files already scanned, by content: a collection often repeats a licence or a
    helper script in every skill, and the same bytes classified the same way give the same
    findings (no rule reads the path beyond how it classifies the file, and each finding's
    path is set per file). Keep one for the length of an import."""

    by_blob: dict[tuple[str, str, str | None, bool, bool], list[Finding]] = field(
        default_factory=dict
    )
    hits: int = 0


def _scan_file(
    path: str,
    text: str,
    report: FileReport,
    scan_text: Callable[[str, str], list[Finding]],
    tree: ast.Module | None = None,
) -> list[Finding]:
    findings = scan_text(text, path)
    if report.kind == "script":
        findings.extend(scan_script(path, text, report.language, tree=tree))
    return findings


def scan_bundle(
    bundle: Bundle,
    *,
    hidden: Callable[[str, str], list[Finding]] | None = None,
    cache: ScanCache | None = None,
) -> BundleScan:
    """Classify every file and scan all but ``SKILL.md`` (which ``lint_card`` covers), then run
    the detection pass (``scan.detect``) over every text file, ``SKILL.md`` included: code in
    Markdown, data flows within and across files, instructions read as sentences.

    Args:
        bundle: the bundle.
        hidden: the hidden-instruction scan for one text file, called (text, path); default
            ``lint.lint_text`` (comments are errors in Markdown, warnings elsewhere).
        cache: findings by file content, shared across the bundles of one import (only used
            with the default ``hidden`` scan).
    Returns:
        The file listing and every finding, each with its path.
    """
    scan_text = hidden or lint_text
    if hidden is not None:
        cache = None
    reports: list[FileReport] = []
    findings: list[Finding] = []
    texts: list[DetectFile] = []
    trees: dict[str, ast.Module | None] = {}
    unread: list[tuple[str, str]] = []
    for f, data, carried in _files_to_scan(bundle, unread):
        report, text = classify(f.path, data, f.executable, f.sha256)
        if not carried:  # the listing is the bundle's own files; what they carry is scanned
            reports.append(report)
        if text is None or is_pickle_path(f.path):
            findings.extend(pickle_findings(f.path, data))
        if is_bytecode(f.path, data):
            findings.extend(bytecode_findings(f.path, data))
        if f.path.lower().endswith(".pdf") and (words := pdf_words(data)) is not None:
            # an agent told to read a PDF reads its words, not its bytes
            texts.append(DetectFile(f.path, words, None))
        elif text is not None:
            texts.append(DetectFile(f.path, text, report.language))
            if report.language == "python":
                trees[f.path] = _parse_quietly(text)
        if f.path == SKILL_FILE:
            continue
        if _EICAR in data:
            findings.append(
                Finding(
                    "malware-signature",
                    ERROR,
                    "carries the EICAR antivirus test signature",
                    None,
                    f.path,
                )
            )
        if text is None:
            native = report.type in NATIVE
            opaque = report.type == "data" and _random_looking(data)
            findings.append(
                Finding(
                    "binary-executable" if native else "binary-opaque" if opaque else "binary-file",
                    WARNING if native or opaque else INFO,
                    f"binary, {report.size} bytes, {report.type}, sha256 {f.sha256}",
                    None,
                    f.path,
                )
            )
            continue
        if cache is None or not f.sha256:
            findings.extend(
                _licence_urls(
                    f.path, _scan_file(f.path, text, report, scan_text, trees.get(f.path))
                )
            )
            continue
        # Everything a scan reads of the path: the kind and language it gives the file, whether
        # it is Markdown (comments are errors there) and whether it is a licence text.
        key = (
            f.sha256,
            report.kind,
            report.language,
            is_markdown_path(f.path),
            _is_licence(f.path),
        )
        known = cache.by_blob.get(key)
        if known is None:
            known = cache.by_blob[key] = _licence_urls(
                f.path, _scan_file(f.path, text, report, scan_text, trees.get(f.path))
            )
        else:
            cache.hits += 1
        findings.extend(replace(finding, path=f.path) for finding in known)
    findings.extend(
        Finding("archive-unread", WARNING, f"not read: {why}", None, path) for path, why in unread
    )
    # Code in Markdown, flows within and across files, prose: over the whole bundle at once.
    findings.extend(detect_files(texts, trees=trees))
    # Stored as a copy of its target (read_bundle_dir): the reviewer should know the two
    # paths are one file in the source.
    findings.extend(
        Finding(
            "bundle-symlink",
            INFO,
            f"a symlink to {target} in the source: stored as a copy",
            None,
            path,
        )
        for path, target in bundle.links
    )
    return BundleScan(reports, findings)


def _files_to_scan(
    bundle: Bundle, unread: list[tuple[str, str]]
) -> Iterator[tuple[BundleFile, bytes, bool]]:
    """Each file of the bundle, then the files it carries (archive members, a patch's result),
    each with its bytes and whether it is carried; what a limit left unread goes to ``unread``
    as (carrier path, why)."""
    for f in bundle.files:
        data = bundle.contents[f.path]
        yield f, data, False
        if f.path == SKILL_FILE:
            continue
        carried = carried_files(f.path, data)
        unread.extend((f.path, why) for why in carried.unread)
        for inner in carried.files:
            sha = hashlib.sha256(inner.data).hexdigest()
            yield BundleFile(inner.path, inner.executable, len(inner.data), sha), inner.data, True


def _parse_quietly(text: str) -> ast.Module | None:
    """``parse_python`` with the cyclic collector paused (see ``_parse_and_scan_python``)."""
    paused = gc.isenabled()
    if paused:
        gc.disable()
    try:
        return parse_python(text)
    finally:
        if paused:
            gc.enable()


def _random_looking(data: bytes) -> bool:
    """Bytes of no known format that read as random (encrypted or packed): nobody can review
    what they hold. Judged on the first 64 KiB: over 7.2 bits of entropy a byte."""
    sample = data[:65536]
    if len(sample) < 256:
        return False
    counts = Counter(sample)
    total = len(sample)
    return -sum(n / total * math.log2(n / total) for n in counts.values()) > 7.2


# Every antivirus flags a file holding this (the industry's test string); no skill needs it.
_EICAR = b"EICAR-STANDARD-ANTIVIRUS-TEST-FILE"
_LICENCE_RE = re.compile(r"(?:^|/)(?:LICEN[CS]E|COPYING|NOTICE|COPYRIGHT)(?:[._-][^/]*)?$", re.I)


def _is_licence(path: str) -> bool:
    return bool(_LICENCE_RE.search(path))


def _licence_urls(path: str, findings: list[Finding]) -> list[Finding]:
    """A licence text's links are the licence's, not the skill's: one line for all of them."""
    if not _is_licence(path):
        return findings
    urls = [f for f in findings if f.rule == "url"]
    if not urls:
        return findings
    rest = [f for f in findings if f.rule != "url"]
    return [
        *rest,
        Finding("url", INFO, f"{len(urls)} link(s) in a licence text", urls[0].line, path),
    ]


def lint_bundle(
    card: Card, bundle: Bundle, *, dirname: str | None, cache: ScanCache | None = None
) -> list[Finding]:
    """Every finding about a bundle: the card's own lint, then each other file (hidden
    instructions in text, scripts as code, binaries listed), each finding with its path.

    Args:
        card: the parsed SKILL.md.
        bundle: the whole bundle.
        dirname: the skill's folder name (for the name-matches-folder rule), None to skip it.
        cache: findings by file content, shared across the bundles of one import.
    Returns:
        The findings.
    """
    findings = lint_card(card, dirname=dirname)
    for f in findings:
        f.path = SKILL_FILE
    findings += scan_bundle(bundle, cache=cache).findings
    list_own_tool_installs(card, lambda path: _bundle_text(bundle, path), findings)
    list_own_service_sends(card, findings, dirname=dirname)
    list_unrun_tests(bundle.contents, findings)
    return findings


def _bundle_text(bundle: Bundle, path: str) -> str | None:
    """A file of the bundle as the hidden-instruction scan read it (its line numbers), or None."""
    data = bundle.contents.get(path)
    if data is None:
        return None
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        return None
    return text.replace("\r\n", "\n").replace("\r", "\n")


def lint_skill_paths(
    paths: Iterable[str | os.PathLike], *, profile: str | None = None
) -> LintReport:
    """Lint what ``chimera-cards lint`` is given: a ``SKILL.md`` file as a card alone; a skill
    folder (or a folder of them) as the whole bundle import would store, each finding with the
    path of its file.

    Args:
        paths: SKILL.md files, skill folders, folders of skill folders.
        profile: "agent-skills" (default) or "chimera", for the card.
    Returns:
        A LintReport listing each SKILL.md. A skill folder that cannot be read as a bundle (a
        symlink inside, too many files, ...) is a ``read-refused`` finding on the folder, and a
        SKILL.md that does not parse a ``parse-error``; the rest are still linted.
    Raises:
        CardReadError: a path does not exist, holds no card, or its SKILL.md is not a readable
            file (exit 2, as for a card alone).
    """
    profile = resolve_profile(profile)
    files: list[str] = []
    findings: list[Finding] = []
    for path in paths:
        if not Path(path).is_dir():
            report = lint_paths([path], profile=profile)
            files += report.files
            findings += report.findings
            continue
        found = find_card_files(path)
        if not found:
            raise CardReadError(
                f"{path}: no SKILL.md found (expected a card, a card directory "
                f"or a folder of card directories)"
            )
        for card_file in found:
            # The card as before (an unreadable SKILL.md is still exit 2), then the rest.
            report = lint_paths([card_file], profile=profile)
            files += report.files
            findings += report.findings
            if card_file.name == SKILL_FILE:
                findings += _other_files(card_file.parent, report.findings)
            else:  # a lone skill.md: no bundle to read the other files as
                findings.append(
                    Finding(
                        "skill-file-name",
                        WARNING,
                        f"{card_file.name} read as SKILL.md; rename it for import and agents",
                        None,
                        str(card_file),
                    )
                )
    return LintReport(files=files, findings=findings)


def _other_files(folder: Path, card_findings: list[Finding]) -> list[Finding]:
    """The bundle's findings but SKILL.md's, each with its path under ``folder``; the card's own
    (``card_findings``, paths under ``folder`` too) and these are then graded for the card as
    ``lint_bundle`` grades them."""
    try:
        bundle = read_bundle_dir(folder)
    except BundleError as exc:
        return [Finding("read-refused", ERROR, str(exc), None, str(folder))]
    found = scan_bundle(bundle).findings
    list_unrun_tests(bundle.contents, found)
    try:
        card = parse_card(bundle.contents[SKILL_FILE])
    except (CardParseError, KeyError):
        card = None  # lint_paths reported it
    if card is not None:
        list_own_service_sends(card, found, dirname=folder.name)
        list_own_service_sends(card, card_findings, dirname=folder.name)
        list_own_tool_installs(card, lambda path: _bundle_text(bundle, path), found)
        prefix = str(folder) + os.sep
        list_own_tool_installs(
            card,
            lambda path: _bundle_text(bundle, path.removeprefix(prefix)),
            card_findings,
        )
    return [replace(finding, path=str(folder / (finding.path or ""))) for finding in found]


def finding_id(finding: Finding | dict) -> str:
    """A finding's stable id (``Finding.id``, e.g. ``override-phrase-3f2a9c01de``): the same bytes
    always give the same ids, so a reviewer can accept a finding by name in a signed approval
    (``approve --accept ID``).

    Args:
        finding: a Finding or its dict form.
    Returns:
        The id.
    """
    if isinstance(finding, Finding):
        return finding.id
    existing = finding.get("id")
    if isinstance(existing, str) and existing:
        return existing
    # Stored before findings carried ids: the id lint would give the same finding.
    return Finding(
        str(finding.get("rule")),
        str(finding.get("severity")),
        str(finding.get("message")),
        finding.get("line"),
    ).id
