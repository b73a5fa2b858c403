"""How many prompt tokens a turn of the grounded LLM path makes the model evaluate, under the prompt layout it uses
and two others, with the prompt-head and whole-turn snapshots (issue 13; tokenization only, no decoding).

The requests are the grounded path's own generation requests on the **dev** half of
``benchmarks/data/demo_conversations.jsonl`` (``lookup_speed.record``: a seeded sample of conversations per
language, asked turn by turn). For each request, the tokens to evaluate are the prompt's tokens after the longest
prefix it shares with what a snapshot holds: its head (everything before the knowledge) or the conversation's last
turn (that request's prompt and the reply the next request's dialog shows). Layouts:

- ``now``: the knowledge in the system message, after the instruction and guidance, then the dialog (the default);
- ``knowledge-last``: the system message without the knowledge; the knowledge after the question in the last user
  message, so a session's whole history stays a shared prefix when the knowledge changes;
- ``history-3`` / ``history-1``: the layout ``now`` with only the last 3 dialog turns (the last exchange and the
  question) / the question alone (the generator's ``prompt_turns``).

The last two change what the model reads; this counts tokens only, it says nothing about the replies.

    PYTHONPATH=src python benchmarks/prompt_layouts.py --sample 2
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from lookup_speed import record
from ragdial.generation.base import GenerationRequest
from ragdial.generation.llama import LlamaCppGenerator
from ragdial.generation.lookup import common_prefix
from ragdial.generation.prompts import prompt_text
from ragdial.schema import Speaker

Messages = list[dict[str, str]]


def _knowledge_last(messages: Messages, language: str) -> Messages:
    system = messages[0]["content"]
    cut = system.find("\n\n" + prompt_text(language).knowledge)
    if cut < 0:
        return messages
    out = [{"role": "system", "content": system[:cut]}, *(dict(m) for m in messages[1:])]
    out[-1]["content"] += "\n\n" + system[cut + 2 :]
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sample", type=int, default=2, help="dev conversations per language")
    parser.add_argument("--seed", type=int, default=13)
    args = parser.parse_args(argv)
    generator = LlamaCppGenerator(n_threads=1)
    shortened: dict[int, LlamaCppGenerator] = {}

    def generator_with(turns: int) -> LlamaCppGenerator:
        """A generator fitting prompts with ``prompt_turns=turns`` that counts with the loaded model (none loaded)."""
        if turns not in shortened:
            shortened[turns] = LlamaCppGenerator(n_threads=1, prompt_turns=turns)
            shortened[turns].count_tokens = generator.count_tokens  # type: ignore[method-assign]
        return shortened[turns]

    def tokens(messages: Messages) -> list[int]:
        formatted = generator._format(messages=messages)
        text = formatted.prompt.encode("utf-8")
        return list(generator.llm.tokenize(text, add_bos=not formatted.added_special, special=True))

    layouts = {
        "now": lambda m, r: m,
        "knowledge-last": lambda m, r: _knowledge_last(m, r.language),
        "history-3": lambda m, r: generator_with(3).fit(r)[0],
        "history-1": lambda m, r: generator_with(1).fit(r)[0],
    }
    requests: list[GenerationRequest] = record("dev", args.sample, args.seed)
    new: dict[str, list[int]] = {name: [] for name in layouts}
    last: dict[tuple[str, str], Messages] = {}
    for request in requests:
        messages, _ = generator.fit(request)
        reply = next((t.text for t in reversed(request.context[:-1]) if t.speaker == Speaker.SYSTEM), None)
        for name, layout in layouts.items():
            shaped = layout(messages, request)
            prompt = tokens(shaped)
            if name == "knowledge-last":
                head = common_prefix(tokens([shaped[0], {"role": "user", "content": "x"}]), prompt)
            else:
                head = generator.prompt_tokens(shaped, request.language)[1]
            shared = head
            previous = last.get((name, request.language))
            if previous is not None and reply is not None:
                turn = tokens([*previous, {"role": "assistant", "content": reply}])
                shared = max(shared, common_prefix(turn, prompt))
            new[name].append(len(prompt) - shared)
            last[(name, request.language)] = shaped
    print(f"split dev: {args.sample} conversations per language (seed {args.seed}), {len(requests)} requests\n")
    print("| layout | new prompt tokens per request: mean | median | max |")
    print("|---|--:|--:|--:|")
    for name, counts in new.items():
        print(f"| {name} | {statistics.mean(counts):.1f} | {statistics.median(counts):.0f} | {max(counts)} |")
    generator.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
