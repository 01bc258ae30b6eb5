"""Grader for the attention assignment: parse -> compile -> check -> bench -> result.

The modules are layered (leaves, models, build, isolation, judge, evidence, pipeline,
scoring, report, course, cli): each imports only from its own layer or below, with no
circles; tests/test_layout.py holds that contract and checks it against the imports."""
__version__ = "0.1.0"      # pyproject.toml reads it from here
