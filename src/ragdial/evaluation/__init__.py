"""One evaluation layer: an :class:`Evaluator` per kind of component (retrieval, detection, generation, the whole
pipeline), each returning an :class:`EvaluationResult`; ``run_benchmark`` for ``ragdial run``; one latency summary.

The CLI and ``benchmarks/`` are thin callers of these.
"""

from ragdial.evaluation.base import EvaluationResult, Evaluator
from ragdial.evaluation.detection import DetectionEvaluator, detection_prf
from ragdial.evaluation.generation import GenerationEvaluator, char_scores, dstc_scores, reply_scores
from ragdial.evaluation.latency import Latency, time_calls
from ragdial.evaluation.pipeline import BenchmarkResult, PipelineEvaluator, prediction_of, run_benchmark
from ragdial.evaluation.retrieval import (
    KS,
    RetrievalEvaluator,
    RetrievalModel,
    best_cut,
    recall_at,
    selection_scores,
)

__all__ = [
    "KS",
    "BenchmarkResult",
    "DetectionEvaluator",
    "EvaluationResult",
    "Evaluator",
    "GenerationEvaluator",
    "Latency",
    "PipelineEvaluator",
    "RetrievalEvaluator",
    "RetrievalModel",
    "best_cut",
    "char_scores",
    "detection_prf",
    "dstc_scores",
    "prediction_of",
    "recall_at",
    "reply_scores",
    "run_benchmark",
    "selection_scores",
    "time_calls",
]
