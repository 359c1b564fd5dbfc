"""OpenCV is imported only by the commands and code that need it."""

from __future__ import annotations

import subprocess
import sys

from tests.vision.conftest import ROOT

CHECK = """
import sys
{body}
bad = [m for m in sys.modules if m == "cv2" or m.startswith("cv2.")]
assert not bad, "cv2 imported"
print("clean")
"""


def _run(body: str, stdin: str = "") -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", CHECK.format(body=body)], input=stdin, capture_output=True,
                          text=True, cwd=ROOT, timeout=60)  # fmt: skip


def test_import_package_and_cli_parser():
    p = _run("import shoe_daemon, shoe_daemon.vision, shoe_daemon.vision.zones\n"
             "from shoe_daemon import cli\ncli.build_parser()")  # fmt: skip
    assert p.returncode == 0 and "clean" in p.stdout, p.stderr


def test_deal_command_does_not_import_opencv():
    body = ("from shoe_daemon import cli\n"
            "rc = cli.main(['deal', '--decks', '8'])\n"
            "assert rc == 0, rc")  # fmt: skip
    p = _run(body, stdin="9H TS AC 4D 5S 6C\n")
    assert p.returncode == 0 and "clean" in p.stdout, p.stderr
    assert '"winner"' in p.stdout


def test_recognize_does_import_opencv():
    p = subprocess.run([sys.executable, "-c", "import sys\nfrom shoe_daemon.vision.recognizer import Recognizer\n"
                        "Recognizer({})\nprint('cv2' in sys.modules)"], capture_output=True, text=True, cwd=ROOT,
                       timeout=60)  # fmt: skip
    assert p.stdout.strip() == "True", p.stderr
