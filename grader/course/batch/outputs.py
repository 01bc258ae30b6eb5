"""Batch, outputs: what a grade leaves in OUT, and the gradebook rebuilt from it.

Per submission `OUT/students/<id>/`: results.json, report.pdf, results_gradescope.json,
output.log, and batch.json written last (the key of what was graded: it marks the
submission complete, which is what makes a killed batch resumable). The class outputs
(grading.json, grades.csv, summary.pdf) are rebuilt from those folders, the record of the
grading (`record.py`) and the instructor's overrides.csv on every run; `collect` merges
the folders of several shards under the config they recorded.
"""
from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path

from ...core.config import Config, Deadline, Rubric
from ...core.result import GradeResult, write_json_atomic
from ...core.safetext import printable
from . import record
from .discover import BatchError


STUDENTS = "students"      # OUT/students/<id>/: no student id can collide with an output name


def student_folder(out: Path, sid: str) -> Path:
    """Where one student's outputs live."""
    return out / STUDENTS / sid


def student_folders(out: Path) -> list[Path]:
    """Every graded student folder of OUT (and of the layout before OUT/students/)."""
    return sorted({f.parent for f in [*out.glob(f"{STUDENTS}/*/batch.json"), *out.glob("*/batch.json")]})


def rebuild_from_record(out: Path, render_pdf: bool = True) -> bool:
    """Rebuild OUT's gradebook from its grading.json (after editing overrides.csv, or to
    add the similarity section); False when OUT has no record."""
    rec = record.read(out)
    if rec is None:
        return False
    rebuild(out, list(rec.students), rec.setup, render_pdf)
    return True


def with_references(result: GradeResult, ref_doc: dict | None, slot: str) -> dict:
    """The student's results with the reference kernels' times of this slot's reference run."""
    doc = result.to_json()
    if not ref_doc or not doc.get("bench"):
        return doc
    by_s = {b["S"]: b for b in ref_doc.get("bench", [])}
    for row in doc["bench"]:
        ref = by_s.get(row["S"])
        if not ref:
            continue
        for name in ("naive", "fused", "fused_opt"):
            row[f"{name}_ms"] = ref.get(f"{name}_ms")
            if name in ref.get("timings", {}):
                row["timings"][name] = ref["timings"][name]
    doc["timing"]["references"] = (f"reference kernels timed once on this device ({slot}) at the start of the "
                                   "batch, with the same harness; the student's kernel and SDPA timed together")
    return doc


def write_submission(folder: Path, work: Path, doc: dict, record: dict, render_pdf: bool,
                     render_slot, log, output: str | None = None, private: dict | None = None,
                     private_folder: Path | None = None, score=None, hidden_s: float = 0.0) -> dict:
    """One graded submission's outputs into `folder`: results.json, report.pdf (holding
    `render_slot` while rendering; `score(doc)`: the gradebook's score it shows, so that the
    gradebook's rebuild finds it current), output.log (what the kernel printed before the hidden
    configs ran, from the judge's memory), then batch.json last, which marks it complete.
    `private` (the hidden configs' full results and output) goes to `private_folder`,
    never beside the student's files. Returns the batch.json record."""
    folder.mkdir(parents=True, exist_ok=True)
    if private_folder is not None:
        mine = private_folder / f"{record['submission']}.json"
        if private is not None:
            write_json_atomic(mine, private)
        else:                      # no hidden results this time: an older grade's must not stay
            mine.unlink(missing_ok=True)
    doc["submission"]["name"] = record["submission"]
    write_json_atomic(folder / "results.json", doc)
    score = score(doc) if score is not None and render_pdf else None
    pdf_note = ""
    if render_pdf:
        with render_slot:
            pdf_note = render_pdf_with(folder, score)
        if "grader bug" in pdf_note:
            log(f"{record['submission']}: {pdf_note}")
    if output is not None:
        tmp = folder / ".output.log.tmp"
        tmp.write_text(printable(output))       # an instructor cats it: no escape runs
        tmp.replace(folder / "output.log")
    from ...isolation.safefs import remove_tree
    if not remove_tree(work):                  # what the children left, any depth: never a lost row
        log(f"{record['submission']}: its work folder {work} could not be removed entirely")
    # the time it finished, less the hidden phase's seconds (`hidden_s`), in batch.json and on
    # every file of the student's folder: a kernel that sleeps S ms on a hidden config, or ends
    # it at a second chosen by S, moves no time a student sees (the instructor's copy has them)
    import time
    at = time.time() - max(0.0, hidden_s)
    record = {**record, "finished_at": time.strftime("%Y-%m-%dT%H:%M:%S%z", time.localtime(at)),
              "pdf_note": pdf_note}
    write_json_atomic(folder / "batch.json", record)   # last: marks the submission complete
    _stamp(folder, at)
    return record


def _stamp(folder: Path, at: float) -> None:
    """Every file of a student's folder stamped `at` (links left alone)."""
    for path in folder.iterdir():
        try:
            if path.is_file() and not path.is_symlink():
                os.utime(path, (at, at))
        except OSError:
            pass


def _stamp_like_record(folder: Path) -> None:
    """The files the gradebook's rebuild rewrote, stamped like the grade's batch.json (its time
    less the hidden phase's: `write_submission`), not the class's end."""
    try:
        _stamp(folder, (folder / "batch.json").stat().st_mtime)
    except OSError:
        pass


def write_gradebook(out: Path, ids: list[str], cfg: Config, rubric: Rubric, deadline: Deadline | None,
                    stamps: dict, render_pdf: bool = True, shard: tuple[int, int] = (1, 1)) -> list[dict]:
    """A batch's class outputs: OUT/grading.json (what it was graded and scored with), then
    grades.csv, every results_gradescope.json and summary.pdf from OUT/students/<id>/."""
    setup = record.setup_from(cfg, rubric, deadline, {s: t for s, t in stamps.items() if s in set(ids)}, shard)
    record.write(out, setup, ids)
    return rebuild(out, ids, setup, render_pdf)


def read_overrides(out: Path, setup: record.GradingSetup) -> list:
    """OUT/overrides.csv, validated against the rubric (BatchError with the line)."""
    from ...score import gradebook as gb
    from ...score.overrides import FILE_NAME, OverrideError, check_items, read
    path = out / FILE_NAME
    try:
        rows = read(path)
        check_items(rows, gb.item_keys(setup.rubric, len(setup.config.configs), setup.n_hidden), path)
        ranges = gb.item_ranges(setup.rubric, setup.n_hidden)
        for o in rows:            # points outside an item's range: said before anything is graded
            if o.item in ranges:
                gb.check_points(o, ranges[o.item])
    except (OverrideError, ValueError) as e:
        raise BatchError(_named(out, e)) from None
    return rows


def _named(out: Path, e: Exception) -> str:
    """An overrides.csv error with the file named once, with its folder."""
    said = str(e).removeprefix("overrides.csv, ")
    return f"{out / 'overrides.csv'}, {said}" if said != str(e) else str(e)


def _scored(out: Path, sid: str, doc: dict, setup: record.GradingSetup, chosen: dict):
    """(items, lateness) of one student: the rubric, the hidden configs, overrides, late policy."""
    from ...score import gradebook as gb
    from ...score.overrides import OverrideError
    try:
        items = gb.scored(doc, setup.rubric, setup.n_hidden, chosen)
    except OverrideError as e:
        raise BatchError(_named(out, e)) from None
    extension = chosen["extension"].number if "extension" in chosen else 0
    return items, gb.lateness(setup.stamps.get(sid), setup.deadline, extension)


def course_score(out: Path, sid: str, doc: dict, setup: record.GradingSetup) -> dict | None:
    """The score the gradebook gives this student now (gradebook.final_score); None when
    overrides.csv cannot be read (the gradebook's rebuild then says why)."""
    from ...score import gradebook as gb
    from ...score.overrides import for_student
    try:
        items, late = _scored(out, sid, doc, setup, for_student(read_overrides(out, setup), sid))
    except BatchError:
        return None
    return gb.final_score(items, late)


SCORE_SHOWN = ".report_score.json"     # the score the student's report.pdf shows


def render_pdf_with(folder: Path, score: dict | None) -> str:
    """report.pdf from results.json, showing `score`; '' or why it was not written."""
    from ...report.pdf import ReportError, render
    (folder / SCORE_SHOWN).unlink(missing_ok=True)
    try:
        render(folder / "results.json", folder / "report.pdf", score=score)
    except (ReportError, ImportError) as e:
        return f"report.pdf not written: {e}"
    except Exception as e:  # noqa: BLE001 - a report bug must not lose the grade
        return f"report.pdf not written (grader bug, please report): {type(e).__name__}: {e}"[:500]
    if score is not None:
        write_json_atomic(folder / SCORE_SHOWN, score)
    return ""


def refresh_pdf(folder: Path, score: dict) -> None:
    """Re-render report.pdf when the score it shows is not the gradebook's (hidden configs,
    an override, a late penalty or the rubric changed since): one score per student."""
    try:
        shown = json.loads((folder / SCORE_SHOWN).read_text())
    except (OSError, ValueError):
        shown = None
    if shown == json.loads(json.dumps(score)) and (folder / "report.pdf").is_file():
        return
    note = render_pdf_with(folder, score)
    if note:
        print(f"{folder.name}: {note}", file=sys.stderr)


def rebuild(out: Path, ids: list[str], setup: record.GradingSetup, render_pdf: bool = True) -> list[dict]:
    """grades.csv, results_gradescope.json and summary.pdf from the student folders, the
    setup and OUT/overrides.csv (read, never written)."""
    from ...score import gradebook as gb
    from ...score.overrides import for_student
    overrides = read_overrides(out, setup)
    rows, docs, idle = [], [], []
    n_public, n_hidden = len(setup.config.configs), setup.n_hidden
    for sid in ids:
        folder = student_folder(out, sid)
        try:
            doc = json.loads((folder / "results.json").read_text())
            json.loads((folder / "batch.json").read_text())
        except (OSError, ValueError):
            continue         # not graded (yet): a later run will
        chosen = for_student(overrides, sid)
        if "review" in chosen and chosen["review"].value == "cleared" and not gb.is_flagged(doc):
            idle.append(f"{sid} (line {chosen['review'].line}: the verdict is {doc.get('verdict')})")
        items, late = _scored(out, sid, doc, setup, chosen)
        try:                 # the hidden configs' max_err: only the instructor's copy has it
            hidden_private = json.loads((out / "instructor" / f"{sid}.json").read_text())["hidden_checks"]
        except (OSError, ValueError, KeyError, TypeError):
            hidden_private = None
        row = gb.row(doc, items, late, setup.sizes, n_public, n_hidden, chosen, hidden_private)
        if setup.deadline is not None and sid not in setup.stamps:
            row["flags"] = ";".join(x for x in (row["flags"], "warning:no_timestamp") if x)
        rows.append(row)
        docs.append(doc)
        write_json_atomic(folder / "results_gradescope.json", gb.gradescope(doc, items, late))
        if render_pdf:
            refresh_pdf(folder, gb.final_score(items, late))
        _stamp_like_record(folder)
    if idle:                 # a typo'd student, or a regrade that no longer flags: said, not applied
        print(f"note: overrides.csv clears a review nothing flagged, which changes nothing: {', '.join(idle)}",
              file=sys.stderr)
    from ...score.overrides import student_of
    unknown = sorted({o.student for o in overrides if student_of(o, set(ids)) is None})
    if unknown and setup.shard == (1, 1):
        print(f"note: overrides.csv names students this folder does not hold: {', '.join(unknown)}",
              file=sys.stderr)
    text = gb.to_csv(rows, gb.columns(setup.sizes, n_public, n_hidden))
    tmp = out / ".grades.csv.tmp"
    tmp.write_text(text)
    tmp.replace(out / "grades.csv")
    if render_pdf:
        from ..class_summary import render_summary
        from ...report.pdf import ReportError
        try:
            render_summary(rows, docs, setup.config, n_hidden, out / "summary.pdf", overrides=overrides)
        except (ReportError, ImportError) as e:
            print(f"summary.pdf not written: {e}", file=sys.stderr)
    return rows


def collect(outs: list[Path], dest: Path, rubric: Rubric | None = None, deadline: Deadline | None = None,
            stamps: dict | None = None, hidden: Config | None = None, render_pdf: bool = True,
            legacy: record.GradingSetup | None = None, warn=lambda text: print(text, file=sys.stderr)) -> list[dict]:
    """Merge shard outputs into `dest`: per-submission folders copied (the newest record of
    a submission wins), then the gradebook rebuilt over all of them with the config, hidden
    configs and submission times the shards recorded (grading.json). Shards graded under
    different configs are refused. `rubric`/`deadline`/`stamps` replace the recorded ones
    when given; `hidden` (a config loaded with --hidden) must match the shards' digest.
    `legacy`: the setup for folders graded before records existed (all of them must be)."""
    records = _records(outs, legacy)
    chosen, unlisted = _newest_grades(outs, None if legacy is not None else records)
    base = records[0].setup
    if stamps is None:       # each student's time as the shard that graded them recorded it
        by_folder = {r.folder.resolve(): r.setup.stamps for r in records}
        stamps = {sid: t for sid, (_, folder) in chosen.items()
                  if (t := by_folder.get(_out_of(folder), {}).get(sid)) is not None}
    if hidden is not None and record.hidden_digest(hidden) != base.hidden_digest:
        raise BatchError(f"--hidden does not match the hidden configs the shards were graded with "
                         f"({records[0].folder}/{record.FILE_NAME})")
    if rubric is None:
        rubrics = {json.dumps(record._rubric_json(r.setup.rubric)) for r in records}
        deadlines = {json.dumps(record._deadline_json(r.setup.deadline)) for r in records}
        if len(rubrics) > 1 or len(deadlines) > 1:
            raise BatchError("the shards recorded different rubrics or deadlines: pass --config FILE to "
                             "say which to score with")
        rubric, deadline = base.rubric, base.deadline
    setup = record.GradingSetup(config=base.config, n_hidden=base.n_hidden, rubric=rubric, deadline=deadline,
                                stamps=stamps, hidden_digest=base.hidden_digest)
    _check_shards(records, warn)
    if unlisted:
        warn(f"warning: {', '.join(f'{sid} ({folder})' for sid, folder in sorted(unlisted.items()))}: graded, but "
             "no shard lists them now (the class changed since, they withdrew, or a shard's last run did not "
             "finish): not in the gradebook. "
             "Re-run every shard's batch command (unchanged submissions are skipped) to grade the class as it is")
    if legacy is None:
        listed = sorted({sid for r in records for sid in r.students} - set(chosen))
        if listed:
            warn(f"warning: {', '.join(listed)}: listed by a shard but not graded there (a batch that did not "
                 "finish?): not in the gradebook until that shard's batch is re-run")
    dest.mkdir(parents=True, exist_ok=True)
    read_overrides(dest, setup)              # a bad overrides.csv stops before anything is copied
    _copy_grades(chosen, dest)
    _prune(dest, outs, set(chosen), warn)
    for out in outs:
        if (out / "overrides.csv").is_file() and out.resolve() != dest.resolve():
            warn(f"note: {out / 'overrides.csv'} is not applied: collect applies {dest / 'overrides.csv'} "
                 "(copy its rows there)")
    ids = sorted(chosen)
    if legacy is None:
        record.write(dest, setup, ids, collected_from=[str(o) for o in outs])
    return rebuild(dest, ids, setup, render_pdf)


def _records(outs: list[Path], legacy: record.GradingSetup | None) -> list[record.Record]:
    for out in outs:
        if not out.is_dir():
            raise BatchError(f"{out} is not a batch output folder")
    found = [(out, record.read(out)) for out in outs]
    missing = [str(out) for out, r in found if r is None]
    if missing and legacy is None:
        raise BatchError(f"{', '.join(missing)}: no {record.FILE_NAME} (graded before batches recorded their "
                         "config): re-run the same batch command on it (unchanged submissions are skipped) "
                         "so it records what it was graded with")
    if legacy is not None:
        if len(missing) != len(outs):
            raise BatchError("some folders have a grading.json and some do not: re-run the batch on "
                             + ", ".join(missing))
        return [record.Record(out, legacy, (), record.public_config(legacy.config), "?") for out in outs]
    records = [r for _, r in found]
    for r in records[1:]:
        diff = record.differences(records[0], r)
        if diff:
            raise BatchError(f"{r.folder} was graded with a different config than {records[0].folder} "
                             f"(differs in: {', '.join(diff)}); grade every shard with the same config and "
                             "hidden file, or collect them separately")
    return records


def _check_shards(records: list[record.Record], warn) -> None:
    """Warn about missing or repeated shards of a --shard K/N array, and a grader update mid-way."""
    arrays = {r.setup.shard[1] for r in records if r.setup.shard[1] > 1}
    for n in sorted(arrays):
        present = sorted(r.setup.shard[0] for r in records if r.setup.shard[1] == n)
        gone = [k for k in range(1, n + 1) if k not in present]
        if gone:
            warn(f"warning: shard{'s' * (len(gone) > 1)} {', '.join(f'{k}/{n}' for k in gone)} not among the "
                 "folders collected: their students are missing from the gradebook")
    versions = {r.grader_version for r in records}
    if len(versions) > 1:
        warn(f"warning: the shards were graded by different grader versions ({', '.join(sorted(versions))})")


def _out_of(student_dir: Path) -> Path:
    """The OUT folder a student folder belongs to (OUT/students/<id> or the old OUT/<id>)."""
    parent = student_dir.parent
    return (parent.parent if parent.name == STUDENTS else parent).resolve()


def _newest_grades(outs: list[Path], records: list[record.Record] | None = None
                   ) -> tuple[dict[str, tuple[str, Path]], dict[str, Path]]:
    """(student -> (finished_at, folder) of the newest complete grade among the shards that
    list the student now, {student: folder} of grades no shard lists). A shard lists the
    students of its last run (grading.json): a folder it graded under an earlier split of the
    class, or of a student who withdrew, is not its grade any more, and its submission time is
    not in that shard's record. `records` None (folders graded before records): every folder."""
    listed = None if records is None else {r.folder.resolve(): set(r.students) for r in records}
    chosen: dict[str, tuple[str, Path]] = {}
    unlisted: dict[str, Path] = {}
    for out in outs:
        mine = None if listed is None else listed.get(out.resolve(), set())
        for folder in student_folders(out):
            record_file = folder / "batch.json"
            try:
                rec = json.loads(record_file.read_text())
            except (OSError, ValueError):
                continue
            sid = record_file.parent.name
            if mine is not None and sid not in mine:
                unlisted.setdefault(sid, out)
                continue
            stamp = rec.get("finished_at", "")
            if sid not in chosen or stamp > chosen[sid][0]:
                chosen[sid] = (stamp, record_file.parent)
    return chosen, {sid: folder for sid, folder in unlisted.items() if sid not in chosen}


def _prune(dest: Path, outs: list[Path], keep: set, warn) -> None:
    """The students a collect folder held from an earlier collect and no longer holds leave it
    (their grades stay in the shards): an upload that walks OUT/students/ finds the gradebook's
    students only. A folder that is one of the shards, or a batch's own OUT, is left as it is."""
    if any(dest.resolve() == o.resolve() for o in outs) or any(
            (dest / d).is_symlink() for d in (STUDENTS, "instructor")):
        return
    try:                 # only a folder an earlier collect wrote: a batch's OUT (however old,
        was = json.loads((dest / record.FILE_NAME).read_text())      # or unfinished) holds grades
    except (OSError, ValueError):
        return
    if not isinstance(was, dict) or not was.get("collected_from"):
        return
    gone = sorted(f.name for f in (dest / STUDENTS).iterdir()
                  if f.is_dir() and not f.is_symlink() and not f.name.startswith(".") and f.name not in keep)
    left = []
    for sid in gone:
        shutil.rmtree(dest / STUDENTS / sid, ignore_errors=True)
        if (dest / STUDENTS / sid).exists():
            left.append(sid)
    for f in (dest / "instructor").glob("*.json"):
        if f.stem not in keep and not f.is_symlink():
            f.unlink(missing_ok=True)
    if gone:
        warn(f"note: {', '.join(s for s in gone if s not in left) or 'none'}: removed from {dest / STUDENTS} "
             "(an earlier collect's; no shard collected now holds them)"
             + (f"; could not remove {', '.join(left)}" if left else ""))


def _copy_grades(chosen: dict[str, tuple[str, Path]], dest: Path) -> None:
    (dest / STUDENTS).mkdir(exist_ok=True)
    (dest / "instructor").mkdir(exist_ok=True)
    for sid, (_, folder) in chosen.items():
        target = student_folder(dest, sid)
        # the hidden configs' full results (OUT/instructor/<id>.json) come along with the grade
        shard_out = folder.parent.parent if folder.parent.name == STUDENTS else folder.parent
        private = shard_out / "instructor" / f"{sid}.json"
        if private.resolve() != (dest / "instructor" / f"{sid}.json").resolve():
            if private.is_file():
                shutil.copyfile(private, dest / "instructor" / f"{sid}.json")
            else:
                (dest / "instructor" / f"{sid}.json").unlink(missing_ok=True)
        if folder.resolve() != target.resolve():
            tmp = dest / STUDENTS / f".{sid}.tmp"
            shutil.rmtree(tmp, ignore_errors=True)
            shutil.copytree(folder, tmp)
            shutil.rmtree(target, ignore_errors=True)
            tmp.replace(target)
