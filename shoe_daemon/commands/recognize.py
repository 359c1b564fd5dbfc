"""`shoe-daemon recognize`: read the cards in overhead camera images (see docs/camera.md)."""

from __future__ import annotations

import argparse
import json
import sys

HELP = "read the face-up cards in camera images; one JSON line per image with --json"

EPILOG = """\
For each IMAGE (any format OpenCV reads: JPEG, PNG, ...), each face-up card found:
  card        the card code (rank A 2-9 T J Q K + suit S H D C) or null when not sure
  value       its baccarat value 0-9 (T J Q K = 0), or null when not sure
  status      ok (card sure) | partial (value sure, exact card not) | unknown
  confidence  0..1, calibrated: the chance that the card (ok) or the value (partial) is right
  quad        the card's corners [[x, y] x4] in image pixels, clockwise
  zone        the camera.zones polygon holding the card's centre (--config), or null
  reason      why not ok (only when there is one)
Card backs, chips and hands are not cards: an empty table gives "cards": [].

With --json, one line per image:
  {"image": PATH, "cards": [...], "elapsed_ms": N}
(elapsed_ms: the recognition of that image, decoding excluded).

Exit status: 0 all images read; 1 an image was missing or unreadable (reported on stderr,
the other images still processed); 2 usage or configuration error, or OpenCV missing.
"""


def configure(parser: argparse.ArgumentParser) -> None:
    parser.epilog = EPILOG
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    parser.add_argument("images", nargs="+", metavar="IMAGE", help="image files")
    parser.add_argument("--json", action="store_true", help="one JSON object per image, one per line")
    parser.add_argument("--config", metavar="PATH", help="configuration file: camera.zones names the zones")
    parser.add_argument("--model", metavar="PATH", help="a deck model (`shoe-daemon camera enroll`) or a glyph model file "
                        "(default: [camera] model with --config, else the shipped glyph model)")
    parser.add_argument("--draw", metavar="DIR",
                        help="also write each image with the cards and zones drawn into DIR")  # fmt: skip


def _err(msg: str) -> None:
    print(f"shoe-daemon recognize: error: {msg}", file=sys.stderr, flush=True)


def load_recognizer(config_path: str | None, model: str | None, err, *, workers: int | None = None):
    """The recogniser of ``config_path``'s [camera] section (zones, model, workers) and ``model``;
    else the exit status 2, the reason told in one line (``err``; a configuration error as it reads)."""
    from shoe_daemon.config import ConfigError, load_config
    from shoe_daemon.vision.zones import ZoneError

    camera = {}
    try:
        if config_path:
            camera = load_config(config_path, read_secrets=False).camera
    except ConfigError as exc:
        print(exc, file=sys.stderr)
        return 2
    try:
        import cv2  # noqa: F401
    except ImportError:
        err("OpenCV is not installed: pip install 'shoe-daemon[camera]' (opencv-python-headless)")
        return 2
    from shoe_daemon.vision.recognizer import Recognizer

    try:
        return Recognizer(camera, model_path=model, workers=workers)
    except ZoneError as exc:
        err(f"config: {exc}")
    except (OSError, ValueError) as exc:
        err(f"cannot load the model: {exc}")
    return 2


def run(args: argparse.Namespace) -> int:
    recognizer = load_recognizer(args.config, args.model, _err)
    if isinstance(recognizer, int):
        return recognizer
    from shoe_daemon.vision.frames import FrameSourceError, read_image

    failed = 0
    for path in args.images:
        try:
            img = read_image(path)
        except FrameSourceError as exc:
            _err(str(exc))
            failed += 1
            continue
        result = recognizer.recognize(img)
        if args.json:
            print(json.dumps(result.to_json(image=path)), flush=True)
        else:
            _print_text(path, result)
        if args.draw:
            _draw(args.draw, path, img, result, recognizer.zones)
    return 1 if failed else 0


def _print_text(path: str, result) -> None:
    print(f"{path}: {len(result.cards)} card(s) in {result.elapsed_ms:.1f} ms")
    for c in result.cards:
        what = c.card or (f"value {c.value}" if c.value is not None else "?")
        zone = f" in {c.zone}" if c.zone else ""
        why = f" ({c.reason})" if c.reason else ""
        print(f"  {what:<8} {c.status:<8} {c.confidence:.3f}{zone}{why}")


def _draw(folder: str, path: str, img, result, zones) -> None:
    from pathlib import Path

    import cv2

    from shoe_daemon.vision.draw import draw_result, draw_zones

    out = draw_result(draw_zones(img, zones), result)
    Path(folder).mkdir(parents=True, exist_ok=True)
    target = Path(folder) / (Path(path).stem + ".recognized.jpg")
    if not cv2.imwrite(str(target), out):
        _err(f"cannot write {target}")
