"""Where a sweep's units run: :mod:`.local` worker processes (the default) or a Dask
distributed cluster (:mod:`.cluster`).  A unit (:mod:`.unit`) is an op at a seed; every
executor returns its reports by unit index, so the results never depend on which unit
finished first, nor on where it ran."""

from gradcheck.checker.executors.cluster import ExecutorError

__all__ = ["ExecutorError"]
