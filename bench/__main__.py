"""Run every benchmark module in this folder (or those named on the command line)."""

import importlib
import pkgutil
import sys
from pathlib import Path


def main(argv: list[str]) -> int:
    here = [str(Path(__file__).parent)]
    names = argv or sorted(m.name for m in pkgutil.iter_modules(here) if not m.name.startswith("_"))
    for name in names:
        module = importlib.import_module(f"bench.{name}")
        if hasattr(module, "main"):
            print(f"== bench.{name}", flush=True)
            module.main()
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
