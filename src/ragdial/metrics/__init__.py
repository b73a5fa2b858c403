"""Metrics, each implemented once; challenge scores composed from them."""
