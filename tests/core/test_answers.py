"""grader/core/answers.py: the written answers found under their headings, whatever the
punctuation around the heading's key word."""
from grader.core.answers import split_answers


def test_a_heading_keeps_its_answer_with_punctuation_around_the_key_word():
    """'# Fusion: before vs after' lost its answer (a fresh walkthrough, 2026-11-27): the key
    word was looked up among space-separated words, 'fusion:' among them."""
    md = ("# Fusion: before vs after\nFused reads q, k, v once.\n\n## (Memory-)bound?\nMemory.\n\n"
          "# Gap, explained\nLaunch overhead.\n\n# Sequence length\nIt grows.\n")
    _, answers = split_answers(md)
    assert answers == {"fusion": "Fused reads q, k, v once.", "bound": "Memory.", "gap": "Launch overhead.",
                       "length": "It grows."}
