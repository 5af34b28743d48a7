"""Run every benchmark module in ``bench/`` (``make bench``), or those named as arguments."""

from __future__ import annotations

import importlib
import pkgutil
import sys
from pathlib import Path


def main(argv: list[str]) -> int:
    """Import ``bench.<name>`` for each module and call its ``main()``."""
    here = Path(__file__).parent
    names = argv or sorted(
        info.name for info in pkgutil.iter_modules([str(here)]) if not info.name.startswith("_")
    )
    for name in names:
        module = importlib.import_module(f"bench.{name}")
        print(f"== bench/{name}.py")
        module.main()
        print()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
