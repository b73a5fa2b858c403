"""Text processing: tokenisation, normalisation, ASR-noise simulation, sentence encoders (``ragdial.text.encoders``)."""
