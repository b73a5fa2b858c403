"""ragdial: knowledge-grounded, retrieval-augmented task-oriented dialog in Chinese and English."""

__version__ = "0.1.0"
