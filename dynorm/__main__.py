"""``python -m dynorm``: the ``dynorm`` command."""

from __future__ import annotations

from dynorm.cli import main

if __name__ == "__main__":
    main()
