"""mpl_agg: matplotlib with its Agg backend, for the scripts that draw PNGs.

When the first python3 on PATH lacks matplotlib (a venv, a Homebrew
python), the calling script re-executes itself under /usr/bin/python3
(Debian's python3-matplotlib). The paths are not compared by realpath: a
venv's python3 is a link to the same binary, yet without Debian's
dist-packages. GEODES_PLOT_REEXEC stops a loop.
"""
import os
import sys


def matplotlib_agg(script, name):
    """Returns matplotlib with the Agg backend, or re-executes `script`
    (the caller's __file__) under /usr/bin/python3, or exits naming the
    package to install; `name` is the script's name for that message."""
    try:
        import matplotlib
    except ImportError:
        system = "/usr/bin/python3"
        if os.path.exists(system) and not os.environ.get("GEODES_PLOT_REEXEC"):
            os.environ["GEODES_PLOT_REEXEC"] = "1"
            os.execv(system, [system, os.path.abspath(script)] + sys.argv[1:])
        sys.exit("%s: matplotlib is missing (Debian: apt-get install "
                 "python3-matplotlib)" % name)
    matplotlib.use("Agg")
    return matplotlib
