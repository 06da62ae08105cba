"""A model that cannot be called is named, and stops the run before a second attempt (exit 2).

Real ``llm`` models: the built-in OpenAI model with no key (llm raises NeedsKeyException before
any connection), and an OpenAI-compatible model whose ``api_base`` is a real HTTP server on
127.0.0.1 answering 401, 404 or a context-length 400 as providers do. Retry-worthy failures (a
plugin error) still use every attempt, and the fail line names the failing step.
"""

from __future__ import annotations

import http.server
import json
import re
import threading

import pytest
from click.testing import CliRunner

from reference_loop._cli.app import main

# Each test starts real model workers and loop runs (3-11 s here).
pytestmark = pytest.mark.slow

ERRORS = {
    "auth": (
        401,
        {
            "error": {
                "message": "Incorrect API key provided",
                "type": "invalid_request_error",
                "code": "invalid_api_key",
            }
        },
    ),
    "unknown": (
        404,
        {
            "error": {
                "message": "The model `nope` does not exist",
                "type": "invalid_request_error",
                "code": "model_not_found",
            }
        },
    ),
    "context": (
        400,
        {
            "error": {
                "message": "This model's maximum context length is 128 tokens",
                "type": "invalid_request_error",
                "code": "context_length_exceeded",
            }
        },
    ),
}


class _Provider:
    """An OpenAI-compatible endpoint on 127.0.0.1 that answers every chat call with one error."""

    def __init__(self, status: int, body: dict) -> None:
        self.calls = 0
        outer = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def log_message(self, *args) -> None:
                pass

            def do_POST(self) -> None:
                outer.calls += 1
                self.rfile.read(int(self.headers.get("Content-Length") or 0))
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def no_keys(llm_mod, monkeypatch, tmp_path):
    for name in ("OPENAI_API_KEY", "LLM_OPENAI_SHOW_RESPONSES"):
        monkeypatch.delenv(name, raising=False)
    (tmp_path / "llm-home").mkdir(exist_ok=True)
    return tmp_path / "llm-home"


def _run(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


def _events(path):
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_a_missing_key_is_named_and_stops_before_the_second_attempt(no_keys, tmp_path):
    events = tmp_path / "run.jsonl"
    r = _run(
        "run",
        "--task",
        "stats-median",
        "--attempter",
        "llm:gpt-4o-mini",
        "--max-attempts",
        "3",
        "--events",
        events,
    )
    assert r.exit_code == 2, (r.stdout, r.stderr)
    assert "model: no key for gpt-4o-mini — llm keys set openai" in r.stderr
    assert "Traceback" not in r.output
    kinds = [e["kind"] for e in _events(events)]
    assert kinds.count("attempt_started") == 1
    assert "attempt 2/" not in r.stderr


@pytest.mark.parametrize("case", sorted(ERRORS))
def test_provider_errors_that_no_retry_changes_stop_the_run(no_keys, tmp_path, case):
    status, body = ERRORS[case]
    provider = _Provider(status, body)
    try:
        (no_keys / "extra-openai-models.yaml").write_text(
            f"- model_id: local-gpt\n  model_name: nope\n  api_base: {provider.base}\n"
        )
        r = _run(
            "run", "--task", "stats-median", "--attempter", "llm:local-gpt", "--max-attempts", "3"
        )
    finally:
        provider.stop()
    assert r.exit_code == 2, (r.stdout, r.stderr)
    assert provider.calls == 1
    line = [ln for ln in r.stderr.splitlines() if ln.startswith("error: ")]
    assert len(line) == 1 and "model: " in line[0] and "local-gpt" in line[0]
    word = {"auth": "refused", "unknown": "not known", "context": "context window"}[case]
    assert word in line[0]


def test_a_plugin_error_is_retried_and_the_fail_line_names_the_step(fixed_model):
    fixed_model.set("mode", "error the GPU is busy")
    r = _run(
        "run",
        "--task",
        "stats-median",
        "--attempter",
        "llm:reference-loop-fixture",
        "--max-attempts",
        "2",
    )
    assert r.exit_code == 1, (r.stdout, r.stderr)
    fails = [ln for ln in r.stderr.splitlines() if re.match(r"attempt \d+/\d+: fail", ln)]
    assert len(fails) == 2
    assert all("— model: " in ln and "the GPU is busy" in ln for ln in fails), fails


def test_run_takes_context_tokens_and_model_options_as_bench_does(fixed_model):
    from reference_loop._cli.bench import bench_cmd

    run_cmd = main.get_command(None, "run")
    for option in ("--context-tokens", "-o"):
        assert any(option in p.opts for p in run_cmd.params), option
        assert any(option in p.opts for p in bench_cmd.params), option
    from reference_loop._attempters.edits import EDIT_FORMATS
    from reference_loop._cli.options import EDIT_FORMAT_CHOICES

    assert EDIT_FORMAT_CHOICES == EDIT_FORMATS
    shared = {p.name: p for p in run_cmd.params}
    bench = {p.name: p for p in bench_cmd.params}
    assert shared["model_options"].help == bench["model_options"].help
    fixed_model.reply = "no edit here"
    r = _run(
        "run",
        "--task",
        "stats-median",
        "--attempter",
        "llm:reference-loop-fixture",
        "--max-attempts",
        "1",
        "-o",
        "max_tokens",
        "77",
        "--context-tokens",
        "50000",
    )
    assert r.exit_code == 1, (r.stdout, r.stderr)
    assert fixed_model.calls()[0]["options"].get("max_tokens") == 77


def test_the_bench_marks_an_arm_void_with_the_reason(no_keys):
    r = _run(
        "bench",
        "--attempter",
        "llm:gpt-4o-mini",
        "--task",
        "stats-median",
        "--seeds",
        "1",
        "--arms",
        "none,last",
        "--max-attempts",
        "3",
    )
    assert r.exit_code == 1, (r.stdout, r.stderr)
    gates = [ln for ln in r.stdout.splitlines() if re.match(r"\s+(none|last): VOID", ln)]
    assert len(gates) == 2, r.stdout
    assert all("model: no key for gpt-4o-mini — llm keys set openai" in ln for ln in gates)
