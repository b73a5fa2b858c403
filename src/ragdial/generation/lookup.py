"""Greedy decoding on a llama.cpp model with prompt-lookup drafts verified in one batch.

A grounded reply copies names and values from the knowledge in its prompt, so the tokens after the reply's last few
tokens can often be read off the prompt: find the most recent earlier occurrence of the last ``ngram`` tokens (down
to one) in the prompt and the reply so far, and propose the tokens that followed it. One ``llama_decode`` call
evaluates the token just chosen and the draft together, with logits computed only for those positions (the prompt
is evaluated with logits for its last token only); the draft is accepted up to the first token that greedy decoding
would not have chosen, and that position's argmax is the next token. The result is the greedy reply (a batch runs
other matrix kernels than a one-token decode, so a near tie between two tokens can rarely flip); the draft only
saves decode calls. The draft length adapts: it grows after a fully accepted draft and shrinks after a
rejected one.

The model's key/value cache is reused across calls: a prompt sharing a prefix with the tokens already in the cache
(the instruction and knowledge of a session's earlier turn) evaluates only the part after the shared prefix. A caller
may also name the length of a prompt's constant head (``prefix``: the system instruction and the policy's guidance);
the decoder keeps a snapshot of the cache after that head (``llama_state_seq_get_data``, about 12 KB a token for the
packaged model) and restores it when a later prompt starts with the same head but the cache holds something else
(the other language's turn, another policy), so the head is evaluated once per process, not once per turn. With a
``store`` folder the snapshots are also written there and read back by the next process, so a restarted service
does not evaluate its heads again.
"""

from __future__ import annotations

import contextlib
import ctypes
import hashlib
import os
import struct
from array import array
from collections import OrderedDict
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

MAX_NGRAM = 3
MIN_NGRAM = 2  # a one-token match predicts little; a wrong draft costs more than the decode call it might save
MIN_DRAFT = 3  # on CPU a batch of two costs about two single decodes: shorter drafts do not pay
SNAPSHOTS = 8  # prompt heads kept (two languages x the policies' guidance, with room for a retry's)
TURNS = 8  # whole turns (prompt and reply) kept in memory: a session's next turn may start with one
# llama.cpp's CPU backend repacks Q4_K weights and multiplies them with 4 activation rows at a time (a GEMM), the
# rows left over one by one (GEMV): a call of 4 or 8 tokens costs less than one of 3 or 7 (measured curve in
# docs/benchmarks.md). A draft is cut so that the call (the chosen token and the draft) fills whole blocks.
BATCH_BLOCK = 4
HEAD_MAGIC = b"RDH1"  # a saved head: magic, token count (uint32), the tokens (int32), the sequence's cache


@dataclass
class DecodeStats:
    """What one generation did: prompt tokens (all, those reused from the cache, and of those the ones restored from
    a snapshot of a prompt head), generated tokens, decode calls after the prompt, and draft tokens proposed and
    accepted."""

    prompt_tokens: int = 0
    reused_tokens: int = 0
    restored_tokens: int = 0
    generated: int = 0
    decode_calls: int = 0
    drafted: int = 0
    accepted: int = 0


def fit_draft(draft: list[int], block: int = BATCH_BLOCK) -> list[int]:
    """``draft`` cut so that it and the token before it fill whole blocks of ``block`` rows, or nothing when that
    leaves fewer than ``MIN_DRAFT`` tokens."""
    size = (len(draft) + 1) // block * block - 1 if block > 1 else len(draft)
    return draft[:size] if size >= MIN_DRAFT else []


def common_prefix(a: Sequence[int], b: Sequence[int]) -> int:
    """How many first tokens ``a`` and ``b`` share."""
    count = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        count += 1
    return count


class DraftIndex:
    """Where each n-gram (n = 1..MAX_NGRAM) of a token sequence last started, kept up to date as tokens are added."""

    def __init__(self, tokens: Sequence[int] = ()) -> None:
        self.tokens: list[int] = []
        self.last: dict[tuple[int, ...], int] = {}
        for token in tokens:
            self.add(token)

    def add(self, token: int) -> None:
        # index the n-grams that end just before the new token: their continuation starts at the new token
        end = len(self.tokens)
        for n in range(1, MAX_NGRAM + 1):
            if end >= n:
                self.last[tuple(self.tokens[end - n : end])] = end
        self.tokens.append(token)

    def draft(self, size: int) -> list[int]:
        """Up to ``size`` tokens that followed the latest earlier occurrence of the longest matching suffix."""
        if size <= 0:
            return []
        end = len(self.tokens)
        for n in range(min(MAX_NGRAM, end), MIN_NGRAM - 1, -1):
            start = self.last.get(tuple(self.tokens[end - n :]))
            if start is not None and start < end:
                return self.tokens[start : min(start + size, end)]
        return []


class GreedyDecoder:
    """Greedy decoding of token ids on a ``llama_cpp.Llama`` (``logits_all`` off), with optional prompt-lookup drafts
    of at most ``draft`` tokens and snapshots of up to ``snapshots`` prompt heads. One decoder per model; the caller
    serialises calls."""

    def __init__(
        self,
        llm: Any,  # Any: llama_cpp (untyped Llama)
        draft: int = 0,
        snapshots: int = SNAPSHOTS,
        store: Path | None = None,
        turns: int = 0,
    ) -> None:
        import llama_cpp

        self.llm = llm
        self.max_draft = max(0, int(draft))
        self.max_snapshots = max(0, int(snapshots))
        self.max_turns = max(0, int(turns))
        self.turns: OrderedDict[tuple[int, ...], bytes] = OrderedDict()  # a whole turn's tokens -> its cache, LRU
        self.store = store if self.max_snapshots else None  # a folder keeping the snapshots across restarts
        self.block = BATCH_BLOCK
        self.snapshots: OrderedDict[tuple[int, ...], bytes] = OrderedDict()  # prompt head -> its cache, LRU order
        self._api = llama_cpp
        self._vocab = llm._model.vocab
        self._n_vocab = llm.n_vocab()
        self.stats = DecodeStats()
        if self.store is not None:
            self._load_store(self.store)

    def _load_store(self, store: Path) -> None:
        """The snapshots saved in ``store`` by an earlier process (newest kept); an unreadable file is removed."""
        try:
            files = sorted(store.glob("*.head"), key=lambda f: f.stat().st_mtime_ns)
        except OSError:
            return
        for file in files[-self.max_snapshots :]:
            try:
                blob = file.read_bytes()
                count = struct.unpack_from("<I", blob, len(HEAD_MAGIC))[0]
                start = len(HEAD_MAGIC) + 4
                if blob[: len(HEAD_MAGIC)] != HEAD_MAGIC or len(blob) <= start + 4 * count:
                    raise ValueError("not a saved prompt head")
                tokens = array("i", blob[start : start + 4 * count])
                self.snapshots[tuple(tokens)] = blob[start + 4 * count :]
            except (OSError, ValueError, struct.error):
                file.unlink(missing_ok=True)

    def _head_file(self, head: tuple[int, ...]) -> Path | None:
        if self.store is None:
            return None
        return self.store / (hashlib.sha256(array("i", head).tobytes()).hexdigest()[:32] + ".head")

    def _write(self, head: tuple[int, ...], data: bytes) -> None:
        """Keep ``head``'s snapshot in the store too (best effort: a read-only or full disk only loses the saving)."""
        file = self._head_file(head)
        if file is None:
            return
        partial = file.with_name(f"{file.name}.{os.getpid()}.part")
        try:
            file.parent.mkdir(parents=True, exist_ok=True)
            partial.write_bytes(HEAD_MAGIC + struct.pack("<I", len(head)) + array("i", head).tobytes() + data)
            os.replace(partial, file)
            # as many files as heads kept in memory: the least recently used go (a retry's one-off head among them)
            for old in sorted(file.parent.glob("*.head"), key=lambda f: f.stat().st_mtime_ns)[: -self.max_snapshots]:
                old.unlink(missing_ok=True)
        except OSError:
            partial.unlink(missing_ok=True)

    def is_end(self, token: int) -> bool:
        return bool(self._api.llama_vocab_is_eog(self._vocab, token))

    def _decode(self, tokens: Sequence[int], start: int, logits: bool) -> None:
        """Evaluate ``tokens`` at positions ``start``...; logits for every one (``logits``) or for the last only."""
        batch = self.llm._batch.batch
        batch.n_tokens = len(tokens)
        for i, token in enumerate(tokens):
            batch.token[i] = token
            batch.pos[i] = start + i
            batch.seq_id[i][0] = 0
            batch.n_seq_id[i] = 1
            batch.logits[i] = logits
        batch.logits[len(tokens) - 1] = True
        self.llm._ctx.decode(self.llm._batch)

    def _argmax(self, row: int) -> int:
        pointer = self._api.llama_get_logits_ith(self.llm._ctx.ctx, row)
        return int(np.argmax(np.ctypeslib.as_array(pointer, shape=(self._n_vocab,))))

    def _keep(self, tokens: Sequence[int]) -> None:
        """Tell the Llama object which tokens its cache holds, so its own generate() reuses or resets it correctly."""
        llm = self.llm
        count = len(tokens)
        llm._ctx.kv_cache_seq_rm(-1, count, -1)
        llm.input_ids[:count] = tokens
        llm.n_tokens = count
        llm._requires_eval = True

    def _state(self) -> bytes | None:
        """The cache of sequence 0 as llama.cpp serialises it (None when it refuses)."""
        ctx = self.llm._ctx.ctx
        size = self._api.llama_state_seq_get_size(ctx, 0)
        buffer = (ctypes.c_uint8 * size)()
        if self._api.llama_state_seq_get_data(ctx, buffer, size, 0) != size:
            return None
        return bytes(buffer)

    def _save(self, head: tuple[int, ...]) -> None:
        """Keep the cache of sequence 0 (exactly the tokens of ``head``) as the snapshot of ``head``."""
        data = self._state()
        if data is None:
            return
        self.snapshots[head] = data
        self._write(head, data)
        while len(self.snapshots) > self.max_snapshots:
            self.snapshots.popitem(last=False)

    def _save_turn(self, tokens: tuple[int, ...]) -> None:
        """Keep the cache of a whole turn (its prompt and the reply tokens the cache holds), in memory only: the
        session's next turn repeats them when its knowledge is the same, and then evaluates only what it adds."""
        if not self.max_turns or not tokens or tokens in self.turns:
            return
        data = self._state()
        if data is None:
            return
        self.turns[tokens] = data
        while len(self.turns) > self.max_turns:
            self.turns.popitem(last=False)

    def _restore(self, prompt: list[int], shared: int) -> int:
        """Load the snapshot (a prompt head, or a whole earlier turn) that shares the longest prefix with ``prompt``
        if that is longer than ``shared`` (the prefix the cache already shares with ``prompt``); the number of prompt
        tokens the cache now holds (the caller drops what lies beyond them)."""
        best: tuple[int, ...] = ()
        length, kept = shared, self.snapshots
        for kind in (self.snapshots, self.turns):
            for tokens in kind:
                common = common_prefix(tokens, prompt) if len(tokens) > length else 0
                if common > length and (common == len(tokens) or kind is self.turns):  # a head: all of it
                    best, length, kept = tokens, common, kind
        if not best:
            return shared
        data = kept[best]
        kept.move_to_end(best)
        self.llm._ctx.kv_cache_seq_rm(-1, 0, -1)
        source = (ctypes.c_uint8 * len(data)).from_buffer_copy(data)
        if self._api.llama_state_seq_set_data(self.llm._ctx.ctx, source, len(data), 0) != len(data):
            self.llm._ctx.kv_cache_seq_rm(-1, 0, -1)  # a failed load leaves nothing half-restored
            del kept[best]
            file = self._head_file(best) if kept is self.snapshots else None
            if file is not None:
                file.unlink(missing_ok=True)
            return 0
        self.stats.restored_tokens = length
        file = self._head_file(best) if kept is self.snapshots else None
        if file is not None:
            with contextlib.suppress(OSError):  # recently used: the last file the store drops (not made if gone)
                os.utime(file)
        return length

    def _prefill(self, prompt: list[int], prefix: int) -> int:
        """Put ``prompt`` in the cache (reusing what it shares, restoring a snapshot of its head, snapshotting the
        first ``prefix`` tokens when they are not kept yet); the batch row of the last token's logits."""
        llm = self.llm
        cached = llm.input_ids[: llm.n_tokens].tolist()
        shared = 0
        for a, b in zip(cached, prompt, strict=False):
            if a != b:
                break
            shared += 1
        if self.max_snapshots:
            shared = self._restore(prompt, shared)
        shared = min(shared, len(prompt) - 1)  # the last prompt token is evaluated again for its logits
        self.stats.reused_tokens = shared
        llm._ctx.kv_cache_seq_rm(-1, shared, -1)
        llm.n_tokens = shared
        llm.input_ids[:shared] = prompt[:shared]
        head = tuple(prompt[:prefix]) if self.max_snapshots and shared <= prefix < len(prompt) else ()
        if head in self.snapshots:
            head = ()
        stops = sorted({len(prompt), *([prefix] if head else [])})
        position, row = shared, 0
        for stop in stops:
            for begin in range(position, stop, llm.n_batch):
                chunk = prompt[begin : min(begin + llm.n_batch, stop)]
                self._decode(chunk, begin, logits=False)
                row = len(chunk) - 1
            position = max(position, stop)
            if head and stop == prefix:
                self._save(head)
        return row

    def generate(self, prompt: Sequence[int], max_tokens: int, prefix: int = 0) -> Iterator[int]:
        """The greedy continuation of ``prompt`` (token ids), one token at a time, ending before an end-of-generation
        token or after ``max_tokens`` tokens. ``prefix``: how many of the prompt's first tokens are a head that
        later prompts repeat (0: none); a snapshot of it is kept. The cache keeps the prompt and the reply when the
        stream ends."""
        llm = self.llm
        prompt = list(prompt)
        if not prompt:
            raise ValueError("an empty prompt")
        if len(prompt) + max_tokens > llm.n_ctx():
            raise ValueError(f"the prompt ({len(prompt)} tokens) and {max_tokens} new tokens exceed the context")
        self.stats = stats = DecodeStats(prompt_tokens=len(prompt))
        try:
            row = self._prefill(prompt, prefix)
        except BaseException:
            self._keep([])  # the cache's content is unknown: start from nothing next time
            raise
        position = len(prompt)
        in_cache = list(prompt)  # tokens whose keys and values are in the cache, in order
        index = DraftIndex(prompt)
        pending = self._argmax(row)
        size = self.max_draft
        failed = False
        try:
            while True:
                if self.is_end(pending):
                    return
                index.add(pending)
                stats.generated += 1
                yield pending
                if stats.generated >= max_tokens:
                    return
                draft = index.draft(min(size, max_tokens - stats.generated, llm.n_batch - 1))
                draft = fit_draft(draft[: max(0, llm.n_ctx() - position - 1)], self.block)
                self._decode([pending, *draft], position, logits=True)
                stats.decode_calls += 1
                stats.drafted += len(draft)
                in_cache.append(pending)
                position += 1
                accepted = 0
                for i, token in enumerate(draft):
                    choice = self._argmax(i)
                    if choice != token:
                        pending = choice
                        break
                    accepted += 1
                    if self.is_end(token):
                        stats.accepted += accepted
                        in_cache.append(token)
                        return
                    in_cache.append(token)
                    index.add(token)
                    stats.generated += 1
                    yield token
                    if stats.generated >= max_tokens:
                        stats.accepted += accepted
                        return
                else:
                    pending = self._argmax(len(draft))
                stats.accepted += accepted
                position += accepted
                llm._ctx.kv_cache_seq_rm(-1, position, -1)  # the rejected draft's entries
                if draft:
                    size = min(self.max_draft, size + 2) if accepted == len(draft) else max(1, accepted + 1)
                else:
                    size = self.max_draft
        except Exception:
            failed = True
            raise
        finally:
            self._keep(in_cache)
            if not failed:
                self._save_turn(tuple(in_cache))
