"""`shoe-daemon journal`: verify, show, export or recover the event journal.

See docs/journal.md. Every action takes ``--journal PATH`` or ``--config PATH`` (the journal.path
of that configuration, environment overrides included); with neither, the configuration from
the environment alone (``SHOE_DAEMON__JOURNAL__PATH``) or the default path.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import json
import sys

HELP = "verify, show, export or recover the event journal"

EXIT_OK = 0
EXIT_CORRUPT = 1
EXIT_ERROR = 2

EPILOG = """\
actions:
  verify [--full] [--audit [PATH]]
                               check the hash chain and the recall records; quick: from the last
                               new shoe, as at start-up; --audit: also the API's audit log against
                               its record in the journal (default: <journal>.audit.jsonl beside it)
  show [--last N] [--json]     print the last N events (default 20)
  export --out FILE [--intact-only]
                               write every event as JSON lines (seq, checksum, event)
  recover --out FILE [--carry-shoe] [--force]
                               export what is intact, move the journal aside as <name>.corrupt-<n>
                               (never deleted) and start a fresh journal

exit status:
  0  ok (verify: intact; export: complete; recover: recovered, or nothing to recover)
  1  the journal (or with --audit the audit log) is corrupt (verify; export: nothing written, or with --intact-only the
     intact records up to the damage were written)
  2  usage, configuration or I/O error (no journal, journal in use by the daemon, ...)
"""


def _add_source(p: argparse.ArgumentParser) -> None:
    g = p.add_mutually_exclusive_group()
    g.add_argument("--journal", metavar="PATH", help="the journal file")
    g.add_argument("--config", metavar="PATH", help="a configuration file: use its journal.path")


def configure(parser: argparse.ArgumentParser) -> None:
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    parser.epilog = EPILOG
    sub = parser.add_subparsers(dest="action", metavar="ACTION")
    sub.required = True

    def add(name: str, help_: str) -> argparse.ArgumentParser:
        p = sub.add_parser(name, help=help_, description=help_, epilog=EPILOG,
                           formatter_class=argparse.RawDescriptionHelpFormatter)  # fmt: skip
        _add_source(p)
        return p

    p = add("verify", "verify the journal's hash chain and SQLite integrity (exit 0 ok, 1 corrupt)")
    p.add_argument("--full", action="store_true",
                   help="the whole chain from seq 1 and PRAGMA integrity_check (default: from the last "
                        "new shoe and PRAGMA quick_check, as the daemon does at start-up)")  # fmt: skip
    p.add_argument("--json", action="store_true", help="print the report as JSON")
    p.add_argument("--audit", nargs="?", const="", default=None, metavar="PATH",
                   help="also verify the API's audit log against its record in the journal (default "
                        "path: the journal's name with .audit.jsonl, beside it)")

    p = add("show", "print the last events of the journal")
    p.add_argument("--last", type=int, default=20, metavar="N", help="how many events (default 20)")
    p.add_argument("--json", action="store_true", help="JSON lines (the export format) instead of a table")

    p = add("export", "export the events as JSON lines, verified along the chain")
    p.add_argument("--out", required=True, metavar="FILE", help="output file ('-' for stdout)")
    p.add_argument("--intact-only", action="store_true",
                   help="on a corrupt journal, write the intact records up to the damage (exit 1 all the "
                        "same); without it a corrupt journal exports nothing")  # fmt: skip

    p = add("recover", "set a corrupt journal aside and start a fresh one")
    p.add_argument("--out", required=True, metavar="FILE", help="where to export the intact records")
    p.add_argument("--carry-shoe", action="store_true",
                   help="re-append the intact events of the current shoe to the fresh journal")
    p.add_argument("--force", action="store_true", help="start a fresh journal even if this one is intact")


def _err(msg: str) -> None:
    print(f"shoe-daemon journal: {msg}", file=sys.stderr)


def _journal_settings(args: argparse.Namespace) -> tuple[str, str]:
    """(path, synchronous) from --journal, or from the configuration."""
    from shoe_daemon.config import load_config

    if args.journal:
        return args.journal, "full"
    cfg = load_config(args.config, read_secrets=False)
    return cfg.journal.path, cfg.journal.synchronous


def run(args: argparse.Namespace) -> int:
    from shoe_daemon.config import ConfigError
    from shoe_daemon.journal import JournalCorrupt, JournalError

    try:
        path, synchronous = _journal_settings(args)
    except ConfigError as exc:
        print(exc, file=sys.stderr)
        return EXIT_ERROR
    action = {"verify": _verify, "show": _show, "export": _export, "recover": _recover}[args.action]
    try:
        return action(args, path, synchronous)
    except JournalCorrupt as exc:
        _err(exc.describe())
        return EXIT_CORRUPT
    except JournalError as exc:
        _err(str(exc))
        return EXIT_ERROR
    except OSError as exc:
        _err(f"{exc.filename or path}: {exc.strerror or exc}")
        return EXIT_ERROR


def _verify(args: argparse.Namespace, path: str, synchronous: str) -> int:
    from shoe_daemon.journal import Journal, JournalCorrupt

    try:
        journal = Journal.open(path, readonly=True, verify="none")
    except JournalCorrupt as exc:
        if args.json:
            print(json.dumps({"ok": False, "path": path, "reason": exc.reason.value, "seq": exc.seq,
                              "detail": exc.detail, "last_good_seq": exc.last_good_seq}))  # fmt: skip
        else:
            print(exc.describe())
        return EXIT_CORRUPT
    audit = None
    with journal:
        report = journal.verify(full=args.full)
        if args.audit is not None:
            from shoe_daemon.journal.audit import audit_path, verify_audit

            audit = verify_audit(journal, args.audit or audit_path(path))
    if args.json:
        data = {k: getattr(report, k) for k in report.__dataclass_fields__}
        data["reason"] = report.reason.value if report.reason else None
        if audit is not None:
            data["audit"] = {k: getattr(audit, k) for k in audit.__dataclass_fields__}
        print(json.dumps(data))
    else:
        print(report.summary())
        if not report.ok and not args.full:
            print("(run `shoe-daemon journal verify --full` to check the whole journal; "
                  "`shoe-daemon journal recover` to set it aside)")  # fmt: skip
        if audit is not None:
            print(audit.summary())
    ok = report.ok and (audit is None or audit.ok)
    return EXIT_OK if ok else EXIT_CORRUPT


def _when(t: float) -> str:
    try:
        return _dt.datetime.fromtimestamp(t, _dt.UTC).strftime("%Y-%m-%d %H:%M:%S.%f")[:-3]
    except (OverflowError, OSError, ValueError):
        return str(t)


def _show(args: argparse.Namespace, path: str, synchronous: str) -> int:
    from shoe_daemon.core.events import Event
    from shoe_daemon.journal import Journal

    if args.last < 0:
        _err("--last must be 0 or more")
        return EXIT_ERROR
    with Journal.open(path, readonly=True, verify="none") as journal:
        records = journal.last_records(args.last)
        if args.json:
            for seq, body, checksum in records:
                if isinstance(body, str) and body.startswith("{"):
                    sys.stdout.write(f'{{"seq":{seq},"checksum":{json.dumps(checksum)},{body[1:]}\n')
                else:
                    sys.stdout.write(json.dumps({"seq": seq, "checksum": checksum, "raw": repr(body)}) + "\n")
            return EXIT_OK
        shoe = journal.current_shoe_start()
        print(f"journal {journal.path}  id {journal.journal_id}  created {journal.created}")
        print(f"last seq {journal.last_seq()}  current shoe from seq {shoe if shoe is not None else 1}"
              f"  coups recorded {journal.coup_count()}")  # fmt: skip
        if "recovered_from" in journal.meta:
            print(f"recovered from {journal.meta['recovered_from']}")
        print(f"{'seq':>8}  {'time (UTC)':<23}  {'source':<8}  {'kind':<16}  data")
        for seq, body, _checksum in records:
            try:
                ev = Event.from_json(body)
            except Exception:  # noqa: BLE001 - show what is there
                print(f"{seq:>8}  {'?':<23}  {'?':<8}  {'UNPARSABLE':<16}  {body!r:.120}")
                continue
            data = json.dumps(ev.data, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
            print(f"{seq:>8}  {_when(ev.t):<23}  {ev.source:<8}  {ev.kind.value:<16}  {data}")
    return EXIT_OK


def _export(args: argparse.Namespace, path: str, synchronous: str) -> int:
    from shoe_daemon.journal import export_jsonl

    res = export_jsonl(path, args.out, intact_only=args.intact_only)
    span = f"seq {res.first_seq}..{res.last_seq}" if res.records else "no records"
    if res.problem is None:
        _err(f"exported {res.records} event(s) ({span}) of journal {res.journal_id} to {args.out}")
        return EXIT_OK
    _err(res.problem.describe())
    if res.written:
        _err(f"stopped at the damage: exported the {res.records} intact event(s) ({span}) to {args.out}")
    else:
        _err(f"nothing written to {args.out}: use --intact-only to export the intact records "
             f"({res.records}: {span}), or `recover`")  # fmt: skip
    return EXIT_CORRUPT


def _recover(args: argparse.Namespace, path: str, synchronous: str) -> int:
    from shoe_daemon.journal import recover

    res = recover(path, args.out, carry_shoe=args.carry_shoe, synchronous=synchronous, force=args.force)  # type: ignore[arg-type]
    exp = res.export
    if not res.recovered:
        _err(f"{path}: the journal is intact (full verification): nothing to recover; "
             "use --force to start a fresh journal anyway")  # fmt: skip
        return EXIT_OK
    if exp.problem is not None:
        _err(exp.problem.describe())
    span = f"seq {exp.first_seq}..{exp.last_seq}" if exp.records else "no records"
    _err(f"exported {exp.records} intact event(s) ({span}) to {args.out}")
    _err(f"moved the journal aside: {', '.join(res.moved)}")
    _err(f"fresh journal {res.fresh_journal_id} at {path}"
         + (f", carrying {res.carried} event(s) of the current shoe" if args.carry_shoe else ""))  # fmt: skip
    return EXIT_OK
