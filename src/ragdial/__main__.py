"""``python -m ragdial``: the command line."""

from ragdial.cli import main

if __name__ == "__main__":
    main()
