"""Diagnosis of a wrong answer: which usual mistake the error pattern matches.

`diagnose(got, expected, inputs, tolerance)` is called by the check stage when an output
is off by more than the tolerance; it returns one phrase naming the mistake the error
matches (missing or doubled 1/sqrt(D) scale, no max shift, transposed K, rows or keys past
a tile boundary, only some heads/batches written, ...) with the worst element's index, or
None when no known pattern fits. Shapes (batch, heads, seq, head_dim), float64, CPU.
"""
from __future__ import annotations


def diagnose(got, expected, inputs: tuple, tolerance: float) -> str | None:
    """The name of the mistake the error matches, or None (no pattern recognised yet)."""
    return None
