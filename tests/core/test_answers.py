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


def test_a_question_kept_above_its_answer_is_told_apart_from_it():
    """A walkthrough found the template's questions printed in the PDF like the student's own
    text (S3): the question the student kept is split off and set apart, the answer follows."""
    from grader.core.answers import _template_prompts, prompt_and_answer
    from grader.report.pdf import _answer
    from conftest import TEMPLATE_DIR
    template = (TEMPLATE_DIR / "report.md").read_text()
    kept = template.replace("What does PyTorch do that you don't?",
                            "What does PyTorch do that you don't?\n\nIt tiles K and V.\n\nAnd it fuses.")
    _, answers = split_answers(kept)
    prompt, own = prompt_and_answer("gap", answers["gap"])
    assert " ".join(prompt.split()) == _template_prompts()["gap"] and own == "It tiles K and V.\n\nAnd it fuses."
    assert prompt_and_answer("gap", "It tiles K and V.") == ("", "It tiles K and V.")
    fenced = answers["gap"].replace("It tiles K and V.", "```\na\n\n\n\nb\n```")   # blank lines as written
    assert prompt_and_answer("gap", fenced)[1].startswith("```\na\n\n\n\nb\n```")
    assert prompt_and_answer("gap", "How much slower? Much.") == ("", "How much slower? Much.")
    typst = _answer("gap", answers["gap"])
    assert typst.startswith("#block(text(fill: luma(110)") and "Question:" in typst and "It tiles K and V" in typst
    assert "Question:" not in _answer("gap", "It tiles K and V.")
