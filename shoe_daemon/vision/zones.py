"""Layout zones: named polygons in image coordinates (config ``camera.zones``).

    [camera]
    zones = [
      { name = "punto", polygon = [[180, 250], [620, 250], [620, 600], [180, 600]] },
      { name = "banco", polygon = [[660, 250], [1100, 250], [1100, 600], [660, 600]] },
    ]

A card belongs to the zone that contains its centre (the first listed, if zones overlap), or to
none. Pure Python: no OpenCV needed to parse or test zones.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any


class ZoneError(ValueError):
    """A malformed ``camera.zones`` entry; ``str(e)`` names it."""


@dataclass(frozen=True)
class Zone:
    name: str
    polygon: tuple[tuple[float, float], ...]

    @classmethod
    def from_config(cls, entry: Any, index: int = 0) -> Zone:
        where = f"camera.zones[{index}]"
        if not isinstance(entry, dict):
            raise ZoneError(f"{where}: must be a table {{name, polygon}}")
        name = entry.get("name")
        if not isinstance(name, str) or not name:
            raise ZoneError(f"{where}.name: must be a non-empty string")
        poly = entry.get("polygon")
        if not isinstance(poly, (list, tuple)) or len(poly) < 3:
            raise ZoneError(f"{where}.polygon: must be a list of at least 3 [x, y] points")
        pts = []
        for j, p in enumerate(poly):
            if (not isinstance(p, (list, tuple)) or len(p) != 2
                    or not all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in p)):
                raise ZoneError(f"{where}.polygon[{j}]: must be [x, y] numbers (got {p!r})")
            pts.append((float(p[0]), float(p[1])))
        unknown = set(entry) - {"name", "polygon"}
        if unknown:
            raise ZoneError(f"{where}: unknown key {sorted(unknown)[0]!r} (keys: name, polygon)")
        return cls(name, tuple(pts))

    def contains(self, x: float, y: float) -> bool:
        """Even-odd rule; a point on the boundary may go either way."""
        inside = False
        pts = self.polygon
        n = len(pts)
        j = n - 1
        for i in range(n):
            xi, yi = pts[i]
            xj, yj = pts[j]
            if (yi > y) != (yj > y):
                xc = xi + (y - yi) * (xj - xi) / (yj - yi)
                if x < xc:
                    inside = not inside
            j = i
        return inside

    def to_config(self) -> dict[str, Any]:
        return {"name": self.name, "polygon": [[x, y] for x, y in self.polygon]}


def parse_zones(entries: Iterable[Any] | None) -> list[Zone]:
    zones = [Zone.from_config(e, i) for i, e in enumerate(entries or [])]
    names = [z.name for z in zones]
    for i, n in enumerate(names):
        if n in names[:i]:
            raise ZoneError(f"camera.zones[{i}].name: duplicate zone name {n!r}")
    return zones


def zone_of(zones: Sequence[Zone], point: Sequence[float]) -> str | None:
    x, y = float(point[0]), float(point[1])
    for z in zones:
        if z.contains(x, y):
            return z.name
    return None
