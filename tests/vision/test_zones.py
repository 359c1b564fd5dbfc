"""Zones: parsing camera.zones, point in polygon, and the zone of a recognised card."""

from __future__ import annotations

import pytest

from shoe_daemon.vision.zones import Zone, ZoneError, parse_zones, zone_of

BOXES = [
    {"name": "punto", "polygon": [[100, 100], [500, 100], [500, 400], [100, 400]]},
    {"name": "banco", "polygon": [[600, 100], [1000, 120], [980, 420], [620, 400]]},
]


def test_parse_and_locate():
    zones = parse_zones(BOXES)
    assert [z.name for z in zones] == ["punto", "banco"]
    assert zone_of(zones, (300, 250)) == "punto"
    assert zone_of(zones, (800, 260)) == "banco"
    assert zone_of(zones, (550, 250)) is None
    assert zone_of(zones, (800, 110)) is None          # above banco's slanted top edge
    assert zone_of([], (300, 250)) is None


def test_concave_polygon():
    z = Zone.from_config({"name": "L", "polygon": [[0, 0], [10, 0], [10, 4], [4, 4], [4, 10], [0, 10]]})
    assert z.contains(2, 8) and z.contains(8, 2) and not z.contains(8, 8)


@pytest.mark.parametrize("entry,message", [
    ({"polygon": [[0, 0], [1, 0], [1, 1]]}, "camera.zones[0].name"),
    ({"name": "p", "polygon": [[0, 0], [1, 0]]}, "at least 3"),
    ({"name": "p", "polygon": [[0, 0], [1, "x"], [1, 1]]}, "camera.zones[0].polygon[1]"),
    ({"name": "p", "polygon": [[0, 0], [1, 0], [1, 1]], "colour": "red"}, "unknown key 'colour'"),
    ("punto", "must be a table"),
])  # fmt: skip
def test_bad_zone_entries(entry, message):
    with pytest.raises(ZoneError, match=message.replace("[", r"\[").replace("]", r"\]")):
        parse_zones([entry])


def test_duplicate_names():
    with pytest.raises(ZoneError, match="duplicate"):
        parse_zones([BOXES[0], BOXES[0]])


def test_zones_from_config_and_recognised_cards(generator, tmp_path):
    from shoe_daemon.config import load_config
    from shoe_daemon.vision.recognizer import Recognizer

    f = generator("nominal", seed=12).frame(1, codes=["2H", "3S", "4D", "5C"], hand=False)
    toml = "[camera]\nzones = [\n" + "".join(
        f'  {{ name = "{z["name"]}", polygon = {z["polygon"]} }},\n' for z in f.zones) + "]\n"
    (tmp_path / "c.toml").write_text(toml)
    rec = Recognizer(load_config(tmp_path / "c.toml"))
    assert [z.name for z in rec.zones] == ["punto", "banco"]
    res = rec.recognize(f.image)
    assert {(c.card, c.zone) for c in res.cards} == {("2H", "punto"), ("3S", "banco"), ("4D", "punto"),
                                                     ("5C", "banco")}  # fmt: skip
    # Without zones, every card's zone is null; a zone elsewhere holds none.
    far = parse_zones([{"name": "tray", "polygon": [[0, 0], [60, 0], [60, 60], [0, 60]]}])
    assert {c.zone for c in rec.recognize(f.image, zones=far).cards} == {None}
