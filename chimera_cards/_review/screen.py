"""The review screen as text, in the order a reviewer decides by.

What can block comes first (findings, errors before warnings before info, each at its
``file:line``), then what changed since the last approved version (the diff), then what the
agent would be given — in full for a first review, and for an update only with ``files=True``:
an update's reviewer reads the diff, not an 11 KB licence again. The numbers to approve with are
at the top and the bottom, labelled: the bundle digest (what ``--digest`` takes and a statement
binds) and the SHA-256 of ``SKILL.md`` (what a card page publishes).
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Sequence

NO_NEWLINE = "\\ No newline at end of file\n"
SKILL_FILE = "SKILL.md"
_ORDER = {"error": 0, "warning": 1, "info": 2}


def unified_diff(old: Sequence[str], new: Sequence[str], fromfile: str, tofile: str) -> str:
    """A unified diff of two files' lines (``keepends``) that marks a last line without a final
    newline as ``diff -u`` and git do, so it cannot run into the line after it.

    Args:
        old: the old file's lines, each with its line ending.
        new: the new file's lines, likewise.
        fromfile: the old file's label.
        tofile: the new file's label.
    Returns:
        The diff text ("" when the files are equal).
    """
    out = []
    for line in difflib.unified_diff(list(old), list(new), fromfile=fromfile, tofile=tofile):
        if line.endswith("\n"):
            out.append(line)
        else:
            out.append(line + "\n" + NO_NEWLINE)
    return "".join(out)


def _where(finding: dict) -> str:
    path = finding.get("path") or SKILL_FILE
    line = finding.get("line")
    return f"{path}:{line}" if line else path


def _findings(findings: Iterable[dict], accepted: Iterable[str]) -> list[str]:
    accepted = set(accepted)
    ordered = sorted(
        findings,
        key=lambda f: (
            _ORDER.get(f.get("severity", ""), 3),
            f.get("path") or "",
            f.get("line") or 0,
        ),
    )
    lines = []
    for f in ordered:
        mark = " (accepted)" if f.get("id") in accepted else ""
        lines.append(f"{f['severity']} {_where(f)} [{f.get('id')}] {f['message']}{mark}")
    return lines


def _summary(changes: dict) -> str:
    return ", ".join(
        f"{len(changes.get(key, []))} {label}"
        for key, label in (
            ("added", "added"),
            ("removed", "removed"),
            ("changed", "changed"),
            ("mode_changed", "mode changed"),
        )
    )


def _files(view) -> list[str]:
    out = []
    for f in view.files:
        if f["path"] == SKILL_FILE:
            continue
        if f["kind"] == "binary":
            out += ["", f"== {f['path']}: binary, {f['size']} bytes, {f['type']}, {f['sha256']} =="]
            continue
        what = f"script ({f['language']})" if f["kind"] == "script" else "text"
        out += ["", f"== {f['path']}: {what}, {f['size']} bytes (hidden characters shown) =="]
        out.append(f["text"].rstrip("\n"))
    return out


def format_screen(view, *, files: bool = False, after_findings: Sequence[str] = ()) -> str:
    """What ``chimera-cards review NAME`` prints.

    Args:
        view: a ``ReviewView``.
        files: print every file in full (always so for a version with nothing to diff against).
        after_findings: lines that go right after our findings (other scanners' runs).
    Returns:
        The screen's text.
    """
    skill_sha = next((f["sha256"] for f in view.manifest if f["path"] == SKILL_FILE), "")
    out = [
        f"card:       {view.name}",
        f"digest:     {view.sha256}  (the bundle; approve/reject --digest)",
        f"skill_md:   {skill_sha}  (SKILL.md's own sha256, as card pages publish it)",
        f"status:     {view.status}" + (f" ({view.reason})" if view.reason else ""),
        f"provenance: {view.provenance}",
        f"origin:     {view.origin}"
        + (f" -> {view.final_url}" if view.final_url and view.final_url != view.origin else ""),
        f"approvals:  {len(view.verdict['approvers'])} of {view.verdict['threshold']} required"
        + (f" ({', '.join(view.expired)}: expired)" if getattr(view, "expired", None) else ""),
        *([f"downgrade:  {view.downgrade}"] if getattr(view, "downgrade", None) else []),
        "",
        f"== findings ({len(view.findings)}), errors first ==",
        *(_findings(view.findings, view.accepted) or ["none"]),
        *after_findings,
        "",
    ]
    if view.diff_against:
        out.append(
            f"== diff against last approved version {view.diff_against[:12]} "
            f"({_summary(view.changes)}) =="
        )
        out.append(view.diff.rstrip("\n") or "(identical files)")
    else:
        out.append("== diff: no earlier approved version of this name ==")
    out += ["", f"== manifest: {len(view.manifest)} file(s), bundle digest {view.digest} =="]
    for f in view.manifest:
        mode = "755" if f["executable"] else "644"
        out.append(f"{mode} {f['size']:>9} {f['sha256']}  {f['path']}")
    if files or not view.diff_against:
        out += [
            "",
            "== what an agent would be given once approved (hidden characters shown as "
            "<U+XXXX>) ==",
            view.revealed_prompt_text.rstrip("\n"),
        ]
    if files:
        out += _files(view)
    elif len(view.manifest) > 1:
        out += ["", f"(the other files in full: chimera-cards review {view.name} --files)"]
    out += [
        "",
        f"approve with: chimera-cards approve {view.name} --key NAME --digest {view.sha256}"
        + (" --allow-downgrade" if getattr(view, "downgrade", None) else ""),
    ]
    return "\n".join(out)
