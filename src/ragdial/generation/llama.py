"""Local LLM generator on llama-cpp-python with a GGUF model (the packaged offline Qwen2.5 0.5B by default).

Greedy requests (temperature 0, what the grounded path sends) go through ``ragdial.generation.lookup.GreedyDecoder``
unless both ``prompt_lookup`` and ``prefix_cache`` are 0: the cache of the previous prompt reused for the shared
prefix, snapshots of the prompt's constant head (the system instruction and the policy's guidance, everything before
the knowledge) restored when the cache holds another prompt, and optional prompt-lookup drafts verified in one
batch. Other requests, and every request with both off (the plain llama.cpp baseline of the benchmarks), use
llama-cpp-python's own ``create_chat_completion``.
"""

from __future__ import annotations

import codecs
import hashlib
import importlib.util
import os
import threading
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

from ragdial.errors import RagdialError
from ragdial.generation.base import GenerationRequest, Generator
from ragdial.generation.locking import locked_stream
from ragdial.generation.lookup import SNAPSHOTS, TURNS, GreedyDecoder
from ragdial.generation.model_files import resolve_model
from ragdial.generation.prompts import fit_messages, prompt_text
from ragdial.jsontypes import JSONDict
from ragdial.paths import cache_dir

HEAD_CACHE = "cache"  # head_dir's default: a folder of ragdial's cache (``ragdial.paths.cache_dir``)
PROMPT_MARGIN = 16  # tokens kept free beyond the prompt estimate and the reply
# dialog turns the prompt shows: the last exchange and the question (0: every turn the pipeline passes that fits).
# Older turns cost prompt evaluation every time the knowledge changes; on the dev conversations the replies were as
# good with 3 (grounded-correct 0.545 vs 0.538 with all), worse with 1 (0.523, follow-ups 0.467 vs 0.600)
PROMPT_TURNS = 3
THREADS_ENV = "RAGDIAL_LLM_THREADS"
DEFAULT_THREADS = 2  # on a machine busy with other work, 1 thread decodes far faster (no spinning at sync points)


def threads_for_load(load: float, cpus: int, most: int = DEFAULT_THREADS) -> int:
    """Threads for the next generation: up to ``most`` (and the cores), but 1 when the 1-minute load average shows
    the cores busy beyond what this generation adds: llama.cpp's threads wait for each other at every matrix, so on
    an oversubscribed machine 2 threads decode about 6x slower than 1 (docs/benchmarks/grounded.md)."""
    return 1 if load >= cpus + 1 else max(1, min(most, cpus))


def _load_average() -> float:
    return os.getloadavg()[0]


class LlamaCppGenerator(Generator):
    """Streams a chat completion from a GGUF model using the model's own chat template.

    ``model`` is a GGUF path, ``repo:file`` on a reachable hub, or ``None`` (``$RAGDIAL_LLM_MODEL``, else the
    packaged model). The model loads on first use (or ``warm_up()``). One generation runs at a time.
    ``n_threads`` defaults to ``$RAGDIAL_LLM_THREADS``; without either, each generation picks 2 threads, or 1 while
    the machine is busier than its cores (``threads_for_load``). ``prompt_lookup`` is the longest draft (tokens) of
    prompt-lookup decoding for greedy requests (0: no drafts); ``prefix_cache`` is how many prompt heads are kept
    as cache snapshots; ``head_dir`` keeps them on disk for the next start (``"cache"``: under ragdial's cache
    folder, per model file, llama.cpp build and context shape; a folder; ``None``: memory only); ``turn_cache`` is
    how many whole turns (prompt and reply) are kept as snapshots in memory, so a session's next turn over the same
    knowledge evaluates only its new dialog; ``prompt_turns`` shows the model only the last that many dialog turns
    (``prompts.recent_turns``; 3 by default, 0: all that fit). With ``prompt_lookup`` and ``prefix_cache`` both 0
    every request goes through llama-cpp-python's sampler.
    """

    def __init__(
        self,
        model: str | Path | None = None,
        n_ctx: int = 2048,
        n_threads: int | None = None,
        n_batch: int = 256,
        prompt_lookup: int = 0,
        prefix_cache: int = SNAPSHOTS,
        head_dir: str | Path | None = HEAD_CACHE,
        turn_cache: int = TURNS,
        prompt_turns: int = PROMPT_TURNS,
        **llama_options: Any,  # Any: llama_cpp (Llama's own keyword options pass through)
    ) -> None:
        self.model_name = model
        self.n_ctx = n_ctx
        fixed = n_threads or int(os.environ.get(THREADS_ENV, 0))
        self.auto_threads = not fixed
        self.n_threads = fixed or threads_for_load(_load_average(), os.cpu_count() or 1)
        self.n_batch = n_batch
        self.prompt_lookup = int(prompt_lookup)
        self.prefix_cache = int(prefix_cache)
        self.head_dir = head_dir
        self.turn_cache = int(turn_cache)
        self.prompt_turns = int(prompt_turns)
        self.llama_options = llama_options
        self._llm: Any = None  # Any: llama_cpp (untyped Llama)
        self._decoder: GreedyDecoder | None = None
        self._format: Any = None  # Any: llama_cpp (Jinja2ChatFormatter)
        self._lock = threading.Lock()
        self._loading = threading.Lock()
        self.model_path: Path | None = None

    def check(self) -> Path:
        """That llama-cpp-python is installed and the GGUF is there (joined and verified, for the packaged model),
        without loading it: the error a missing model gives, before anything waits for the load."""
        if importlib.util.find_spec("llama_cpp") is None:
            raise RagdialError("the llama.cpp backend needs llama-cpp-python: pip install 'ragdial[llm]'")
        if self.model_path is None:
            self.model_path = resolve_model(self.model_name)
        return self.model_path

    def warm_up(self) -> None:
        """Load the model (once: a second caller waits for the first's load)."""
        if self._llm is not None:
            return
        with self._loading:
            if self._llm is None:
                self._load()

    def _load(self) -> None:
        model_path = self.check()
        try:
            from llama_cpp import Llama
        except ImportError:
            raise RagdialError("the llama.cpp backend needs llama-cpp-python: pip install 'ragdial[llm]'") from None
        options = dict(self.llama_options)
        try:
            llm = Llama(
                model_path=str(model_path),
                n_ctx=self.n_ctx,
                n_threads=self.n_threads,
                n_threads_batch=self.n_threads,
                n_batch=self.n_batch,
                verbose=False,
                **options,
            )
        except (ValueError, RuntimeError) as err:
            raise RagdialError(f"could not load model {model_path}: {err}") from None
        # one short generation before the model is used, so the first user's turn does not pay for the first decode;
        # a service whose warm-up turn is small talk (no generator call on the grounded path) is warm all the same.
        # No lock: the model is not shared yet (warm_up may run inside a stream that holds the lock).
        llm.create_completion("OK", max_tokens=1, temperature=0.0)
        if self.prompt_lookup > 0 or self.prefix_cache > 0:
            from llama_cpp.llama_chat_format import Jinja2ChatFormatter

            template = llm.metadata.get("tokenizer.chat_template")
            if template:
                eos, bos = llm.token_eos(), llm.token_bos()
                self._format = Jinja2ChatFormatter(
                    template=template,
                    eos_token=llm._model.token_get_text(eos) if eos != -1 else "",
                    bos_token=llm._model.token_get_text(bos) if bos != -1 else "",
                )
                store = self._head_store(llm)
                self._decoder = GreedyDecoder(llm, self.prompt_lookup, self.prefix_cache, store, self.turn_cache)
        self._llm = llm

    def _head_store(self, llm: Any) -> Path | None:  # Any: llama_cpp (untyped Llama)
        """The folder of saved prompt heads for this model file, llama.cpp build and context shape (None: off)."""
        if not self.head_dir or self.model_path is None:
            return None
        import llama_cpp

        stat = self.model_path.stat()
        shape = f"{self.model_path.resolve()}|{stat.st_size}|{stat.st_mtime_ns}|{llama_cpp.__version__}|"
        shape += f"{self.n_ctx}|{self.n_batch}|{sorted(self.llama_options.items())}"
        key = hashlib.sha256(shape.encode("utf-8")).hexdigest()[:16]
        root = cache_dir() / "llm-heads" if str(self.head_dir) == HEAD_CACHE else Path(self.head_dir).expanduser()
        return root / key

    def prime(self, request: GenerationRequest) -> None:
        """One token of ``request`` through the path its turns take: the model loaded, and for a greedy request
        the snapshot of its prompt head (the instruction and the policy's guidance) kept, so the first turn of
        each language evaluates only its knowledge and dialog."""
        self.generate(replace(request, max_tokens=1, usage={}, cancel=None))

    @property
    def llm(self) -> Any:  # Any: llama_cpp (untyped Llama)
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
        messages, _ = fit_messages(request, self.count_tokens, budget, self.prompt_turns)
        return messages, max_tokens

    def stream(self, request: GenerationRequest) -> Iterator[str]:
        """The reply's pieces; one generation runs at a time, and an abandoned stream frees the model."""
        return locked_stream(self._lock, lambda: self._pieces(request))

    def _fit_threads(self) -> None:
        """With no fixed thread count, set the one the machine's load calls for now."""
        if not self.auto_threads:
            return
        wanted = threads_for_load(_load_average(), os.cpu_count() or 1)
        if wanted != self.n_threads:
            from llama_cpp import llama_set_n_threads

            llama_set_n_threads(self.llm._ctx.ctx, wanted, wanted)
            self.n_threads = wanted

    def _pieces(self, request: GenerationRequest) -> Iterator[str]:
        messages, max_tokens = self.fit(request)
        self._fit_threads()
        if self._decoder is not None and request.temperature <= 0:
            yield from self._greedy(self._decoder, messages, max_tokens, request)
            return
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

    def prompt_tokens(self, messages: list[dict[str, str]], language: str = "zh") -> tuple[list[int], int]:
        """The token ids of ``messages`` under the model's chat template, as ``create_chat_completion`` builds them,
        and how many of them are the constant head: the tokens before the knowledge block of ``language``'s prompt
        (0 when there is none)."""
        formatted = self._format(messages=messages)
        add_bos = not formatted.added_special
        tokens = list(self.llm.tokenize(formatted.prompt.encode("utf-8"), add_bos=add_bos, special=True))
        cut = formatted.prompt.find("\n\n" + prompt_text(language).knowledge)
        if cut <= 0:
            return tokens, 0
        head = self.llm.tokenize(formatted.prompt[:cut].encode("utf-8"), add_bos=add_bos, special=True)
        shared = 0
        for a, b in zip(head, tokens, strict=False):  # the tokens at the cut may merge: keep those both agree on
            if a != b:
                break
            shared += 1
        return tokens, shared

    def _greedy(
        self, decoder: GreedyDecoder, messages: list[dict[str, str]], max_tokens: int, request: GenerationRequest
    ) -> Iterator[str]:
        prompt, head = self.prompt_tokens(messages, request.language)
        request.usage["prompt_tokens"] = len(prompt)
        text = codecs.getincrementaldecoder("utf-8")(errors="replace")
        stops = [s for s in request.stop if s]
        held = ""  # text not yet yielded because a stop string may start in it
        generated = 0
        for token in decoder.generate(prompt, max_tokens, prefix=head):
            if request.cancelled:
                return
            generated += 1
            request.usage["completion_tokens"] = generated
            piece = text.decode(self.llm.detokenize([token]))
            if not piece:
                continue
            if not stops:
                yield piece
                continue
            held += piece
            cut = min((held.find(s) for s in stops if s in held), default=-1)
            if cut >= 0:
                if held[:cut]:
                    yield held[:cut]
                return
            keep = max((k for s in stops for k in range(1, len(s)) if held.endswith(s[:k])), default=0)
            if len(held) > keep:
                yield held[: len(held) - keep]
                held = held[len(held) - keep :]
        if held:
            yield held

    def to_config(self) -> JSONDict:
        model = str(self.model_name) if self.model_name is not None else None
        return {
            "name": "llama",
            "model": model,
            "n_ctx": self.n_ctx,
            "n_threads": None if self.auto_threads else self.n_threads,
            "prompt_lookup": self.prompt_lookup,
            "prefix_cache": self.prefix_cache,
            "head_dir": None if self.head_dir is None else str(self.head_dir),
            "turn_cache": self.turn_cache,
            "prompt_turns": self.prompt_turns,
            **self.llama_options,
        }

    def close(self) -> None:
        with self._lock:
            if self._llm is not None:
                self._llm.close()
                self._llm = None
                self._decoder = self._format = None
