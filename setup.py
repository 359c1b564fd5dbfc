"""Packaging hook: the fixture library (top-level fixtures/) goes into the wheel.

The metadata is all in pyproject.toml. A technician at an installed table (`make install`, any
non-editable install) runs `shoe-daemon replay --list` and `--check` on the library; it is copied
into the wheel as ``shoe_daemon/fixture_library/`` (recordings, check files, the camera frames they
reference; not the scripts that make them). An editable install reads fixtures/ in place.
"""

from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

LIBRARY = Path(__file__).resolve().parent / "fixtures"
TARGET = ("shoe_daemon", "fixture_library")
PATTERNS = ("*.shoelog", "*.shoelog.gz", "*.chk", "*.chk.gz", "camera/*/*.jpg", "camera/*/*.png", "camera/*/*.json")


class BuildPyWithFixtures(build_py):
    def run(self):
        super().run()
        if getattr(self, "editable_mode", False) or not LIBRARY.is_dir():
            return
        target = Path(self.build_lib, *TARGET)
        for pattern in PATTERNS:
            for source in sorted(LIBRARY.glob(pattern)):
                dest = target / source.relative_to(LIBRARY)
                self.mkpath(str(dest.parent))
                self.copy_file(str(source), str(dest), preserve_mode=False)


setup(cmdclass={"build_py": BuildPyWithFixtures})
