"""core: the shared leaves every stage reads: the config, the result types and exit codes,
cache paths and locks, the machine's description, text escaping, the written answers.
May import: nothing of the grader's (the bottom of the stack)."""
