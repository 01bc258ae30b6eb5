"""score: the rubric applied: a results JSON's points (gradebook: rows, the score preview,
lateness, the written answers) and a person's decisions on top of them (overrides).
May import: core, analysis, build, evidence."""
