"""`shoe-daemon camera`: tools for the overhead camera (see docs/camera.md)."""

from __future__ import annotations

import argparse
import sys

HELP = "overhead camera tools: snapshot (a frame with the configured zones drawn)"

EPILOG = """\
actions:
  snapshot --config PATH --out FILE [--source S] [--skip N] [--recognize]
      grab one frame from the camera (camera.source, or --source: a device index such as 0,
      a device path such as /dev/video0, an rtsp:// or http:// URL, a video file, an image
      file or a folder of images) and write it to FILE with the camera.zones polygons drawn
      (outline, corner coordinates, name), for the technician who sets the zones up.
      --recognize also draws what the recogniser reads (green ok, amber partial, red unknown).

exit status: 0 written; 1 no frame could be had or FILE not written; 2 usage or configuration
error (bad zones, no source), or OpenCV missing.
"""


def configure(parser: argparse.ArgumentParser) -> None:
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    parser.epilog = EPILOG
    sub = parser.add_subparsers(dest="action", metavar="ACTION")
    sub.required = True
    p = sub.add_parser("snapshot", help="write one camera frame with the zones drawn",
                       description="write one camera frame with the configured zones drawn", epilog=EPILOG,
                       formatter_class=argparse.RawDescriptionHelpFormatter)  # fmt: skip
    p.add_argument("--config", metavar="PATH", required=True, help="configuration file (camera.source, camera.zones)")
    p.add_argument("--out", metavar="FILE", required=True, help="image file to write (.jpg, .png)")
    p.add_argument("--source", metavar="S", help="frame source instead of camera.source")
    p.add_argument("--skip", type=int, default=None, metavar="N",
                   help="frames to drop first, for a live camera's exposure to settle (default 10 for a "
                        "camera or stream, 0 otherwise)")  # fmt: skip
    p.add_argument("--recognize", action="store_true", help="also draw the cards the recogniser reads")


def _err(msg: str) -> None:
    print(f"shoe-daemon camera: error: {msg}", file=sys.stderr, flush=True)


def run(args: argparse.Namespace) -> int:
    return _snapshot(args)


def _snapshot(args: argparse.Namespace) -> int:
    from shoe_daemon.config import ConfigError, load_config
    from shoe_daemon.vision.zones import ZoneError, parse_zones

    try:
        camera = load_config(args.config, read_secrets=False).camera
        zones = parse_zones(camera.zones)
    except ConfigError as exc:
        print(exc, file=sys.stderr)
        return 2
    except ZoneError as exc:
        _err(f"config: {exc}")
        return 2
    source = args.source if args.source is not None else camera.source
    if source is None or str(source).strip() == "":
        _err("no frame source: set camera.source in the configuration or pass --source")
        return 2
    try:
        import cv2
    except ImportError:
        _err("OpenCV is not installed: pip install 'shoe-daemon[camera]' (opencv-python-headless)")
        return 2
    from shoe_daemon.vision.draw import draw_result, draw_zones
    from shoe_daemon.vision.frames import FrameSourceError, describe, masked_source, open_frames

    kind = describe(source)
    skip = args.skip if args.skip is not None else (10 if kind in ("camera", "stream") else 0)
    frame = None
    try:
        for f in open_frames(source, limit=skip + 1):
            frame = f
    except FrameSourceError as exc:
        _err(str(exc))
        return 1
    if frame is None:
        _err(f"{masked_source(source)}: no frame")
        return 1
    out = draw_zones(frame.image, zones)
    note = ""
    if args.recognize:
        from shoe_daemon.vision.recognizer import Recognizer

        result = Recognizer(camera, zones=zones).recognize(frame.image)
        draw_result(out, result)
        note = f", {len(result.cards)} card(s) read"
    try:
        ok = cv2.imwrite(args.out, out)
    except cv2.error as exc:
        ok = False
        _err(f"cannot write {args.out}: {exc}")
    if not ok:
        _err(f"cannot write {args.out} (is the extension an image format, the folder writable?)")
        return 1
    h, w = out.shape[:2]
    names = ", ".join(z.name for z in zones) or "none configured"
    print(f"wrote {args.out}: {w}x{h} frame from {masked_source(source)} ({kind}), zones: {names}{note}")
    return 0
