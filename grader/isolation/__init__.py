"""isolation: where untrusted code runs: the sandbox (bubblewrap, limits, a uid per child),
its seccomp filter, the judge's pipe to the child, descriptor-safe file reading, the options.
May import: core."""
