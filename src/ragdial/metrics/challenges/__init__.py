"""Challenge scores composed from :mod:`ragdial.metrics`, in the organisers' JSON shapes."""
