"""Text processing: tokenisation, normalisation, ASR-noise simulation."""
