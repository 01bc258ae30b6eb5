"""analysis: pure computations of the figures the grade and the report quote: the AI model,
rooflines, Nsight Compute's CSVs, performance tiers, the slowdown's interval, numerics, diagnoses.
May import: core."""
