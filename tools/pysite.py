# pysite.py PREFIX - prints the directory under PREFIX where this Python
# looks for installed packages (an entry of sys.path such as Debian's
# /usr/local/lib/python3.11/dist-packages), so `make install` puts the atoll
# module where `import atoll` finds it with nothing to set; exits 1 when
# this Python searches no directory under PREFIX (the Makefile then falls
# back to PREFIX/lib/python3/dist-packages and says to set PYTHONPATH).
import os
import sys

prefix = os.path.abspath(sys.argv[1]).rstrip("/") + "/lib/python3"
for entry in sys.path:
    if entry.startswith(prefix) and os.path.basename(entry) in ("dist-packages", "site-packages"):
        print(entry)
        sys.exit(0)
sys.exit(1)
