"""The end-to-end demo: a new user's main job, run for real in a throwaway folder, checking itself.

``demo_steps(workdir)`` yields one ``Step`` at a time, each with the lines to show and the
expectations it checked, so a caller can print steps as they happen:

1. lint and import the project's own card ``carry-the-failure-forward`` (shipped in the package
   as ``chimera_cards.library``) by path: clean, active;
2. serve a second card from an HTTP server on 127.0.0.1 (port 0, a thread) and import it by URL:
   tainted whatever it claims, pending, absent from ``match``;
3. review it (the review screen, trimmed) and approve it with a freshly generated Ed25519 key,
   naming the SHA-256 of the bytes just reviewed;
4. see it in ``match``, labelled as approved after arriving tainted;
5. run the reference loop on the sample task that fails three times (``scripted:rederive``,
   accumulating history) with the store's approved cards in the prompt, and show attempt 3's
   history section with attempt 1 in it, the string only attempt 1 produced, and the injection
   count.

Everything goes through the same functions the commands use (``lint_paths``, ``import_source``,
``review``, ``match``, ``reference_loop.cards.load_cards``, ``check.run_check``); the
demo only narrates. A failed expectation is reported, never hidden: ``DemoResult.ok`` is False
and the CLI exits 1. A step that raises ends the demo there (the later steps depend on it).
"""

from __future__ import annotations

import http.server
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

from chimera_cards._importer.pipeline import import_source
from chimera_cards._retrieve.matching import match
from chimera_cards._retrieve.render import Match, render_one
from chimera_cards._review.decisions import add_trust, approve
from chimera_cards._review.view import ReviewView, format_view, review_view
from chimera_cards._scan.lint import lint_paths
from chimera_cards._store.facade import Store
from chimera_cards._trust.keys import generate_key, load_private_key
from chimera_cards.errors import ChimeraError

OWN_CARD = "carry-the-failure-forward"
URL_CARD = "read-the-failing-assertion"
QUERY = "retry loop failing test"
REVIEWER = "demo-reviewer"
REVIEW_TEXT_LINES = 8  # lines of "what an agent would be given" kept in the trimmed screen
HISTORY_EXCERPT_HITS = 3  # lines quoted around the attempt-1-only string
MAX_ATTEMPTS = 5  # the sample task fails three times; attempt 4 shows how it ends

# The card the demo serves over HTTP. It claims to be clean and active; a URL import is tainted
# and pending whatever a card says about itself, and that is part of what the demo shows.
URL_CARD_TEXT = """\
---
name: read-the-failing-assertion
description: When a test fails after a fix, read the failing assertion and the exact input it was given before writing the next change.
version: 0.1.0
kind: pattern
stage: verify
topic: software-dev
triggers:
- a test fails after a fix
- a retry loop shows the verifier output of a failing test
- one test checks more than one property of the result
provenance: clean
status: active
license: Apache-2.0
---

## Trigger

A fix was tried, the tests ran, and one of them still fails. You are about to write the next
change.

## Do

1. Read the failing assertion line and the values it compared, not only the test's name.
2. Write down the input the test gave and the result it expected.
3. Check the next change against every property the test asserts, including the ones the last
   change did not touch (for example, that the input is left as it was).

## Avoid

Changing code after reading only "1 failed". The test name says where; the assertion says what.

## Check

Before the next attempt, say in one sentence which assertion failed and why the new change makes
it pass. If you cannot, read the output again.

## Risk

A test can assert several things at once; fixing the one you noticed can break another that was
passing. Run the whole file, not only the test that failed.
"""  # noqa: E501 - a card's description is one YAML line, as authors write it


@dataclass
class Expectation:
    what: str  # the rule, e.g. "the URL card is absent from match before approval"
    ok: bool
    detail: str = ""  # what was seen, when it helps to know

    def to_dict(self) -> dict[str, Any]:
        return {"what": self.what, "ok": self.ok, "detail": self.detail}


@dataclass
class Step:
    number: int
    title: str
    lines: list[str] = field(default_factory=list)
    expectations: list[Expectation] = field(default_factory=list)
    data: dict[str, Any] = field(default_factory=dict)
    seconds: float = 0.0

    @property
    def ok(self) -> bool:
        return all(e.ok for e in self.expectations)

    def expect(self, what: str, ok: bool, detail: str = "") -> bool:
        self.expectations.append(Expectation(what, bool(ok), detail))
        return bool(ok)

    def to_dict(self) -> dict[str, Any]:
        return {
            "number": self.number,
            "title": self.title,
            "ok": self.ok,
            "seconds": round(self.seconds, 3),
            "lines": self.lines,
            "expectations": [e.to_dict() for e in self.expectations],
            "data": self.data,
        }


@dataclass
class DemoResult:
    workdir: str
    kept: bool
    steps: list[Step] = field(default_factory=list)
    seconds: float = 0.0

    @property
    def ok(self) -> bool:
        return len(self.steps) == TOTAL_STEPS and all(s.ok for s in self.steps)

    @property
    def failed(self) -> list[tuple[int, Expectation]]:
        return [(s.number, e) for s in self.steps for e in s.expectations if not e.ok]

    def to_dict(self) -> dict[str, Any]:
        return {
            "ok": self.ok,
            "workdir": self.workdir,
            "kept": self.kept,
            "seconds": round(self.seconds, 3),
            "expectations": sum(len(s.expectations) for s in self.steps),
            "failed": [{"step": n, **e.to_dict()} for n, e in self.failed],
            "steps": [s.to_dict() for s in self.steps],
        }


TITLES = (
    f"Lint and import the project's own card {OWN_CARD} by path",
    f"Import {URL_CARD} by URL from a server on 127.0.0.1",
    f"Review {URL_CARD} and approve it with a fresh key",
    f"Match again: {URL_CARD} is now usable",
    "Run the reference loop on the task that fails three times, with the cards in the prompt",
)
TOTAL_STEPS = len(TITLES)


def library_card_dir(name: str = OWN_CARD) -> Path:
    """The card folder as shipped inside the package (works from a wheel or a checkout)."""
    return Path(str(resources.files("chimera_cards.library") / name))


class CardHTTPServer:
    """A one-file HTTP server on 127.0.0.1 (port 0) in a thread: the card's "remote" origin."""

    def __init__(self, path: str, body: bytes) -> None:
        self.hits: list[str] = []
        hits = self.hits

        class Handler(http.server.BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:  # the demo prints its own lines
                pass

            def do_GET(self) -> None:
                hits.append(self.path)
                if self.path != path:
                    self.send_error(404)
                    return
                self.send_response(200)
                self.send_header("Content-Type", "text/markdown; charset=utf-8")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}{path}"
        self._thread = threading.Thread(
            target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )

    def __enter__(self) -> CardHTTPServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
        self._thread.join(timeout=5)


def _short(sha: str | None) -> str:
    return (sha or "")[:12]


def _match_query(store: Store) -> list[Match]:
    return match(store, QUERY, k=5)


def trimmed_review_screen(view: ReviewView, keep: int = REVIEW_TEXT_LINES) -> list[str]:
    """The ``chimera-cards review NAME`` screen with the card text cut to ``keep`` lines."""
    lines = format_view(view).splitlines()
    head = next(i for i, line in enumerate(lines) if line.startswith("== what an agent"))
    end = next((i for i in range(head + 1, len(lines)) if lines[i].startswith("== ")), len(lines))
    text = lines[head + 1 : end]
    while text and not text[-1]:
        text.pop()
    if len(text) > keep:
        text = [
            *text[:keep],
            f"… {len(text) - keep} more line(s) of card text "
            f"(`chimera-cards review {view.name}` shows them all) …",
        ]
    return lines[: head + 1] + text + [""] + lines[end:]


def history_section(prompt: str) -> str:
    """The history part of a composed prompt (from its history heading on), "" when none."""
    from reference_loop._core import history

    starts = [
        i
        for i in (
            prompt.find(history.HEADING),
            prompt.find(history.LAST_HEADING),
            prompt.find(history.NONE_TEXT),
        )
        if i >= 0
    ]
    return prompt[min(starts) :].rstrip("\n") if starts else ""


def history_excerpt(section: str, tokens: list[str], hits: int = HISTORY_EXCERPT_HITS) -> list[str]:
    """Headings and summary lines of a history section, plus the first line naming each token."""
    from reference_loop._core.history import mentions

    keep: list[str] = []
    pending = list(tokens)[:hits]
    skipped = False
    for line in section.splitlines():
        token = next((t for t in pending if mentions(line, t)), None)
        if token is not None:
            pending.remove(token)
            keep.append(f"{line}    <-- {token}: only attempt 1 produced this")
            skipped = False
        elif line.startswith(("## ", "### ", "Failure signature:", "Files touched:")):
            keep.append(line)
            skipped = False
        elif not skipped:
            keep.append("    …")
            skipped = True
    return keep


def demo_steps(
    workdir: str | Path,
    *,
    history_mode: str = "accumulate",
    seed: int = 0,
    max_attempts: int = MAX_ATTEMPTS,
) -> Iterator[Step]:
    """Run the demo in ``workdir`` (an empty folder the caller owns), one step at a time.

    ``history_mode`` is the loop's: the default ``accumulate`` is the card's method; ``last``
    (the overwrite bug) makes step 5's check fail, which is how the demo shows it checks itself.
    """
    from reference_loop.errors import LoopError

    work = Path(workdir)
    store_path = work / "cards.db"
    state: dict[str, Any] = {}
    steps = (_step_own_card, _step_url_card, _step_review_approve, _step_match, _step_loop)
    with Store(store_path) as store:
        for number, (title, fn) in enumerate(zip(TITLES, steps, strict=True), 1):
            step = Step(number, title)
            started = time.monotonic()
            try:
                fn(
                    step,
                    store,
                    work,
                    state,
                    history_mode=history_mode,
                    seed=seed,
                    max_attempts=max_attempts,
                )
            except (ChimeraError, LoopError) as exc:
                step.expect("the step runs without an error", False, str(exc))
            step.seconds = time.monotonic() - started
            yield step
            if any(e.what == "the step runs without an error" for e in step.expectations):
                return  # later steps build on this one


def run_demo(workdir: str | Path, *, kept: bool = False, **options: Any) -> DemoResult:
    """All steps, collected (for callers that do not print as they go)."""
    started = time.monotonic()
    result = DemoResult(workdir=str(workdir), kept=kept)
    for step in demo_steps(workdir, **options):
        result.steps.append(step)
    result.seconds = time.monotonic() - started
    return result


# --- the steps ---------------------------------------------------------------------------------


def _step_own_card(step: Step, store: Store, work: Path, state: dict, **_: Any) -> None:
    card_dir = library_card_dir()
    step.lines.append(f"card folder: {card_dir}  (chimera_cards.library, shipped in the package)")
    report = lint_paths([card_dir])
    step.lines.append(
        f"$ chimera-cards lint {card_dir.name}/  ->  {len(report.files)} card: "
        f"{report.errors} error(s), {report.warnings} warning(s)"
    )
    step.expect(
        "the project's own card lints clean (no errors, no warnings)",
        report.errors == 0 and report.warnings == 0,
        f"{report.errors} error(s), {report.warnings} warning(s)",
    )
    results = import_source(store, card_dir)
    r = results[0]
    step.lines.append(
        f"$ chimera-cards import {card_dir.name}/  ->  {r.outcome} {r.name} "
        f"{_short(r.sha256)}  provenance {r.provenance}, status {r.status}"
    )
    step.expect(
        "imported by path as clean and active",
        len(results) == 1
        and r.outcome == "imported"
        and r.provenance == "clean"
        and r.status == "active",
        f"{r.outcome}, {r.provenance}, {r.status} {r.error or ''}",
    )
    step.data = {"card": str(card_dir), "lint": report.to_dict(), "import": r.to_dict()}


def _step_url_card(step: Step, store: Store, work: Path, state: dict, **_: Any) -> None:
    body = URL_CARD_TEXT.encode("utf-8")
    served = work / "served" / URL_CARD / "SKILL.md"  # a copy of what the server hands out
    served.parent.mkdir(parents=True)
    served.write_bytes(body)
    with CardHTTPServer(f"/{URL_CARD}/SKILL.md", body) as server:
        step.lines.append(f"serving {URL_CARD}/SKILL.md at {server.url} (a thread of this process)")
        step.lines.append("the card's frontmatter claims: provenance: clean, status: active")
        results = import_source(store, server.url)
        hits = list(server.hits)
    r = results[0]
    state["url"] = server.url
    state["url_sha"] = r.sha256
    step.lines.append(
        f"$ chimera-cards import {server.url}  ->  {r.outcome} {r.name} "
        f"{_short(r.sha256)}  provenance {r.provenance}, status {r.status}"
    )
    if r.reason:
        step.lines.append(f"  why pending: {r.reason}")
    step.lines.append("server stopped")
    step.expect("the card was fetched from the local server", bool(hits), f"requests: {hits}")
    step.expect(
        "a URL import is tainted and pending, whatever the card claims",
        r.outcome == "imported" and r.provenance == "tainted" and r.status == "pending",
        f"{r.outcome}, {r.provenance}, {r.status} {r.error or ''}",
    )
    matches = _match_query(store)
    names = [m.name for m in matches]
    step.lines.append(f"$ chimera-cards match {QUERY!r}  ->  {', '.join(names) or 'nothing'}")
    step.expect(
        "the pending URL card is absent from match",
        URL_CARD not in names,
        f"match returned {names}",
    )
    step.expect(
        "match does return the clean card, so the absence means something",
        OWN_CARD in names,
        f"match returned {names}",
    )
    step.data = {"url": server.url, "import": r.to_dict(), "match_before": names}


def _step_review_approve(step: Step, store: Store, work: Path, state: dict, **_: Any) -> None:
    view = review_view(store, URL_CARD)
    step.lines.append(f"$ chimera-cards review {URL_CARD}   (trimmed)")
    step.lines += ["  " + line if line else "" for line in trimmed_review_screen(view)]
    step.expect(
        "the review screen shows the bytes that were imported",
        view.sha256 == state.get("url_sha"),
        f"{_short(view.sha256)}",
    )
    keyfile = work / "keys" / f"{REVIEWER}.key"
    gen = generate_key(REVIEWER, keyfile)
    add_trust(store, REVIEWER, gen.public)
    step.lines.append(
        f"$ chimera-cards keys generate {REVIEWER} -o {keyfile}  ->  key id "
        f"{gen.public.keyid} (private key 0600), trusted in this store"
    )
    decision = approve(
        store,
        URL_CARD,
        view.sha256,
        load_private_key(keyfile),
        note="reviewed in chimera-cards demo",
    )
    step.lines.append(f"$ chimera-cards approve {URL_CARD} --key {keyfile} --digest {view.sha256}")
    step.lines.append(
        f"  approved {decision.name} {_short(decision.sha256)} as {decision.reviewer}: "
        f"status {decision.status}"
    )
    step.expect(
        "approving the reviewed hash with a trusted key makes the card active",
        decision.status == "active",
        f"status {decision.status}",
    )
    step.data = {
        "review": {k: v for k, v in view.to_dict().items() if k != "prompt_text"},
        "key": gen.to_dict(),
        "decision": decision.to_dict(),
    }


def _step_match(step: Step, store: Store, work: Path, state: dict, **_: Any) -> None:
    matches = _match_query(store)
    names = [m.name for m in matches]
    step.lines.append(f"$ chimera-cards match {QUERY!r}")
    for m in matches:
        wrapper = render_one(m).splitlines()[0]
        step.lines.append(f"  {wrapper}")
    url_match = next((m for m in matches if m.name == URL_CARD), None)
    step.expect(
        "the approved URL card is in match", url_match is not None, f"match returned {names}"
    )
    step.expect(
        "it is labelled as approved after arriving tainted",
        url_match is not None
        and url_match.approved_after_taint
        and "approved after arriving tainted" in render_one(url_match),
        "" if url_match is None else f"basis {url_match.basis}, provenance {url_match.provenance}",
    )
    step.data = {"match_after": [m.to_dict() for m in matches]}


def _step_loop(
    step: Step,
    store: Store,
    work: Path,
    state: dict,
    *,
    history_mode: str,
    seed: int,
    max_attempts: int,
) -> None:
    from reference_loop._core.cards import load_cards
    from reference_loop._core.events import EventLog
    from reference_loop._run.check import run_check
    from reference_loop._tasks.task import copy_project, three_failure_task

    task = three_failure_task()
    block = load_cards(store.path, QUERY)
    workspace = copy_project(task, work / "workspace" / task.name)
    prompts_dir = work / "prompts"
    step.lines.append(
        f"same as: reference-loop run --task {task.name} --history {history_mode} "
        f"--max-attempts {max_attempts} --cards {QUERY!r} --store {store.path} "
        f"--prompts-dir {prompts_dir}"
    )
    shown = ", ".join(f"{c['name']} ({c['label']})" for c in block.cards)
    step.lines.append(f"cards in the prompt: {shown or 'none'}")
    with EventLog(jsonl_path=work / "events.jsonl") as log:
        check = run_check(
            task,
            attempter="scripted:rederive",
            history_mode=history_mode,
            seed=seed,
            max_attempts=max_attempts,
            events=log,
            workspace=workspace,
            prompts_dir=prompts_dir,
            cards=block,
        )
        card_injections = log.count("cards_injected")
    run = check.run
    assert run is not None
    for rec in run.attempts:
        step.lines.append(
            f"  attempt {rec.number}: {rec.verdict:<4}  touched {', '.join(rec.files) or 'nothing'}"
        )
    step.lines.append(
        f"  {'solved at attempt ' + str(run.solved_at) if run.solved else 'not solved'}"
        f"; history injections: {run.injections}; card injections: {card_injections}"
    )
    first = run.prompts[0] if run.prompts else ""
    step.expect(
        "attempt 1's prompt carries every approved card, the URL card included",
        block.count > 0
        and all(f'<skill-card name="{c["name"]}"' in first for c in block.cards)
        and any(c["name"] == URL_CARD for c in block.cards),
        f"cards: {[c['name'] for c in block.cards]}",
    )
    section = history_section(run.prompts[2]) if len(run.prompts) >= 3 else ""
    step.lines.append(
        f"attempt 3's prompt ({prompts_dir / 'attempt-3.txt'}), history section, trimmed:"
    )
    step.lines += [
        "  | " + line for line in history_excerpt(section, check.found or check.attempt1_only)
    ]
    if check.attempt1_only:
        step.lines.append(
            f"strings only attempt 1's patch has: {', '.join(check.attempt1_only)}; "
            f"found in attempt 3's prompt: {', '.join(check.found) or 'none'}"
        )
    step.lines.append(check.message)
    step.expect(
        "attempt 3's prompt shows a string only attempt 1 produced", check.passed, check.message
    )
    step.expect(
        "history injections were counted (a run with zero proves nothing)",
        run.injections > 0,
        f"{run.injections} injection(s)",
    )
    # A verifier that cannot run (no pytest, say) fails every attempt the same way, and the
    # check above would still pass: prove the tests really ran.
    one, two = [*run.attempts, None, None][:2]
    first_output = next(
        (line for line in (one.verifier_output if one else "").splitlines() if line.strip()), ""
    )
    step.expect(
        "attempts 1 and 2 failed in different ways, so the verifier really ran the tests",
        one is not None and two is not None and one.signature != two.signature,
        f"attempt 1's verifier said: {first_output[:160]}",
    )
    if history_mode == "accumulate" and max_attempts >= 4:
        step.expect(
            "the right fix passes once earlier ideas are ruled out",
            run.solved,
            f"verdicts: {[r.verdict for r in run.attempts]}",
        )
    step.data = {
        "check": check.to_dict(),
        "cards": block.to_dict(),
        "card_injections": card_injections,
        "run": run.to_dict(),
        "prompts_dir": str(prompts_dir),
    }
