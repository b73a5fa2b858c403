"""Generate replies for every example of a dataset (official files: ``ragdial.challenges``)."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TypedDict, Unpack

from ragdial.generation.base import GenerationRequest, Generator
from ragdial.generation.exemplars import Exemplars
from ragdial.schema import Dataset, Example


class RequestOptions(TypedDict, total=False):
    """``request_for``'s options, as ``generate_all`` passes them on."""

    max_tokens: int
    seed: int
    exemplars: Exemplars | None


def request_for(
    example: Example,
    dataset: Dataset,
    max_tokens: int = 128,
    seed: int = 0,
    exemplars: Exemplars | None = None,
) -> GenerationRequest:
    """A deterministic request for ``example`` grounded in its (gold or predicted) ``knowledge_ids``, with the
    exemplars a ``DialogSystem`` would attach (``Exemplars.for_context``, never from the example's dialog)."""
    knowledge = [dataset.kb.get(i) for i in example.knowledge_ids if i in dataset.kb]
    shots = exemplars.for_context(example.context, example.dialog_id) if exemplars else []
    return GenerationRequest(
        context=list(example.context),
        knowledge=knowledge,
        language=dataset.language,
        max_tokens=max_tokens,
        temperature=0.0,
        seed=seed,
        exemplars=shots,
    )


def generate_all(
    generator: Generator,
    dataset: Dataset,
    examples: Iterable[Example],
    on_done: Callable[[Example], None] | None = None,
    **request_options: Unpack[RequestOptions],
) -> list[Example]:
    """Set ``response`` on each example (DSTC: only knowledge-seeking ones) and return them."""
    done = []
    for example in examples:
        if dataset.format in ("dstc9", "dstc11") and not example.needs_knowledge:
            example.response = None
        else:
            example.response = generator.generate(request_for(example, dataset, **request_options)).strip()
        done.append(example)
        if on_done:
            on_done(example)
    return done
