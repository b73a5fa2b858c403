"""Local LLM generator on llama-cpp-python with a GGUF model (the packaged offline Qwen2.5 0.5B by default)."""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ragdial.errors import RagdialError
from ragdial.generation.base import GenerationRequest, Generator
from ragdial.generation.locking import locked_stream
from ragdial.generation.model_files import resolve_model
from ragdial.generation.prompts import fit_messages
from ragdial.jsontypes import JSONDict

PROMPT_MARGIN = 16  # tokens kept free beyond the prompt estimate and the reply
THREADS_ENV = "RAGDIAL_LLM_THREADS"
DEFAULT_THREADS = 2  # on a machine busy with other work, 1 thread decodes far faster (no spinning at sync points)


class LlamaCppGenerator(Generator):
    """Streams a chat completion from a GGUF model using the model's own chat template.

    ``model`` is a GGUF path, ``repo:file`` on a reachable hub, or ``None`` (``$RAGDIAL_LLM_MODEL``, else the
    packaged model). The model loads on first use (or ``warm_up()``). One generation runs at a time.
    ``n_threads`` defaults to ``$RAGDIAL_LLM_THREADS`` or 2.
    """

    def __init__(
        self,
        model: str | Path | None = None,
        n_ctx: int = 2048,
        n_threads: int | None = None,
        n_batch: int = 256,
        prompt_lookup: int = 0,
        **llama_options: Any,
    ) -> None:
        self.model_name = model
        self.n_ctx = n_ctx
        self.n_threads = n_threads or int(os.environ.get(THREADS_ENV, DEFAULT_THREADS))
        self.n_batch = n_batch
        self.prompt_lookup = int(prompt_lookup)
        self.llama_options = llama_options
        self._llm: Any = None
        self._lock = threading.Lock()
        self.model_path: Path | None = None

    def warm_up(self) -> None:
        if self._llm is not None:
            return
        try:
            from llama_cpp import Llama
        except ImportError:
            raise RagdialError("the llama.cpp backend needs llama-cpp-python: pip install 'ragdial[llm]'") from None
        self.model_path = resolve_model(self.model_name)
        options = dict(self.llama_options)
        if self.prompt_lookup > 0:  # replies copy from the knowledge in the prompt: draft from it
            from llama_cpp.llama_speculative import LlamaPromptLookupDecoding

            options["draft_model"] = LlamaPromptLookupDecoding(num_pred_tokens=self.prompt_lookup)
            # llama-cpp-python keeps logits of every position with a draft model but sizes its buffer by the
            # logits_all argument: without it the buffer holds n_batch rows and a long prompt overflows it
            options.setdefault("logits_all", True)
        try:
            llm = Llama(
                model_path=str(self.model_path),
                n_ctx=self.n_ctx,
                n_threads=self.n_threads,
                n_threads_batch=self.n_threads,
                n_batch=self.n_batch,
                verbose=False,
                **options,
            )
        except (ValueError, RuntimeError) as err:
            raise RagdialError(f"could not load model {self.model_path}: {err}") from None
        # one short generation before the model is used, so the first user's turn does not pay for the first decode;
        # a service whose warm-up turn is small talk (no generator call on the grounded path) is warm all the same.
        # No lock: the model is not shared yet (warm_up may run inside a stream that holds the lock).
        llm.create_completion("OK", max_tokens=1, temperature=0.0)
        self._llm = llm

    @property
    def llm(self) -> Any:
        self.warm_up()
        return self._llm

    def count_tokens(self, text: str) -> int:
        """Tokens of ``text`` under the model's tokenizer."""
        if not text:
            return 0
        return len(self.llm.tokenize(text.encode("utf-8"), add_bos=False, special=True))

    def fit(self, request: GenerationRequest) -> tuple[list[dict[str, str]], int]:
        """The messages to send (truncated to the context window) and the reply token budget."""
        max_tokens = max(1, min(request.max_tokens, self.n_ctx // 2))
        budget = self.n_ctx - max_tokens - PROMPT_MARGIN
        messages, _ = fit_messages(request, self.count_tokens, budget)
        return messages, max_tokens

    def stream(self, request: GenerationRequest) -> Iterator[str]:
        """The reply's pieces; one generation runs at a time, and an abandoned stream frees the model."""
        return locked_stream(self._lock, lambda: self._pieces(request))

    def _pieces(self, request: GenerationRequest) -> Iterator[str]:
        messages, max_tokens = self.fit(request)
        self.llm.set_seed(request.seed)
        chunks = self.llm.create_chat_completion(
            messages=messages,
            max_tokens=max_tokens,
            temperature=request.temperature,
            top_k=1 if request.temperature <= 0 else 40,
            seed=request.seed,
            stop=list(request.stop) or None,
            stream=True,
        )
        generated = 0
        try:
            for chunk in chunks:
                if "prompt_tokens" not in request.usage:  # the prompt is evaluated before the first chunk
                    request.usage["prompt_tokens"] = int(self.llm.n_tokens)
                if request.cancelled:
                    return
                piece = chunk["choices"][0]["delta"].get("content")
                if piece:
                    generated += 1
                    request.usage["completion_tokens"] = generated
                    yield piece
        finally:
            chunks.close()

    def to_config(self) -> JSONDict:
        model = str(self.model_name) if self.model_name is not None else None
        return {
            "name": "llama",
            "model": model,
            "n_ctx": self.n_ctx,
            "n_threads": self.n_threads,
            "prompt_lookup": self.prompt_lookup,
            **self.llama_options,
        }

    def close(self) -> None:
        with self._lock:
            if self._llm is not None:
                self._llm.close()
                self._llm = None
