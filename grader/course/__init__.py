"""course: a class graded: the batch (discovery, the sandboxed schedule, the gradebook and
PDFs written), Gradescope's autograder, similarity between submissions, the class summary.
May import: core, isolation, analysis, build, judge, evidence, run, score, report."""
