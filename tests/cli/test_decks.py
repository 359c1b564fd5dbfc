"""Every command that takes --decks takes the same ones: 4, 6 or 8 (argtypes.decks), with one message."""

from __future__ import annotations

import argparse

import pytest

from shoe_daemon.cli import build_parser
from shoe_daemon.commands import argtypes

# The other arguments each command needs to parse.
REQUIRED = {"record": ["--port", "/dev/null", "--out", "x.shoelog"]}


def deck_commands() -> dict[str, argparse.ArgumentParser]:
    parser = build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return {name: p for name, p in sub.choices.items()
            if any("--decks" in a.option_strings for a in p._actions)}


def test_the_deck_commands_are_found():
    # If one is renamed or loses --decks this test says so rather than checking nothing.
    assert set(deck_commands()) >= {"deal", "shuffle", "demo", "emulate", "odds", "record"}


@pytest.mark.parametrize("command", sorted(deck_commands()))
def test_each_uses_the_shared_argtype(command):
    action = next(a for a in deck_commands()[command]._actions if "--decks" in a.option_strings)
    assert action.type is argtypes.decks and action.choices is None


@pytest.mark.parametrize("command", sorted(deck_commands()))
@pytest.mark.parametrize("decks", ["4", "6", "8"])
def test_4_6_8_accepted(command, decks):
    args = build_parser().parse_args([command, "--decks", decks, *REQUIRED.get(command, [])])
    assert args.decks == int(decks)


@pytest.mark.parametrize("command", sorted(deck_commands()))
@pytest.mark.parametrize("decks", ["0", "1", "5", "7", "9", "x", "6.0"])
def test_others_refused_with_one_message(command, decks, capsys):
    with pytest.raises(SystemExit) as exc:
        build_parser().parse_args([command, "--decks", decks, *REQUIRED.get(command, [])])
    assert exc.value.code == 2
    assert f"argument --decks: the number of decks must be 4, 6 or 8 (got '{decks}')" in capsys.readouterr().err
