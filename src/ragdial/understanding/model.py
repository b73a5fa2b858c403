"""A text classifier over dialog contexts: feature blocks joined side by side, then a linear head.

Saved as a folder: ``model.json`` (task, configs, vocabularies, classes) and ``arrays.npz`` (idf vectors, weights),
read back with ``allow_pickle=False``. The three tasks are configurations of this one class; see
:mod:`ragdial.understanding.tasks`.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
import zipfile
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, TypedDict, cast

import numpy as np
from scipy import sparse

from ragdial.errors import RagdialError
from ragdial.jsontypes import JSONDict, JSONObject, JSONValue
from ragdial.schema import Knowledge, Turn
from ragdial.understanding.features import FeatureBlock, KnowledgeMatch, make_block
from ragdial.understanding.linear import Label, LabelPrediction, LinearHead, Target, label_set, single_label
from ragdial.understanding.saved import array, mapping
from ragdial.understanding.views import as_context

FORMAT = "ragdial-understanding"
FORMAT_VERSION = 1
MODEL_JSON = "model.json"
ARRAYS = "arrays.npz"

Input = str | Sequence[Turn]


class ModelFormatError(RagdialError):
    """A saved model folder that cannot be read; names the file and what is wrong."""


class Part(TypedDict):
    """A feature block or the head in ``model.json``: its constructor arguments and what fitting learned."""

    config: JSONObject
    state: JSONObject


class BlockPart(Part):
    kind: str


def _part(value: JSONValue, name: str) -> Part:
    data = mapping(value, name)
    return {"config": mapping(data["config"], f"{name}.config"), "state": mapping(data["state"], f"{name}.state")}


def _block_part(value: JSONValue, name: str) -> BlockPart:
    kind = mapping(value, name)["kind"]
    if not isinstance(kind, str):
        raise TypeError(f"{name}.kind: expected a text, found {type(kind).__name__}")
    return {"kind": kind, **_part(value, name)}


class TextClassifier:
    """Classify dialog contexts (or bare utterances) into the task's labels.

    ``task`` is ``intent`` (one label a context), ``detector`` (needs knowledge: bool) or ``api_query`` (a set of
    look-up labels, written joined by ``，``; the empty string is "no look-up").
    """

    def __init__(
        self, task: str, blocks: Sequence[FeatureBlock], head: LinearHead, meta: JSONObject | None = None
    ) -> None:
        self.task, self.blocks, self.head = task, list(blocks), head
        self.meta: JSONDict = dict(meta or {})

    # -- features -----------------------------------------------------------------------------------------------
    def features(self, inputs: Sequence[Input]) -> sparse.csr_matrix:
        contexts = [as_context(x) for x in inputs]
        return sparse.hstack([b.transform(contexts) for b in self.blocks], format="csr", dtype=np.float32)

    def set_knowledge(self, items: Sequence[str | Knowledge]) -> None:
        """Match against another knowledge base (items or their texts) from now on: the deployment KB of a
        knowledge-conditioned detector."""
        for block in self.blocks:
            if isinstance(block, KnowledgeMatch):
                block.set_knowledge([i if isinstance(i, str) else i.text for i in items])
            elif hasattr(block, "set_knowledge"):
                block.set_knowledge(items)

    # -- training and prediction ----------------------------------------------------------------------------------
    def fit(
        self, inputs: Sequence[Input], targets: Sequence[Target], classes: Sequence[Label] | None = None
    ) -> TextClassifier:
        """Fit the feature blocks and the head. ``classes`` fixes the label order (default: first seen)."""
        if len(inputs) != len(targets):
            raise ValueError(f"{len(inputs)} inputs but {len(targets)} targets")
        if not inputs:
            raise RagdialError("no training examples")
        contexts = [as_context(x) for x in inputs]
        for block in self.blocks:
            block.fit(contexts)
        if classes is None:
            seen: dict[Label, None] = {}
            for target in targets:
                for label in label_set(target) if self.head.mode == "multilabel" else [single_label(target)]:
                    seen.setdefault(label, None)
            classes = list(seen)
        self.head.fit(self.features(contexts), targets, classes)
        self.meta["train_size"] = len(inputs)
        return self

    @property
    def classes(self) -> list[Label]:
        return list(self.head.classes)

    def probabilities(self, inputs: Sequence[Input]) -> np.ndarray:
        """See :meth:`LinearHead.probabilities`."""
        return self.head.probabilities(self.features(inputs))

    def predict(self, inputs: Sequence[Input]) -> list[LabelPrediction]:
        """One prediction per input: a label (intent), a bool (detector) or a list of labels (api_query)."""
        if not inputs:
            return []
        return self.head.predict(self.features(inputs))

    def predict_one(self, item: Input) -> LabelPrediction:
        return self.predict([item])[0]

    # -- persistence ----------------------------------------------------------------------------------------------
    def save(self, folder: str | Path) -> Path:
        """Write ``model.json`` and ``arrays.npz`` into ``folder`` (replaced whole, never half-written)."""
        folder = Path(folder)
        arrays: dict[str, Any] = {}  # Any: numpy's savez stub types **kwds as its allow_pickle flag
        blocks: list[JSONDict] = []
        for index, block in enumerate(self.blocks):
            data, block_arrays = block.state()
            blocks.append({"kind": block.kind, "config": block.config(), "state": data})
            arrays.update({f"block{index}.{name}": value for name, value in block_arrays.items()})
        head_data, head_arrays = self.head.state()
        arrays.update({f"head.{name}": value for name, value in head_arrays.items()})
        document: JSONDict = {
            "format": FORMAT,
            "version": FORMAT_VERSION,
            "task": self.task,
            "meta": self.meta,
            "blocks": blocks,
            "head": {"config": self.head.config(), "state": head_data},
        }
        folder.parent.mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(prefix=f".{folder.name}.", dir=folder.parent))
        try:
            (staging / MODEL_JSON).write_text(json.dumps(document, ensure_ascii=False), encoding="utf-8")
            np.savez(staging / ARRAYS, **arrays)
            if folder.exists():
                backup = folder.with_name(f".{folder.name}.old")
                shutil.rmtree(backup, ignore_errors=True)
                os.replace(folder, backup)
                os.replace(staging, folder)
                shutil.rmtree(backup, ignore_errors=True)
            else:
                os.replace(staging, folder)
        finally:
            shutil.rmtree(staging, ignore_errors=True)
        return folder

    @classmethod
    def load(cls, folder: str | Path) -> TextClassifier:
        """Read a folder written by :meth:`save`."""
        folder = Path(folder)
        doc_path, arrays_path = folder / MODEL_JSON, folder / ARRAYS
        for path in (doc_path, arrays_path):
            if not path.is_file():
                raise ModelFormatError(f"{path}: missing (not a ragdial understanding model folder)")
        try:
            document: object = json.loads(doc_path.read_text(encoding="utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError) as err:
            raise ModelFormatError(f"{doc_path}: not valid JSON ({err})") from None
        if not isinstance(document, dict) or document.get("format") != FORMAT:
            raise ModelFormatError(f"{doc_path}: field 'format' must be {FORMAT!r}")
        if document.get("version") != FORMAT_VERSION:
            raise ModelFormatError(f"{doc_path}: unsupported version {document.get('version')!r}")
        try:
            with np.load(arrays_path, allow_pickle=False) as npz:
                arrays = {name: npz[name] for name in npz.files}
        except (OSError, ValueError, zipfile.BadZipFile) as err:
            raise ModelFormatError(f"{arrays_path}: cannot read arrays ({err})") from None
        saved = cast(JSONObject, document)  # a JSON object (checked above), read with the checks of ``saved``
        try:
            blocks = []
            for index, value in enumerate(array(saved["blocks"], "blocks")):
                spec = _block_part(value, f"blocks[{index}]")
                block = make_block(spec["kind"], spec["config"])
                prefix = f"block{index}."
                own = {k[len(prefix) :]: v for k, v in arrays.items() if k.startswith(prefix)}
                block.load_state(spec["state"], own)
                blocks.append(block)
            head_part = _part(saved["head"], "head")
            make_head: Callable[..., LinearHead] = LinearHead  # the constructor checks the saved arguments
            head = make_head(**head_part["config"])
            head.load_state(head_part["state"], {k[5:]: v for k, v in arrays.items() if k.startswith("head.")})
            task, meta = saved["task"], saved.get("meta")
            if not isinstance(task, str):
                raise TypeError(f"task: expected a text, found {type(task).__name__}")
            model = cls(task, blocks, head, None if meta is None else mapping(meta, "meta"))
        except (KeyError, TypeError, ValueError) as err:
            raise ModelFormatError(f"{folder}: inconsistent model ({type(err).__name__}: {err})") from None
        width = sum(b.dim for b in blocks)
        if head.weights.shape[1] != width:
            raise ModelFormatError(f"{arrays_path}: head has {head.weights.shape[1]} inputs, features give {width}")
        return model
