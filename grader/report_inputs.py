"""What the report reads from the submission as it is at render time: report.md and the
profiler evidence again (`make report`), the screenshots (checked: each must be the image
its name says, or the report fails naming it), and the `.py` line of each source line.
"""
from __future__ import annotations

from pathlib import Path

IMAGES = {".png": "PNG", ".jpg": "JPEG", ".jpeg": "JPEG", ".gif": "GIF", ".svg": "SVG"}


class ImageError(Exception):
    """A screenshot in profiles/ is not the image its name says; the message names it."""


def reread_note(doc: dict) -> str:
    """What a re-render took from the submission as it is now (the report's "Numbers" line)."""
    path = Path(doc["submission"].get("path") or "")
    if not path.exists():
        return f"the submission {path} is gone: report.md and profiles/ as they were when graded"
    what = ["profiles/"] + (["report.md"] if path.is_dir() else [])
    return f"{' and '.join(what)} read again now, from {path}"


def refreshed(doc: dict, profile_dir: Path | None) -> dict:
    """`doc` with report.md and the profiler evidence as they are in the submission now."""
    from .evidence import read_folder
    path = Path(doc["submission"].get("path") or "")
    if not path.exists():
        return doc
    report = path / "report.md"
    report_md = doc.get("report_md")
    if path.is_dir():
        report_md = report.read_text(encoding="utf-8", errors="replace") if report.is_file() else None
    profiles, notes = read_folder(profile_dir) if profile_dir else ((), ())
    return {**doc, "report_md": report_md, "profiles": list(profiles), "profile_notes": list(notes)}


def check_image(path: Path) -> None:
    """ImageError naming the file unless it is an image of the kind its name says."""
    want = IMAGES[path.suffix.lower()]
    if want == "SVG":
        import xml.etree.ElementTree as ET
        try:
            root = ET.parse(path).getroot()
        except (ET.ParseError, OSError) as e:
            raise ImageError(f"{path}: not a readable SVG file ({e}); export it again, or leave it out "
                             "of profiles/") from None
        if not root.tag.endswith("svg"):
            raise ImageError(f"{path}: an XML file but not an SVG image (its root is <{root.tag}>)")
        return
    from PIL import Image
    try:
        with Image.open(path) as im:
            found = im.format
            im.load()                                       # decodes it all: a truncated file fails here
    except Exception as e:  # noqa: BLE001 - Pillow raises many kinds
        raise ImageError(f"{path}: not a readable {want} image ({type(e).__name__}: {e}); take the "
                         "screenshot again, or leave the file out of profiles/") from None
    if found != want:
        right = {"PNG": ".png", "JPEG": ".jpg", "GIF": ".gif"}.get(found, f" {found} format")
        raise ImageError(f"{path}: the file is a {found} image but its name says {want}: rename it to "
                         f"{path.stem}{right} (or save it as {want})")


def source_lines(sub: dict, kind: str, source: str) -> list[int]:
    """The `.py` line of each line of the graded source (compile errors use them), when the
    submission file still holds that source; else 1, 2, ..."""
    from .parse import parse
    n = source.count("\n") + 1
    lines = list(range(1, n + 1))
    path = Path(sub.get("path") or "")
    if source and path.exists():
        now = parse(path)
        src = now.sources.get(kind) if now.ok else None
        if src is not None and src.text == source and len(src.line_map) == n:
            lines = list(src.line_map)
    return lines
