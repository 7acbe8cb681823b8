"""Shared pytest configuration for gradcheck's own tests."""

import os

# Multithreaded BLAS makes the small matrices of the linalg ops 8-100x slower when the
# 2 cores are shared between test workers; set before numpy loads its BLAS.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

# pytester runs pytest in a temporary directory; the plugin tests use it.
pytest_plugins = ["pytester"]

# The HTML report imports matplotlib when it first draws a plot.  A pytester run in this
# process removes the modules first imported inside it afterwards; a later import then mixes
# fresh and old matplotlib classes ("Invalid arguments to set_clip_path, of type Rectangle").
# Imported here, before any pytester run, it is never removed.
import matplotlib.figure  # noqa: E402, F401
