"""``python -m core.cli``: the ``evergreen`` command."""

from core.cli import main

main()
