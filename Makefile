# Thin adapters over `python -m grader`. The first target run sets up Python
# (tools/python.sh): it reuses an interpreter that has the dependencies, else
# creates .venv from pyproject.toml.
#
#   make grade [SUBMISSION=path] [BACKEND=auto|cpu|cuda|triton]  grade one submission (default: the student_template
#                                                           folder: attention.py, report.md, profiles/)
#   make grade RUN=naive                                    ... and keep the results in report/history/ as "naive"
#   make report [BEFORE=naive]                              re-render report/report.pdf: report.md and profiles/
#                                                           read again, nothing re-timed (vs the run labelled naive)
#   make grader ARGS="roofline --results report/results.json"   any `python -m grader` command, right interpreter
#   make demo                                               grade the reference kernels (model reports)
#   make test                                               the test suite (CPU; GPU tests skip)
#   make check-compile [SUBMISSION=path]                    compile only (nvcc works without a GPU)
#   make profile [SUBMISSION=path] [LABEL=before|after] [MODEL=naive|fused] [BACKEND=cpu|triton]
#                                                           Nsight Compute -> profiles/ on a GPU machine; elsewhere
#                                                           the CPU profiler -> profiles/LABEL_cpu.csv
#   make test-gpu                                           the GPU tests (on a GPU machine)
#   make bench-reference                                    reference kernels vs SDPA, table
#   make fidelity [SUBMISSION=path]                         5 grades of one submission: timing spread
#   make batch SUBMISSIONS=dir [BATCH_OUT=dir] [GPUS=0,1|visible] [HIDDEN=file] [JOBS=n]
#              [SHARD=k/n] [TIMESTAMPS=csv] [SANDBOX=auto|on|off]
#                                                           grade a class: gradebook, PDFs, Gradescope
#   make batch-demo [GPUS=0]                                the fixture class of known-good/-bad submissions
#   make redteam                                            grade the class of attacks on the judge: what held
#   make collect SHARDS="dir1 dir2 ..." [MERGED=dir]        merge --shard outputs into one gradebook
#   make gradescope                                         report/autograder.zip (Gradescope, CPU path)

SUBMISSION ?= student_template
BACKEND ?= auto
OUT ?= report

# evaluated once, on first use
PYTHON = $(eval PYTHON := $(shell tools/python.sh))$(PYTHON)

LABEL ?= after
BATCH_OUT ?= report/batch

.PHONY: grader grade report demo test test-gpu check-compile profile bench-reference fidelity clean-cache batch batch-demo \
	collect gradescope redteam

grade:
	@$(PYTHON) -m grader grade $(SUBMISSION) --backend $(BACKEND) --json $(OUT)/results.json --report $(if $(RUN),--label $(RUN)) $(if $(BEFORE),--before $(BEFORE))

report:
	@$(PYTHON) -m grader report $(OUT)/results.json --out $(OUT)/report.pdf $(if $(BEFORE),--before $(BEFORE))

grader:
	@$(PYTHON) -m grader $(ARGS)

demo:
	@set -e; cuda=0; \
	if [ "$(BACKEND)" != cpu ] && $(PYTHON) -c 'import sys, torch; sys.exit(not torch.cuda.is_available())'; then cuda=1; fi; \
	for ref in naive fused fused_opt; do \
	  src=reference/$$ref.cpp; \
	  if [ $$cuda = 1 ]; then src=reference/$$ref.cu; [ $$ref = fused_opt ] && src=reference/fused_tc.cu; fi; \
	  echo "=== reference $$ref ($$src) ==="; \
	  $(PYTHON) tools/demo_submission.py $$src $(OUT)/demo-$$ref/submission >/dev/null; \
	  $(PYTHON) -m grader grade $(OUT)/demo-$$ref/submission --backend $(BACKEND) --json $(OUT)/demo-$$ref/results.json --report || true; \
	done

test:
	@$(PYTHON) -m pytest -q

test-gpu:
	@$(PYTHON) -m pytest -q -m gpu

check-compile:
	@$(PYTHON) -m grader check-compile $(SUBMISSION)

profile:
	@$(PYTHON) -m grader profile $(SUBMISSION) --label $(LABEL) --backend $(BACKEND) $(if $(MODEL),--model $(MODEL))

bench-reference:
	@$(PYTHON) tools/bench_reference.py --json $(OUT)/bench-reference.json

fidelity:
	@$(PYTHON) tools/fidelity.py $(if $(filter student_template student_template/attention.py,$(SUBMISSION)),reference/fused.cu,$(SUBMISSION))

batch:
	@test -n "$(SUBMISSIONS)" || { echo "usage: make batch SUBMISSIONS=folder [BATCH_OUT=report/batch] [GPUS=0,1|visible] [HIDDEN=hidden.toml] [JOBS=n] [SHARD=k/n] [TIMESTAMPS=file.csv] [SANDBOX=auto|on|off]"; exit 2; }
	@$(PYTHON) -m grader batch $(SUBMISSIONS) --out $(BATCH_OUT) $(if $(GPUS),--gpu-ids $(GPUS)) $(if $(HIDDEN),--hidden $(HIDDEN)) $(if $(JOBS),--jobs $(JOBS)) $(if $(SHARD),--shard $(SHARD)) $(if $(TIMESTAMPS),--timestamps $(TIMESTAMPS)) $(if $(SANDBOX),--sandbox $(SANDBOX))

batch-demo:
	@$(PYTHON) tools/fixture_class.py report/class --out $(BATCH_OUT) $(if $(GPUS),--gpu)
	@$(MAKE) --no-print-directory batch SUBMISSIONS=report/class

redteam:
	@$(PYTHON) tools/redteam.py

collect:
	@test -n "$(SHARDS)" || { echo "usage: make collect SHARDS=\"shard-1 shard-2 ...\" [MERGED=dir]"; exit 2; }
	@$(PYTHON) -m grader collect $(SHARDS) $(if $(MERGED),--out $(MERGED))

gradescope:
	@$(PYTHON) tools/gradescope/build_zip.py --out $(OUT)/autograder.zip

clean-cache:
	rm -rf .cache/grader
