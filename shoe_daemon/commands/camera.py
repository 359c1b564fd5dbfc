"""`shoe-daemon camera`: tools for the overhead camera (see docs/camera.md)."""

from __future__ import annotations

import argparse
import os
import sys

HELP = ("overhead camera tools: snapshot (a frame with the zones drawn), enroll (a model of the casino's deck), "
        "speed (does this PC read a frame in time?)")

EPILOG = """\
actions:
  snapshot --config PATH --out FILE [--source S] [--skip N] [--recognize]
      grab one frame from the camera (camera.source, or --source: a device index such as 0,
      a device path such as /dev/video0, an rtsp:// or http:// URL, a video file, an image
      file or a folder of images) and write it to FILE with the camera.zones polygons drawn
      (outline, corner coordinates, name), for the technician who sets the zones up.
      --recognize also draws what the recogniser reads (green ok, amber partial, red unknown).

  enroll --faces DIR --out MODEL [--quick] [--seed N]
      train a model of the casino's own deck from its 52 face images in DIR, named by card
      code (AS.png, TH.jpg, ...: any size, PNG or JPEG, RGB or RGBA with transparent corners).
      Synthesises training frames from the faces, trains and validates the classifier (a few
      minutes on 2 cores), prints the validation figures and writes MODEL, for
      `[camera] model = "MODEL"` and `shoe-daemon recognize --model MODEL`.
  enroll --from-camera SOURCE --faces DIR --out MODEL [--order CODES] [--capture-only]
      guided capture first: lay the cards one after another under the camera (SOURCE: a device,
      stream, video file or folder of recorded frames), in the order AS 2S ... KS AH ... KH AD
      ... KD AC ... KC (or --order); each card that comes to rest is cropped, squared up and
      written to DIR as CODE.png. Then enrols from DIR (unless --capture-only).

  speed --faces DIR [--config PATH] [--model MODEL] [--workers 0|1] [--frames N] [--seed N]
      time the recogniser on this PC against its budget (p95 <= 30 ms for a 1280x720 frame with
      six cards): N synthetic frames of the deck in DIR (its 52 faces, as for enroll; default
      100 frames), six cards in the boxes, read as the daemon reads them: with MODEL (else
      [camera] model of --config, else the shipped models) and --workers (else
      [camera.recognizer] workers of --config, else 0). Prints p50, p95 and the CPU per frame,
      the load average (other work inflates the figures) and this PC's reference figure.
      Exit status 0 within the budget at p95, 1 over it, 2 usage or configuration error.

exit status (snapshot, enroll): 0 written; 1 no frame could be had, FILE or MODEL not written, or the capture
ended before every card was laid; 2 usage or configuration error (bad zones, no source, a face
folder that is not the 52 cards: the line says which file or card), or OpenCV missing.
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
    e = sub.add_parser("enroll", help="train a model of the casino's own deck from its 52 faces",
                       description="train a model of the casino's own deck from its 52 face images",
                       epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)  # fmt: skip
    e.add_argument("--faces", metavar="DIR", required=True,
                   help="folder of the 52 face images named by card code (written by --from-camera)")
    e.add_argument("--out", metavar="MODEL", help="deck model file to write (JSON)")
    e.add_argument("--from-camera", metavar="SOURCE", dest="from_camera",
                   help="capture the faces from this frame source first (guided: lay the cards in order)")
    e.add_argument("--order", metavar="CODES", help="with --from-camera: the order the cards are laid in")
    e.add_argument("--capture-only", action="store_true", help="with --from-camera: write the faces, no model")
    e.add_argument("--settle", type=int, default=3, metavar="N",
                   help="with --from-camera: frames a card must rest before it is taken (default 3)")
    e.add_argument("--quick", action="store_true", help="a small, fast model (for trying the tool out)")
    e.add_argument("--seed", type=int, default=1, help="seed of the synthetic frames (default 1)")
    s = sub.add_parser("speed", help="time the recogniser on this PC against its 30 ms budget",
                       description="time the recogniser on synthetic frames of the deck, on this PC",
                       epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)  # fmt: skip
    s.add_argument("--faces", metavar="DIR", required=True, help="folder of the deck's 52 face images (as for enroll)")
    s.add_argument("--config", metavar="PATH", help="configuration file: [camera] model and recognizer.workers")
    s.add_argument("--model", metavar="MODEL", help="a deck model (camera enroll) or a glyph model file")
    s.add_argument("--workers", type=int, choices=(0, 1), default=None,
                   help="1: with a card-reading process, as [camera.recognizer] workers = 1")  # fmt: skip
    s.add_argument("--frames", type=int, default=100, metavar="N", help="frames to time (20 or more; default 100)")
    s.add_argument("--seed", type=int, default=1, help="seed of the synthetic frames (default 1)")


def _err(msg: str) -> None:
    print(f"shoe-daemon camera: error: {msg}", file=sys.stderr, flush=True)


def run(args: argparse.Namespace) -> int:
    if args.action == "enroll":
        return _enroll(args)
    if args.action == "speed":
        return _speed(args)
    return _snapshot(args)


def _enroll(args: argparse.Namespace) -> int:
    from pathlib import Path

    if not args.capture_only and not args.out:
        _err("enroll: --out MODEL is required (unless --from-camera ... --capture-only)")
        return 2
    if (args.order or args.capture_only) and not args.from_camera:
        _err("enroll: --order and --capture-only go with --from-camera")
        return 2
    try:
        import cv2  # noqa: F401
    except ImportError:
        _err("OpenCV is not installed: pip install 'shoe-daemon[camera]' (opencv-python-headless)")
        return 2
    from dataclasses import replace

    from shoe_daemon.vision import enroll

    def say(msg: str) -> None:
        print(msg, flush=True)

    if args.from_camera is not None:
        from shoe_daemon.vision.frames import FrameSourceError, describe, masked_source, open_frames

        try:
            order = enroll.parse_order(args.order)
        except enroll.FaceFolderError as exc:
            _err(f"enroll: {exc}")
            return 2
        say(f"capturing {len(order)} cards from {masked_source(args.from_camera)} ({describe(args.from_camera)}): "
            f"lay them one after another, first {' '.join(order[:3])} ...")  # fmt: skip
        try:
            faces, _ = enroll.capture_faces(open_frames(args.from_camera), order, settle=args.settle, log=say)
        except FrameSourceError as exc:
            _err(str(exc))
            return 1
        try:
            enroll.write_faces(faces, args.faces)
        except OSError as exc:
            _err(f"enroll: {exc}")
            return 1
        say(f"wrote {len(faces)} faces to {args.faces}")
        if len(faces) < len(order):
            _err(f"enroll: the frames ended after {len(faces)} of {len(order)} cards; next was {order[len(faces)]}")
            return 1
        if args.capture_only:
            return 0
    try:
        faces = enroll.load_faces(args.faces)
    except enroll.FaceFolderError as exc:
        _err(f"enroll: {exc}")
        return 2
    settings = replace(enroll.QUICK if args.quick else enroll.Settings(), seed=args.seed)
    say(f"enrolling the deck of {args.faces} (52 faces) ...")
    result = enroll.enrol(faces, settings, source=str(Path(args.faces).resolve()), log=say)
    say(f"validation, on frames not used to train or to set a threshold ({result.seconds:.0f} s in all, "
        f"{result.cpu:.0f} s of CPU):")
    for line in enroll.fmt_validation(result.validation):
        say(line)
    try:
        result.model.save(args.out)
    except OSError as exc:
        _err(f"enroll: cannot write {args.out}: {exc.strerror or exc}")
        return 1
    say(f"wrote {args.out}: use it with [camera] model = \"{args.out}\" or shoe-daemon recognize --model {args.out}")
    return 0


def _speed(args: argparse.Namespace) -> int:
    from shoe_daemon.commands.recognize import load_recognizer

    if args.frames < 20:
        _err("speed: --frames N: 20 or more (the 95th percentile of fewer frames says little)")
        return 2
    rec = load_recognizer(args.config, args.model, _err, workers=args.workers)
    if isinstance(rec, int):
        return rec
    from shoe_daemon.vision import enroll, speed

    try:
        faces = enroll.load_faces(args.faces)
    except enroll.FaceFolderError as exc:
        rec.close()
        _err(f"speed: {exc}")
        return 2
    model = "the enrolled deck" if rec.deck is not None else "the shipped models"
    print(f"timing {args.frames} frames (1280x720, six cards in the boxes) of {args.faces} with {model}, "
          f"{'a card-reading process beside' if rec.worker is not None else 'one process'} ...", flush=True)
    frames = speed.six_card_frames(faces, [enroll.plain_back()], args.frames, args.seed)
    load = speed.load_average()
    try:
        timing = speed.time_frames(rec, frames)
    finally:
        rec.close()
    after = speed.load_average()
    if rec.worker is not None and not timing.workers:
        print("the card-reading process was not ready: every card was read in this process", flush=True)
    print(f"per frame: p50 {timing.quantile(50):.1f} ms, p95 {timing.p95:.1f} ms, max {max(timing.ms):.1f} ms; "
          f"CPU p50 {timing.quantile(50, cpu=True):.1f} ms, p95 {timing.quantile(95, cpu=True):.1f} ms; "
          f"{sum(timing.cards) / len(timing.cards):.1f} cards a frame")  # fmt: skip
    busy = load is not None and after is not None and max(load, after) > 1.0
    if load is not None and after is not None:
        print(f"load average {load:.2f} before, {after:.2f} after"
              + (" (other work shared the CPU: run again when the PC is idle)" if busy else ""))
    print(f"this PC: {speed.cpu_model()}, {os.cpu_count()} cores, reference {speed.host_reference_ms():.2f} ms")
    if timing.within_budget():
        print(f"within the budget: p95 {timing.p95:.1f} ms <= {speed.BUDGET_MS:.0f} ms")
        return 0
    if busy:
        hint = "the PC was busy: run again when it is idle"
    else:
        hint = "a faster PC" + ("" if timing.workers else ", or [camera.recognizer] workers = 1 for a second core")
    print(f"over the budget: p95 {timing.p95:.1f} ms > {speed.BUDGET_MS:.0f} ms ({hint})")
    return 1


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
