"""Grader for the attention assignment: parse -> compile -> check -> bench -> result."""
__version__ = "0.1.0"      # pyproject.toml reads it from here
