"""The `gputap` command installed with the package: runs the bundled C program."""
import os
import sys


def binary():
    return os.path.join(os.path.dirname(os.path.abspath(__file__)), "_bin", "gputap")


def main():
    exe = binary()
    if not os.access(exe, os.X_OK):
        sys.stderr.write("gputap: the gputap program is missing from the package (%s); reinstall it\n" % exe)
        return 127
    # `gputap fleet` runs Python again: this package's own interpreter (a venv's, not python3 from PATH)
    os.environ.setdefault("GPUTAP_PYTHON", sys.executable)
    try:
        os.execv(exe, ["gputap"] + sys.argv[1:])
    except OSError as e:
        sys.stderr.write("gputap: cannot run %s: %s\n" % (exe, e))
        return 126
    return 0


if __name__ == "__main__":
    sys.exit(main())
