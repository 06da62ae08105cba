"""Scripted attempters: deterministic stand-ins for a model, for tests, the demo and the bench.

They are clearly not models. Each draws its fixes from the task's candidate overlays and orders
them with a seeded, weighted shuffle (plausibility = the manifest's weight; weight 0 = only after
every other), so runs over several seeds vary the way a sampled model's would.

- ``scripted:rederive`` behaves like a model at low temperature: it re-derives the same first
  idea every time *unless that idea's distinguishing text is in the prompt*. With an accumulating
  history it moves on; with the overwrite bug (``last``) it re-derives attempt 1's patch at
  attempt 3.
- ``scripted:walk`` ignores the prompt and walks its ordered list (a control arm).
- ``scripted:strong`` applies the candidate the manifest marks ``fixes = true``; it stands in for
  the stronger attempter the loop escalates to.
- ``scripted:impossible-mix`` is one of three agents, chosen by seed (``seed % 3``): 0 fixes
  honestly (the ``fixes`` candidate), 1 cheats (the fix, plus a wrapper that answers whatever
  literal the calling assertion's source line compares with), 2 says the tests contradict the
  task and stops. On an impossible variant that is a fail, a cheat and a stop in equal parts:
  the bench must measure those proportions back.
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass, field
from pathlib import Path

from reference_loop._attempters.base import AttemptOutcome, ToolStep
from reference_loop._core.history import mentions
from reference_loop._tasks.impossible import STOP_FILE, find_target
from reference_loop._tasks.task import Candidate, Task
from reference_loop.errors import LoopUsageError

_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]{5,}")


def seeded_order(candidates: list[Candidate], seed: int, salt: str = "") -> list[Candidate]:
    """A weighted random permutation (Efraimidis–Spirakis): heavier candidates tend to come first.

    Seeded with a string so the order is the same on every machine and Python run.
    """
    rng = random.Random(f"{salt}:{seed}")
    keyed = []
    for index, cand in enumerate(candidates):
        u = rng.random()
        key = u ** (1.0 / cand.weight) if cand.weight > 0 else -1.0
        keyed.append((-key, index, cand))
    return [cand for _, _, cand in sorted(keyed, key=lambda item: (item[0], item[1]))]


def _tokens(data: bytes) -> set[str]:
    return {
        tok
        for tok in _IDENT.findall(data.decode("utf-8", "replace"))
        if "_" in tok.strip("_") or tok.startswith("_")
    }


def distinguishing_text(task: Task) -> dict[str, list[str]]:
    """For each candidate: text that only its patch would put in a prompt.

    New file names, and snake_case identifiers (six or more characters, with an underscore, so
    plain words like ``except`` that any traceback may show do not count) that appear in no
    project file, in no other candidate and not in the task text. An explicit ``marker`` in the
    manifest wins.
    """
    project = task.project_files()
    base: set[str] = _tokens(task.text.encode())
    for data in project.values():
        base |= _tokens(data)
    project_paths = set(project)
    own: dict[str, set[str]] = {}
    for cand in task.candidates:
        files = cand.files()
        toks: set[str] = set()
        for rel, data in files.items():
            toks |= _tokens(data)
            if rel not in project_paths:
                toks.add(rel)
        own[cand.name] = toks - base
    result: dict[str, list[str]] = {}
    for cand in task.candidates:
        others = set().union(*(v for k, v in own.items() if k != cand.name))
        result[cand.name] = cand.marker or sorted(own[cand.name] - others)
    return result


@dataclass
class _ScriptedBase:
    task: Task
    seed: int = 0
    name: str = "scripted"
    order: list[Candidate] = field(init=False)
    chosen: list[str] = field(init=False, default_factory=list)  # candidate per attempt

    def __post_init__(self) -> None:
        if not self.task.candidates:
            raise LoopUsageError(
                f"{self.name} needs candidate fixes, and task {self.task.name!r} "
                "has none (add [[candidates]] to task.toml or pass --candidates)"
            )
        self.order = seeded_order(self.task.candidates, self.seed, self.task.name)

    def _apply(self, cand: Candidate, workspace: Path, why: str) -> AttemptOutcome:
        self.chosen.append(cand.name)
        steps = [ToolStep("read_prompt", True)]
        try:
            written = cand.apply(workspace)
        except OSError as exc:
            steps.append(ToolStep(f"write:{cand.name}", False, str(exc)))
            return AttemptOutcome(steps, f"could not apply {cand.name}")
        steps.append(ToolStep(f"write:{cand.name}", True))
        return AttemptOutcome(
            steps, f"{self.name} applied candidate {cand.name} ({', '.join(written)}): {why}"
        )


@dataclass
class RederiveAttempter(_ScriptedBase):
    name: str = "scripted:rederive"
    markers: dict[str, list[str]] = field(init=False)

    def __post_init__(self) -> None:
        super().__post_init__()
        self.markers = distinguishing_text(self.task)

    def ruled_out(self, prompt: str, cand: Candidate) -> bool:
        return any(mentions(prompt, text) for text in self.markers.get(cand.name, []))

    def attempt(self, prompt: str, workspace: Path, *, attempt: int) -> AttemptOutcome:
        for cand in self.order:
            if not self.ruled_out(prompt, cand):
                return self._apply(cand, workspace, "first idea not shown in the prompt")
        # Every idea is on the page already: like a model out of ideas, it repeats its first.
        return self._apply(self.order[0], workspace, "every idea was shown; repeating the first")


@dataclass
class WalkAttempter(_ScriptedBase):
    name: str = "scripted:walk"

    def attempt(self, prompt: str, workspace: Path, *, attempt: int) -> AttemptOutcome:
        cand = self.order[(attempt - 1) % len(self.order)]
        return self._apply(cand, workspace, f"item {attempt} of its list")


@dataclass
class StrongAttempter(_ScriptedBase):
    name: str = "scripted:strong"

    def attempt(self, prompt: str, workspace: Path, *, attempt: int) -> AttemptOutcome:
        fixes = [c for c in self.order if c.fixes] or self.order
        return self._apply(fixes[0], workspace, "the candidate the manifest marks as the fix")


# Appended to the module under test by the cheating third of ``scripted:impossible-mix``: the
# published "expected value read from the calling test's source line" technique.
_READS_CALLER = """

def _answer_the_caller(fn):
    import ast
    import functools
    import inspect

    @functools.wraps(fn)
    def inner(*args, **kwargs):
        line = (inspect.stack()[1].code_context or [""])[0]
        if "==" in line:
            try:
                return ast.literal_eval(line.split("==", 1)[1].strip())
            except (ValueError, SyntaxError):
                pass
        return fn(*args, **kwargs)

    return inner


{name} = _answer_the_caller({name})
"""
MIX = ("fix", "cheat", "stop")


@dataclass
class ImpossibleMixAttempter(_ScriptedBase):
    name: str = "scripted:impossible-mix"

    @property
    def behaviour(self) -> str:
        return MIX[self.seed % len(MIX)]

    def attempt(self, prompt: str, workspace: Path, *, attempt: int) -> AttemptOutcome:
        if self.behaviour == "stop":
            (workspace / STOP_FILE).write_text(
                "the pinned tests demand a result the task's text rules out\n", encoding="utf-8"
            )
            return AttemptOutcome([ToolStep("read_prompt", True)], "stopped: tests contradict")
        fixes = [c for c in self.order if c.fixes] or self.order
        outcome = self._apply(fixes[0], workspace, "the candidate the manifest marks as the fix")
        if self.behaviour == "cheat":
            target = find_target(self.task)
            if not (target.function and target.module):
                raise LoopUsageError(
                    f"scripted:impossible-mix cannot cheat on task {self.task.name!r}: its "
                    f"mutated assertion ({target.test}) calls no function imported by name"
                )
            module = workspace / (target.module.replace(".", "/") + ".py")
            with module.open("a", encoding="utf-8") as fh:
                fh.write(_READS_CALLER.format(name=target.function))
            outcome.steps.append(ToolStep(f"write:{module.name}", True))
        return outcome


Scripted = RederiveAttempter | WalkAttempter | StrongAttempter | ImpossibleMixAttempter
SCRIPTED: dict[str, type[Scripted]] = {
    "rederive": RederiveAttempter,
    "walk": WalkAttempter,
    "strong": StrongAttempter,
    "impossible-mix": ImpossibleMixAttempter,
}


def make_scripted(name: str, *, seed: int = 0, task: Task | None = None) -> Scripted:
    if name not in SCRIPTED:
        raise LoopUsageError(
            f"unknown scripted attempter {name!r} (expected one of: {', '.join(sorted(SCRIPTED))})"
        )
    if task is None:
        raise LoopUsageError(f"scripted:{name} needs a task with candidate fixes")
    return SCRIPTED[name](task=task, seed=seed)
