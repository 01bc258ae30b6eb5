"""build: the submission parsed (never run) and compiled: the header tiers, the preludes and
the proxy headers, the binding module (dispatch.cpp), the build cache.
May import: core, analysis."""
