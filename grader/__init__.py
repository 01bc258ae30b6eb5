"""Grader for the attention assignment: parse -> compile -> check -> bench -> result."""
