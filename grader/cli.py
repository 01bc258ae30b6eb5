"""`python -m grader VERB ...`: thin adapters over the library, one call per command.

Exit codes of `grade`: 0 ok; 10 wrong_answer; 11 compile_error; 12 runtime_error;
13 timeout; 14 not_implemented; 15 invalid_submission; 16 cheat_suspected;
2 bad command line / config, or the wrong Python interpreter; 3 (`grade --report` of an ok
kernel, `report`) the PDF could not be written: report.FAILED.txt says why; 70 the grader
itself failed.
May import: core, isolation, analysis, build, judge, evidence, run, score, report, course.
"""
from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from .core import config as config_mod
from .core.config import REPO_ROOT, ConfigError
from .core.result import EXIT_INTERNAL, EXIT_USAGE, write_json_atomic
from .core.safetext import printable

DEFAULT_SUBMISSION = REPO_ROOT / "student_template"      # the folder: attention.py, report.md, profiles/


def _progress(stage: str, detail: str, elapsed: float) -> None:
    from .run import STAGE_NAMES
    if stage == "done":
        return
    print(printable(f"  [{elapsed:6.1f} s] {STAGE_NAMES.get(stage, stage)}{': ' + detail if detail else ''}"),
          file=sys.stderr, flush=True)


def cmd_grade(args) -> int:
    from .run import grade
    from .report.summary import format_result
    cfg = config_mod.load(args.config, hidden=args.hidden, seed=args.seed)
    cfg = config_mod.with_timeouts(cfg, compile=args.timeout_compile, run=args.timeout_run)
    if args.label or args.before:
        from .report.history import HistoryError, check_label
        try:
            for lab in (args.label, args.before):
                if lab:
                    check_label(lab)
        except HistoryError as e:
            raise ConfigError(str(e)) from None
    print(f"grading {args.submission} ...", file=sys.stderr, flush=True)
    result = grade(args.submission, cfg, backend=args.backend, bench=not args.no_bench,
                   progress=None if args.quiet else _progress)
    print(printable(format_result(result)), end="")
    _print_score_preview(result, args.config)
    if args.json:
        write_json_atomic(args.json, result.to_json())
        print(f"results written to {args.json}")
        if args.label:
            from .report.history import save
            print(f"saved in the run history as {save(Path(args.json), args.label)}")
        if args.report:
            code = _write_report(Path(args.json), Path(args.json).with_name("report.pdf"), args.before, reread=False)
            if code:
                return result.exit_code or code
    return result.exit_code


def _print_score_preview(result, config_path) -> None:
    """The points the public rubric gives this result (a preview; INSTRUCTORS.md section 4)."""
    from .score.gradebook import preview
    from .report.summary import format_score_preview
    rubric, deadline = config_mod.load_rubric(config_path)
    print(printable(format_score_preview(preview(result.to_json(), rubric, deadline))), end="")
def _write_report(results: Path, pdf: Path, before: str | None, reread: bool) -> int:
    """Render the PDF; 0, or the exit code of the failure (its message printed)."""
    from .report.pdf import EXIT_REPORT, RenderError, ReportError, render
    try:
        print(f"report written to {render(results, pdf, before_label=before, reread=reread)}")
        if before:
            pdf.with_suffix(COMPARED).write_text(before + "\n")
        else:
            pdf.with_suffix(COMPARED).unlink(missing_ok=True)
    except RenderError as e:
        print(f"error: {pdf} was NOT written: {e}\n  (why, and what happened to an older PDF: "
              f"{pdf.with_name(pdf.stem + '.FAILED.txt')})", file=sys.stderr)
        return EXIT_REPORT
    except ReportError as e:
        print(f"error: {e}", file=sys.stderr)
        return EXIT_USAGE
    return 0


def cmd_check_compile(args) -> int:
    from .build import compile as build
    from .build.parse import parse
    from .core.result import VERDICTS
    cfg = config_mod.load(args.config)
    sub = parse(args.submission)
    if not sub.ok:
        print(f"invalid submission: {sub.error}")
        return VERDICTS["invalid_submission"]
    from .build.parse import VARIABLE
    kinds = [k for k in ("cuda", "cpp", "triton") if k in sub.sources and args.only in ("all", k)]
    if not kinds:
        print(f"{sub.file} has no {VARIABLE['cpp' if args.only == 'all' else args.only]} to compile")
        return VERDICTS["invalid_submission"]
    failed = refused = False
    for kind in kinds:
        if kind == "triton":            # nothing to compile before a launch: the judge's parse and allowlist
            from .judge.integrity import scan
            from .judge.judge import triton_problem
            print(f"checking _TRITON_SRC of {sub.file} (syntax, attention, the Triton allowlist; no GPU needed) ...")
            problem, flags = triton_problem(sub.sources[kind]), scan(sub.sources[kind])
            print(f"  {'FAILED' if problem else 'refused by the allowlist' if flags else 'ok'}")
            for line in ([problem] if problem else []) + [f.detail for f in flags]:
                print(f"  {printable(line)}")
            failed |= bool(problem)
            # a refusal decides the exit status when Triton is the source asked for or written
            from .build.parse import is_template_stub
            graded = args.only == "triton" or all(is_template_stub(sub, k) for k in sub.sources if k != "triton")
            refused |= bool(flags) and not problem and graded
            continue
        var = "_CUDA_SRC" if kind == "cuda" else "_CPP_SRC"
        print(f"compiling {var} of {sub.file} ({'nvcc' if kind == 'cuda' else 'c++'}, no GPU needed) ...",
              flush=True)
        result = build.compile_only(sub.sources[kind], cfg,
                                    on_note=lambda line: print(f"  fallback: {printable(line)}", flush=True))
        tier = f"{result.tier} headers" if result.ok else f"errors from the {result.tier} headers"
        print(f"  {'ok' if result.ok else 'FAILED'} ({tier}, {result.seconds:.1f} s)")
        if result.log:              # the compiler quotes the student's source: escapes neutralised
            print("\n".join("  " + printable(ln) for ln in result.log.splitlines()))
        failed |= not result.ok
    return VERDICTS["compile_error"] if failed else VERDICTS["cheat_suspected"] if refused else 0


def cmd_ncu(args) -> int:
    import json

    from .analysis.ncu import NcuError, format_table, read_files
    try:
        profiles = read_files(args.files)
    except NcuError as e:
        print(f"error: {e}", file=sys.stderr)
        return EXIT_USAGE
    if args.json:
        print(json.dumps([p.to_json() for p in profiles], indent=2))
    else:
        print(format_table(profiles))
    return 0


def cmd_profile(args) -> int:
    from .analysis.ncu import format_table
    from .evidence.profile import ProfileError, profile
    cfg = config_mod.load(args.config)
    try:
        out, profiles = profile(Path(args.submission), cfg, label=args.label, backend=args.backend,
                                model=args.model, progress=lambda line: print(line, file=sys.stderr, flush=True))
    except ProfileError as e:
        print(f"error: {e}", file=sys.stderr)
        return EXIT_USAGE
    if profiles and isinstance(profiles[0], dict):          # the CPU profiler's records
        from .evidence.cpu_profile import format_table as cpu_table
        print(f"CPU profile written to {out}/{args.label}_cpu.csv (the report and the rubric read it)\n")
        print(cpu_table(profiles))
        return 0
    print(f"profiles written to {out}/{args.label}_details.csv and {args.label}_raw.csv\n")
    print(format_table(profiles))
    return 0


def _results_json(path: str) -> dict:
    """A results JSON for a chart; ValueError with one line when it cannot be read."""
    import json
    try:
        doc = json.loads(Path(path).read_text())
    except OSError as e:
        raise ValueError(f"{path}: cannot be read ({e.strerror or e})") from None
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        raise ValueError(f"{path}: not a results JSON ({e})") from None
    rows = doc.get("bench") if isinstance(doc, dict) else None
    if not isinstance(rows, list) or not all(isinstance(r, dict) for r in rows):
        raise ValueError(f"{path}: not a results JSON (no `bench` list of rows)")
    return doc


def cmd_roofline(args) -> int:
    """Roofline chart (SVG): GPU from Nsight Compute CSVs, CPU from a results JSON
    (measured ceilings + the AI model's FLOPs and bytes), plus Advisor dots."""
    from .analysis import roofline
    from .evidence.advisor import AdvisorError, roofs, survey_points
    from .analysis.ncu import NcuError, read_files
    if Path(args.out).suffix.lower() not in roofline.FORMATS:
        print(f"error: --out {args.out}: the chart is written as {', '.join(roofline.FORMATS)}; name the file "
              "with one of these extensions", file=sys.stderr)
        return EXIT_USAGE
    try:
        if args.ncu:
            profiles = read_files(args.ncu)
            b = config_mod.load(args.config).bench_shapes[0]      # the shape `make profile` ran
            ceilings, points = roofline.gpu_ceilings(profiles), roofline.gpu_points(profiles, (b.B, b.H, b.D))
        else:
            doc = _results_json(args.results) if args.results else {"bench": []}
            ceilings = roofs(args.advisor_roofs) if args.advisor_roofs else roofline.measure_cpu_ceilings()
            points = roofline.cpu_points(doc["bench"])
        if args.advisor:
            points += survey_points(args.advisor)
    except (NcuError, AdvisorError, ConfigError, OSError, KeyError, ValueError) as e:
        print(f"error: {e}", file=sys.stderr)
        return EXIT_USAGE
    path = roofline.chart(ceilings, points, args.out)   # the format its extension names (checked above)
    print(f"roofline written to {path} ({len(points)} points; ceilings: {ceilings.source})")
    for level in ceilings.bandwidth_bytes_per_s:
        print(f"  {level}: {ceilings.bandwidth_bytes_per_s[level] / 1e9:,.1f} GB/s, ridge {ceilings.ridge(level):.1f} FLOP/byte"
              + (f" ({roofline.ROOFS[level]})" if roofline.L2_IN in ceilings.bandwidth_bytes_per_s
                 and level in (roofline.L2_IN, roofline.L2_OUT) else ""))
    if args.ncu and (fastest := roofline.fastest_l2_delivery(profiles)):
        print(f"  fastest L2→SM delivery measured: {fastest[0] / 1e9:,.1f} GB/s ({roofline.kernel_label(fastest[1])})")
    print(f"  FP32 peak: {ceilings.peak_flop_per_s / 1e9:,.1f} GFLOP/s")
    return 0


def cmd_report(args) -> int:
    """Re-render the PDF from a results JSON, re-reading report.md and profiles/ from the
    submission (unless --as-graded): no kernel runs, no number is re-timed."""
    before, pdf = args.before, Path(args.out)
    if before is None:            # the comparison the last `grade --before` drew stays (make report)
        try:
            before = pdf.with_suffix(COMPARED).read_text().strip() or None
        except OSError:
            before = None
        if before:
            print(f"comparing with your run labelled {before!r}, as the grade that wrote {pdf} did "
                  f"(--before none to leave the comparison out)")
    if before == "none":
        before = None
    code = _write_report(Path(args.results), pdf, before, reread=not args.as_graded)
    if code == 0:                 # the PDF's points, so that the terminal's last word is not the old grade's
        from .report.pdf import report_score
        said = report_score(Path(args.results), reread=not args.as_graded)
        if said:
            print(printable(said))
    return code


COMPARED = ".before"     # beside report.pdf: the label its before/after comparison was drawn with


def cmd_ai(args) -> int:
    from .analysis.ai_model import compare, format_compare, format_table
    from .analysis.ncu import NcuError, read_files
    cfg = config_mod.load(args.config)
    b = cfg.bench_shapes[0]
    sizes = args.S or [s.S for s in cfg.bench_shapes]
    print(format_table([(b.B, b.H, s, b.D) for s in sizes]))
    if args.compare:
        try:
            rows = compare(read_files(args.compare), b.B, b.H, b.D)
        except NcuError as e:
            print(f"error: {e}", file=sys.stderr)
            return EXIT_USAGE
        print("\nmodel vs measured bytes (B, H, D from the config):")
        print(format_compare(rows) if rows else "no NVTX ranges named <kernel>_S<S> in these exports "
              "(make profile writes them)")
    return 0


def _gpus(text: str | None) -> tuple[int, ...]:
    from .course.batch.devices import DeviceError, parse_gpus
    try:
        return parse_gpus(text)
    except DeviceError as e:
        raise ConfigError(str(e)) from None


def _shard(text: str) -> tuple[int, int]:
    try:
        k, n = (int(x) for x in text.split("/"))
    except ValueError:
        raise ConfigError(f"--shard {text!r}: expected K/N, e.g. 2/8 (slice 2 of 8)") from None
    if not 1 <= k <= n:
        raise ConfigError(f"--shard {text!r}: need 1 <= K <= N")
    return k, n


def cmd_batch(args) -> int:
    from .course.batch import Batch, BatchError, BatchOptions
    cfg = config_mod.load(args.config, hidden=args.hidden)
    cfg = config_mod.with_timeouts(cfg, compile=args.timeout_compile, run=args.timeout_run)
    rubric, deadline = config_mod.load_rubric(args.config)
    opts = BatchOptions(submissions=Path(args.submissions), out=Path(args.out), cfg=cfg, rubric=rubric,
                        deadline=deadline, hidden_file=Path(args.hidden) if args.hidden else None,
                        config_file=Path(args.config), jobs=args.jobs, gpus=_gpus(args.gpus),
                        shard=_shard(args.shard), backend=args.backend, sandbox=args.sandbox,
                        timestamps=Path(args.timestamps) if args.timestamps else None,
                        render_pdf=not args.no_pdf, memory_gb=args.memory_limit)
    try:
        if not args.replace_hidden:                 # first: a forgotten --hidden also changes the override items
            _check_hidden_unchanged(Path(args.out), cfg)
        _check_overrides(Path(args.out), opts)      # a typo stops the batch now, not after an hour
        summary = Batch(opts, log=lambda line: print(printable(line), flush=True)).run()
    except BatchError as e:
        print(f"error: {e}", file=sys.stderr)
        return EXIT_USAGE
    rows = summary["rows"]
    counts: dict = {}
    for r in rows:
        counts[r["status"]] = counts.get(r["status"], 0) + 1
    print(f"done in {summary['seconds']:.0f} s: {summary['graded']} graded, {summary['skipped']} unchanged; "
          + ", ".join(f"{v} {k}" for k, v in sorted(counts.items())))
    print(f"gradebook: {Path(args.out) / 'grades.csv'}; class summary: {Path(args.out) / 'summary.pdf'}")
    if counts.get("grader_error"):
        print(f"error: the grader failed on {counts['grader_error']} submission(s) (status grader_error in "
              "the gradebook; details in the batch log): re-run the batch to retry them", file=sys.stderr)
        return EXIT_INTERNAL
    return 0


def _check_hidden_unchanged(out: Path, cfg) -> None:
    """A re-run of a batch must grade with the hidden configs OUT was graded with: a forgotten
    --hidden would regrade every student without them and replace the grades of record."""
    from .course.batch import BatchError
    from .course.batch.record import hidden_digest, read
    before, digest = read(out), hidden_digest(cfg)
    if before is None or before.setup.hidden_digest == digest:
        return
    had = (f"{before.setup.n_hidden} hidden config(s) or a secret seed" if before.setup.hidden_digest
           else "no hidden configs")
    now = "none" if digest is None else "other ones" if before.setup.hidden_digest else "hidden configs"
    raise BatchError(f"{out} was graded with {had}, and this run has {now}: pass the same --hidden FILE "
                     "(HIDDEN= with make batch) to re-run it, --out a new folder, or --replace-hidden to "
                     "regrade every student of it with these")


def _check_overrides(out: Path, opts) -> None:
    from .course.batch.outputs import read_overrides
    from .course.batch.record import setup_from
    read_overrides(out, setup_from(opts.cfg, opts.rubric, opts.deadline, {}))


def cmd_collect(args) -> int:
    from .course.batch import BatchError, collect, read_timestamps
    from .course.batch.record import read, setup_from
    outs = [Path(o) for o in args.outs]
    dest = Path(args.out) if args.out else outs[0].resolve().parent / "merged"
    rubric = deadline = hidden = legacy = None
    if args.config:
        rubric, deadline = config_mod.load_rubric(args.config)
    if args.hidden:
        hidden = config_mod.load(args.config or config_mod.DEFAULT_CONFIG, hidden=args.hidden)
    stamps = read_timestamps(Path(args.timestamps)) if args.timestamps else None
    try:
        if all(o.is_dir() and read(o) is None for o in outs):     # graded before grading.json existed
            print("note: these folders do not record their config (an older grader): collecting with "
                  "--config/--hidden/--timestamps as given", file=sys.stderr)
            cfg = config_mod.load(args.config or config_mod.DEFAULT_CONFIG, hidden=args.hidden)
            rubric, deadline = config_mod.load_rubric(args.config or config_mod.DEFAULT_CONFIG)
            legacy, stamps = setup_from(cfg, rubric, deadline, stamps or {}), stamps or {}
        rows = collect(outs, dest, rubric, deadline, stamps, hidden, render_pdf=not args.no_pdf, legacy=legacy)
    except BatchError as e:
        print(f"error: {e}", file=sys.stderr)
        return EXIT_USAGE
    print(f"{len(rows)} submissions merged into {dest / 'grades.csv'}")
    return 0


def cmd_similarity(args) -> int:
    import json

    from .course.batch import BatchError
    from .course.batch.outputs import rebuild_from_record, student_folders
    from .course.class_summary import similar_pairs
    from .course.similarity import format_table, to_csv
    out = Path(args.out)
    if not out.is_dir():
        print(f"error: {out} is not a batch output folder", file=sys.stderr)
        return EXIT_USAGE
    docs = []
    for folder in student_folders(out):
        try:
            docs.append(json.loads((folder / "results.json").read_text()))
        except (OSError, ValueError):
            continue
    pairs = similar_pairs(docs)
    (out / "similarity.csv").write_text(to_csv(pairs))
    print(format_table(pairs, top=args.top))
    print(f"\n{len(docs)} submissions, {len(pairs)} pairs sharing fingerprints: {out / 'similarity.csv'}")
    if not args.no_pdf:
        try:
            if rebuild_from_record(out):
                print(f"summary.pdf rebuilt with its similarity section: {out / 'summary.pdf'}")
        except BatchError as e:
            print(f"summary.pdf not rebuilt: {e}", file=sys.stderr)
    return 0


class _Version(argparse.Action):
    """--version: the grader's version and, in a git checkout, its commit."""

    def __init__(self, option_strings, dest, **kwargs):
        super().__init__(option_strings, dest, nargs=0, help="print the grader's version and exit")

    def __call__(self, parser, namespace, values, option_string=None):
        import subprocess

        from . import __version__
        try:
            commit = subprocess.run(["git", "-C", str(REPO_ROOT), "describe", "--always", "--dirty"],
                                    capture_output=True, text=True, timeout=5).stdout.strip()
        except (OSError, subprocess.SubprocessError):
            commit = ""
        print(f"attention-grader {__version__}" + (f" (git {commit})" if commit else ""))
        parser.exit()


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m grader", description="Grade attention kernels.")
    p.add_argument("--version", action=_Version)
    sub = p.add_subparsers(dest="command", required=True)
    g = sub.add_parser("grade", help="compile, check and benchmark one submission")
    g.add_argument("submission", nargs="?", default=str(DEFAULT_SUBMISSION),
                   help="a .py file, a folder holding one (with report.md and profiles/), or a reference "
                        ".cpp/.cu (default: the student_template folder)")
    g.add_argument("--backend", choices=["auto", "cpu", "cuda", "triton"], default="auto")
    g.add_argument("--json", metavar="PATH", help="write the results document here")
    g.add_argument("--config", default=str(config_mod.DEFAULT_CONFIG), help="assignment config")
    g.add_argument("--hidden", metavar="FILE", help="instructor-only TOML with hidden configs/seed")
    g.add_argument("--seed", type=int, help="secret seed for the check inputs")
    g.add_argument("--timeout-compile", type=float, metavar="S")
    g.add_argument("--timeout-run", type=float, metavar="S", help="check and bench timeouts")
    g.add_argument("--no-bench", action="store_true", help="only compile and check")
    g.add_argument("--quiet", action="store_true", help="no progress lines")
    g.add_argument("--report", action="store_true", help="also render report.pdf beside the --json file")
    g.add_argument("--label", help="keep a copy of the results in history/ beside --json under this "
                   "label (e.g. naive, fused), for report --before LABEL")
    g.add_argument("--before", metavar="LABEL", help="with --report: compare with that saved run")
    g.set_defaults(func=cmd_grade)
    c = sub.add_parser("check-compile", help="compile without running (nvcc works without a GPU)")
    c.add_argument("submission", nargs="?", default=str(DEFAULT_SUBMISSION))
    c.add_argument("--only", choices=["all", "cuda", "cpp", "triton"], default="all")
    c.add_argument("--config", default=str(config_mod.DEFAULT_CONFIG))
    c.set_defaults(func=cmd_check_compile)
    n = sub.add_parser("ncu", help="read Nsight Compute CSV exports: per-kernel SOL, bytes, FLOP/s, AI")
    n.add_argument("files", nargs="+", help="ncu --csv exports (--page raw or details, any units)")
    n.add_argument("--json", action="store_true", help="a JSON list, one object per kernel")
    n.set_defaults(func=cmd_ncu)
    pr = sub.add_parser("profile", help="profile the kernel: Nsight Compute on a GPU, else the CPU profiler")
    pr.add_argument("submission", nargs="?", default=str(DEFAULT_SUBMISSION))
    pr.add_argument("--label", default="after", help="name of this profile, e.g. before / after")
    pr.add_argument("--backend", choices=["auto", "cpu", "cuda", "triton"], default="auto",
                    help="auto: Nsight Compute where ncu and a GPU are, else the CPU profiler on _CPP_SRC; "
                         "triton: Nsight Compute on _TRITON_SRC's kernels (auto picks it when it is the source written)")
    pr.add_argument("--model", choices=["naive", "fused"],
                    help="CPU: the traffic model of this kernel when the counters cannot measure its bytes "
                         "(default: from the label: before -> naive, after -> fused)")
    pr.add_argument("--config", default=str(config_mod.DEFAULT_CONFIG))
    pr.set_defaults(func=cmd_profile)
    r = sub.add_parser("roofline", help="roofline chart (SVG, PNG or PDF) from ncu CSVs, or a CPU results JSON")
    r.add_argument("--ncu", nargs="+", metavar="CSV", help="Nsight Compute exports (GPU roofline)")
    r.add_argument("--results", metavar="JSON", help="a CPU grade's results (python -m grader grade --json)")
    r.add_argument("--advisor", metavar="CSV", help="Intel Advisor survey CSV: its loops as dots")
    r.add_argument("--advisor-roofs", metavar="CSV", help="Intel Advisor roofs CSV: ceilings instead of measuring")
    r.add_argument("--out", default="report/roofline.svg", help="the file; its extension (.svg, .png, .pdf) "
                   "is the format")
    r.add_argument("--config", default=str(config_mod.DEFAULT_CONFIG),
                   help="the config the profile ran with (B, H, D of its benchmark shapes)")
    r.set_defaults(func=cmd_roofline)
    rp = sub.add_parser("report", help="render the PDF report from a results JSON (any machine)")
    rp.add_argument("results", help="the JSON `grade --json` wrote")
    rp.add_argument("--out", default="report/report.pdf")
    rp.add_argument("--before", metavar="LABEL", help="compare with the newest saved run of this label "
                    "(grade --label LABEL saved it in history/ beside the results JSON); default: the "
                    "label the PDF was last drawn with (none: no comparison)")
    rp.add_argument("--as-graded", action="store_true", help="report.md and profiles/ as they were when "
                    "graded (default: read them again from the submission)")
    rp.set_defaults(func=cmd_report)
    a = sub.add_parser("ai", help="the arithmetic-intensity model at the benchmark sizes (or --S ...)")
    a.add_argument("--S", type=int, nargs="+", help="sequence lengths (default: the config's)")
    a.add_argument("--config", default=str(config_mod.DEFAULT_CONFIG))
    a.add_argument("--compare", nargs="+", metavar="CSV",
                   help="make-profile exports: the model's bytes next to the measured DRAM and L2 bytes")
    a.set_defaults(func=cmd_ai)
    b = sub.add_parser("batch", help="grade a class of submissions: gradebook, PDFs, Gradescope results")
    b.add_argument("submissions", help="folder with one subfolder, .py or .zip per student")
    b.add_argument("--out", required=True, help="output folder (re-running resumes it)")
    b.add_argument("--hidden", metavar="FILE", help="instructor-only TOML with hidden configs/seed")
    b.add_argument("--replace-hidden", action="store_true",
                   help="re-run an OUT graded with other hidden configs (or none) with these: every student regraded")
    b.add_argument("--config", default=str(config_mod.DEFAULT_CONFIG))
    b.add_argument("--jobs", type=int, default=max(1, (os.cpu_count() or 2) - 1),
                   help="submissions compiled at once (default: cores - 1)")
    b.add_argument("--gpu-ids", "--gpus", dest="gpus", metavar="0,1|visible",
                   help="indices of the GPUs to time on (not a count), one submission per GPU at a time; "
                        "numbered as CUDA_VISIBLE_DEVICES lists them when it is set (Slurm); 'visible' = "
                        "every GPU it lists")
    b.add_argument("--shard", default="1/1", metavar="K/N", help="grade slice K of N (cluster arrays)")
    b.add_argument("--timeout-compile", type=float, metavar="S")
    b.add_argument("--timeout-run", type=float, metavar="S", help="check and bench timeouts")
    b.add_argument("--backend", choices=["auto", "cpu", "cuda", "triton"], default="auto")
    b.add_argument("--sandbox", choices=["auto", "on", "off"], default="auto",
                   help="bubblewrap sandbox: auto = when available (a loud warning otherwise)")
    b.add_argument("--timestamps", metavar="CSV", help="submission,submitted_at (default: the config's "
                   "[deadline] timestamps file in the submissions folder)")
    b.add_argument("--memory-limit", type=float, default=16.0, metavar="GB",
                   help="resident memory per submission (default 16)")
    b.add_argument("--no-pdf", action="store_true", help="skip report.pdf and summary.pdf")
    b.set_defaults(func=cmd_batch)
    co = sub.add_parser("collect", help="merge the OUT folders of --shard runs into one gradebook, "
                        "under the config, hidden configs and submission times they recorded")
    co.add_argument("outs", nargs="+", help="batch output folders")
    co.add_argument("--out", help="merged folder (default: 'merged' beside the first one; never an input)")
    co.add_argument("--config", help="score with this config's rubric and deadline (default: the ones the "
                    "shards recorded)")
    co.add_argument("--hidden", metavar="FILE", help="check that the shards were graded with this hidden file")
    co.add_argument("--timestamps", metavar="CSV", help="submission times to use instead of the recorded ones")
    co.add_argument("--no-pdf", action="store_true")
    co.set_defaults(func=cmd_collect)
    si = sub.add_parser("similarity", help="compare every pair of kernels of a batch: OUT/similarity.csv and a "
                        "section of summary.pdf")
    si.add_argument("out", help="a batch (or collect) output folder")
    si.add_argument("--top", type=int, default=20, help="pairs printed (all are in the CSV)")
    si.add_argument("--no-pdf", action="store_true", help="do not rebuild summary.pdf")
    si.set_defaults(func=cmd_similarity)
    return p


def wrong_interpreter(module: str | None) -> str:
    """One line for a grader run by a Python that lacks its dependencies."""
    return (f"wrong interpreter: {sys.executable} cannot import {module!r}, which the grader needs. Run the "
            "grader through make (make grade, make report, make profile: they find or set up the right "
            "Python), or by hand with the interpreter tools/python.sh prints: $(tools/python.sh) -m grader ...")


# the commands that run a kernel or build one need torch in this interpreter: checked before
# anything starts, so that a Python without it is told so, not graded (a kernel "crashed")
NEEDS_TORCH = ("cmd_grade", "cmd_check_compile", "cmd_profile", "cmd_batch")


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    from .run import GraderError
    try:
        if args.func.__name__ in NEEDS_TORCH:
            import importlib.util
            if importlib.util.find_spec("torch") is None:
                raise ModuleNotFoundError("No module named 'torch'", name="torch")
        return args.func(args)
    except (ConfigError, GraderError) as e:
        print(f"error: {e}", file=sys.stderr)
        return EXIT_USAGE
    except ModuleNotFoundError as e:
        if (e.name or "").split(".")[0] == "grader":
            raise
        print(wrong_interpreter(e.name), file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:   # output piped into `head` and the like: not an error
        import os
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except Exception as e:  # noqa: BLE001 - the grader's own bug: say so, briefly
        print(f"internal error in the grader: {type(e).__name__}: {e} "
              "(please report it with the command you ran)", file=sys.stderr)
        if Path(REPO_ROOT / ".debug").exists():
            raise
        return EXIT_INTERNAL
