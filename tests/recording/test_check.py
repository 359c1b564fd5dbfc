"""Check files: paths, compression by size, normalisation, and a diff a person can read."""

from __future__ import annotations

import json

from shoe_daemon.recording import check
from shoe_daemon.recording.check import (
    GZ_OVER,
    check_path,
    diff,
    field_changes,
    message_line,
    normalise,
    read_check,
    update_check,
)


def card(seq: int, card: str, total: int) -> str:
    payload = {"card": card, "punto_total": total, "seq": seq, "t": 1740859200.5, "type": "card"}
    return message_line("baccarat/t1/coup/card", 1, False, json.dumps(payload, sort_keys=True, separators=(",", ":")))


def test_message_line():
    assert message_line("baccarat/t1/shoe", 1, True, b'{"a":1}') == 'baccarat/t1/shoe 1 r {"a":1}'
    assert message_line("baccarat/t1/coup/card", 1, False, '{"a":1}') == 'baccarat/t1/coup/card 1 - {"a":1}'


def test_port_errors_are_normalised_and_nothing_else():
    for text in ("read failed: [Errno 5] Input/output error", "[Errno 5] Input/output error",
                 "write failed: [Errno 5] Input/output error",
                 "device reports readiness to read but returned no data (device disconnected or multiple "
                 "access on port?)"):
        line = f'x 1 - {{"message":"shoe link lost: {text}","reason":"{text}","t":1740859200.25}}'
        assert normalise(line) == ('x 1 - {"message":"shoe link lost: <port error>","reason":"<port error>",'
                                   '"t":1740859200.25}')
    assert normalise(card(3, "9H", 9)) == card(3, "9H", 9)
    assert all(rule.why for rule in check.RULES)


def test_check_path_and_compression_by_size(tmp_path):
    fx = tmp_path / "a.shoelog"
    assert check_path(fx) == tmp_path / "a.chk"
    assert check_path(tmp_path / "b.shoelog.gz") == tmp_path / "b.chk"
    small = [card(i, "9H", 9) for i in range(3)]
    path, changed = update_check(fx, small, ["a comment"])
    assert path == tmp_path / "a.chk" and changed
    assert path.read_text().startswith("# a comment\n")
    assert read_check(path) == small
    assert update_check(fx, small)[1] is False          # unchanged
    big = [card(i, "9H", 9) for i in range(GZ_OVER // 80 + 10)]
    path, changed = update_check(fx, big)
    assert path == tmp_path / "a.chk.gz" and changed and not (tmp_path / "a.chk").exists()
    assert check_path(fx) == path and read_check(path) == big
    before = path.read_bytes()
    update_check(fx, big)
    assert path.read_bytes() == before                  # no timestamp in the gzip: no noise in git


def test_diff_is_empty_when_equal():
    lines = [card(1, "9H", 9), card(2, "KD", 9)]
    assert diff(lines, list(lines), "a", "b") == ""


def test_diff_shows_the_changed_line_and_the_field():
    expected = [card(i, "2H", 2) for i in range(1, 8)]
    actual = list(expected)
    actual[3] = card(4, "7H", 7)
    text = diff(expected, actual, "x.chk (expected)", "x (replay)")
    lines = text.splitlines()
    assert lines[0] == "--- x.chk (expected)" and lines[1] == "+++ x (replay)"
    assert "@@ -3,3 +3,3 @@" in lines
    assert "-" + expected[3] in lines and "+" + actual[3] in lines
    assert " " + expected[2] in lines          # context
    assert '#   message 4 (baccarat/t1/coup/card): card: "2H" -> "7H"' in lines
    assert '#   message 4 (baccarat/t1/coup/card): punto_total: 2 -> 7' in lines
    assert lines[-1] == "# 1 message line(s) differ: expected 7 messages, got 7"


def test_diff_of_missing_and_extra_messages():
    expected = [card(i, "2H", 2) for i in range(1, 5)]
    actual = expected[:2] + expected[3:] + [card(9, "AS", 1)]
    text = diff(expected, actual, "e", "a")
    assert "-" + expected[2] in text and "+" + actual[-1] in text
    assert "expected 4 messages, got 4" in text


def test_field_changes_nested_and_absent():
    a = 'x 1 - {"alert":{"kind":"extra_card","evidence":{"card":"7C"}},"seq":4}'
    b = 'x 1 r {"alert":{"kind":"missing_card"},"seq":5}'
    assert field_changes(a, b) == [
        "topic/flags: x -> x",
        'alert.evidence.card: "7C" -> <absent>',
        'alert.kind: "extra_card" -> "missing_card"',
    ]
    assert field_changes("not json", "at all") == []


def test_long_diffs_are_cut():
    expected = [card(i, "2H", 2) for i in range(400)]
    actual = [card(i, "3H", 3) for i in range(400)]
    text = diff(expected, actual, "e", "a", max_lines=50)
    assert len(text.splitlines()) == 52
    assert "... diff cut at 50 lines" in text and "400 message line(s) differ" in text
