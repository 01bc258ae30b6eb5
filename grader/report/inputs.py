"""What the report reads from the submission as it is at render time: report.md and the
profiler evidence again (`make report`), the screenshots (checked: each must be the image
its name says, or the report fails naming it), and the `.py` line of each source line.
"""
from __future__ import annotations

from pathlib import Path

IMAGES = {".png": "PNG", ".jpg": "JPEG", ".jpeg": "JPEG", ".gif": "GIF", ".svg": "SVG"}
# What one report takes from profiles/: a student's screenshots are hostile input to Typst
# (thirty small SVGs of nested <use> took 232 s and 4.6 GB in the batch process).
MAX_SHOTS = 8                   # images shown
MAX_SHOT_BYTES = 8 << 20        # one file
MAX_PIXELS = 40_000_000         # one raster image, decoded (a 4K screenshot is 8.3 MP)
MAX_SVG_ELEMENTS = 50_000       # one SVG, with every <use> expanded


class ImageError(Exception):
    """A screenshot in profiles/ is not the image its name says; the message names it."""


def reread_note(doc: dict) -> str:
    """What a re-render took from the submission as it is now (the report's "Numbers" line)."""
    path = Path(doc["submission"].get("path") or "")
    if not path.exists():
        return f"the submission {path} is gone: report.md and profiles/ as they were when graded"
    what = ["profiles/"] + (["report.md"] if path.is_dir() else [])
    note = f"{' and '.join(what)} read again now, from {path}"
    changed = changed_sources(doc, path)
    if changed:
        note += (f"; the kernel code ({', '.join(changed)}) has changed since this grade: its numbers, and whose "
                 "kernels the profiles are held to, are the graded version's: run make grade")
    return note


def changed_sources(doc: dict, path: Path) -> list[str]:
    """The sources of the graded submission whose code differs now (comments and layout
    apart, grader/build/parse.py code_digest): [] when unchanged or unreadable."""
    from ..build.parse import VARIABLE, code_digest, parse
    graded = doc.get("sources") or {}
    try:
        now = parse(path)
    except Exception:  # noqa: BLE001 - a report is rendered whatever the submission has become
        return []
    if not now.ok:
        return []
    return [VARIABLE.get(kind, kind) for kind, text in graded.items() if isinstance(text, str) and kind in now.sources
            and code_digest(text, kind) != code_digest(now.sources[kind].text, kind)]


def refreshed(doc: dict, profile_dir: Path | None) -> dict:
    """`doc` with report.md and the profiler evidence as they are in the submission now."""
    from ..evidence.exports import read_folder
    path = Path(doc["submission"].get("path") or "")
    if not path.exists():
        return doc
    report = path / "report.md"
    report_md = doc.get("report_md")
    if path.is_dir():
        report_md = report.read_text(encoding="utf-8", errors="replace") if report.is_file() else None
    profiles, notes = read_folder(profile_dir) if profile_dir else ((), ())
    # whose kernels the profiles are of, decided again for the profiles re-read (grader/run.py
    # decides it at the grade): the grade's verdict on other exports would contradict the score
    from ..evidence.exports import provenance_flags
    flags = [f for f in doc.get("flags") or [] if f.get("code") != "profile_provenance"]
    flags += provenance_flags(doc.get("sources") or {}, profiles)
    return {**doc, "report_md": report_md, "profiles": list(profiles), "profile_notes": list(notes), "flags": flags}


def check_images(paths: list[Path]) -> None:
    """ImageError unless the screenshots are few enough for one report (MAX_SHOTS)."""
    if len(paths) > MAX_SHOTS:
        raise ImageError(f"profiles/ holds {len(paths)} images; a report shows at most {MAX_SHOTS}: keep the "
                         f"screenshots that matter ({', '.join(p.name for p in paths[:3])}, ...)")


def check_image(path: Path) -> None:
    """ImageError naming the file unless it is an image of the kind its name says, of at most
    MAX_SHOT_BYTES, MAX_PIXELS decoded, or MAX_SVG_ELEMENTS with its <use> references expanded."""
    want = IMAGES[path.suffix.lower()]
    try:
        size = path.stat().st_size
    except OSError as e:
        raise ImageError(f"{path}: cannot be read ({e})") from None
    if size > MAX_SHOT_BYTES:
        raise ImageError(f"{path}: {size >> 20} MiB; a screenshot may have at most {MAX_SHOT_BYTES >> 20} MiB")
    if want == "SVG":
        import xml.etree.ElementTree as ET
        try:
            root = ET.parse(path).getroot()
        except (ET.ParseError, OSError) as e:
            raise ImageError(f"{path}: not a readable SVG file ({e}); export it again, or leave it out "
                             "of profiles/") from None
        if not root.tag.endswith("svg"):
            raise ImageError(f"{path}: an XML file but not an SVG image (its root is <{root.tag}>)")
        drawn = svg_elements(root)
        if drawn > MAX_SVG_ELEMENTS:
            raise ImageError(f"{path}: an SVG that draws {drawn if drawn < 10**12 else 'over 10^12'} elements "
                             f"once its <use> references are expanded (at most {MAX_SVG_ELEMENTS}): export a "
                             "PNG screenshot instead")
        return
    from PIL import Image
    try:
        with Image.open(path) as im:
            found = im.format
            width, height = im.size
            if width * height > MAX_PIXELS:
                raise ImageError(f"{path}: {width} x {height} pixels (at most {MAX_PIXELS // 10**6} million): "
                                 "take a smaller screenshot")
            im.load()                                       # decodes it all: a truncated file fails here
    except ImageError:
        raise
    except Exception as e:  # noqa: BLE001 - Pillow raises many kinds
        raise ImageError(f"{path}: not a readable {want} image ({type(e).__name__}: {e}); take the "
                         "screenshot again, or leave the file out of profiles/") from None
    if found != want:
        right = {"PNG": ".png", "JPEG": ".jpg", "GIF": ".gif"}.get(found, f" {found} format")
        raise ImageError(f"{path}: the file is a {found} image but its name says {want}: rename it to "
                         f"{path.stem}{right} (or save it as {want})")


def svg_elements(root) -> int:
    """How many elements an SVG draws with every <use> expanded (what a renderer builds):
    each element counts once, and a <use> counts as its target's subtree, followed by id
    with memoisation; a cycle of references counts as more than any cap."""
    by_id = {el.get("id"): el for el in root.iter() if el.get("id")}
    memo: dict = {}
    HUGE = 10 ** 15

    def href(el) -> str | None:
        for key, value in el.attrib.items():
            if key == "href" or key.endswith("}href"):
                return value[1:] if value.startswith("#") else None
        return None

    def count(el, path: frozenset) -> int:
        key = id(el)
        if key in memo:
            return memo[key]
        if key in path:
            return HUGE                                     # a <use> cycle
        path = path | {key}
        total = 1
        if el.tag.endswith("use"):
            target = by_id.get(href(el) or "")
            if target is not None:
                total += count(target, path)
        for child in el:
            total = min(HUGE, total + count(child, path))
        memo[key] = total
        return total
    import sys
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, 20000))
    try:
        return count(root, frozenset())
    except RecursionError:
        return HUGE
    finally:
        sys.setrecursionlimit(limit)


def source_lines(sub: dict, kind: str, source: str) -> list[int]:
    """The `.py` line of each line of the graded source (compile errors use them), when the
    submission file still holds that source; else 1, 2, ..."""
    from ..build.parse import parse
    n = source.count("\n") + 1
    lines = list(range(1, n + 1))
    path = Path(sub.get("path") or "")
    if source and path.exists():
        now = parse(path)
        src = now.sources.get(kind) if now.ok else None
        if src is not None and src.text == source and len(src.line_map) == n:
            lines = list(src.line_map)
    return lines
