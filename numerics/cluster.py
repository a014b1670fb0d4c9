"""Dask clusters for the suite's campaigns (``checks.runners.campaign``) and pair tiles (``numerics.ws.pair_tiles``):
one way to start a local cluster, one way to join a scheduler, one check of the ``--workers``/``--scheduler`` flags,
the name of the worker a task runs on, and the atomic write of their journals."""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["atomic_write", "check_options", "connect_client", "local_cluster", "restore_environ", "worker_address"]


def atomic_write(path: Path, data: str | bytes) -> None:
    """Write ``data`` (text, or bytes) to ``path`` through a temporary file of this process and a rename: a reader
    (or a resume after a kill) sees the old file or the new one, never half of one."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    if isinstance(data, bytes):
        tmp.write_bytes(data)
    else:
        tmp.write_text(data)
    tmp.replace(path)


def worker_address(outside: str) -> str:
    """The Dask worker running this task, or ``outside`` when there is none."""
    try:
        from distributed import get_worker

        return get_worker().address
    except (ImportError, ValueError):
        return outside


def check_options(workers: int | None, scheduler: str | None) -> None:
    """The ``--workers K`` / ``--scheduler [ADDRESS]`` pair of a command line: ValueError naming the problem."""
    if workers is not None and scheduler is not None:
        raise ValueError("--workers starts a local cluster and --scheduler joins an existing one: give one of them")
    if workers is not None and workers < 1:
        raise ValueError(f"--workers must be a positive integer, got {workers}")


def connect_client(address: str | None):
    """A ``distributed.Client`` of the scheduler at ``address`` (None or "": Dask's ``scheduler-address``
    configuration); ValueError when none is configured or it cannot be reached."""
    import dask
    from distributed import Client

    address = address or dask.config.get("scheduler-address", None)
    if not address:
        raise ValueError("--scheduler without an address needs Dask's 'scheduler-address' configuration "
                         "(DASK_SCHEDULER_ADDRESS=tcp://host:port, or ~/.config/dask/*.yaml); none is set")
    try:
        return Client(address, timeout=30)
    except OSError as exc:
        raise ValueError(f"--scheduler {address}: cannot reach the scheduler ({exc})") from None


def local_cluster(workers: int, *, processes: bool = True):
    """(cluster, client, environ_before): a LocalCluster of ``workers`` single-threaded worker processes.

    Dask's nanny writes its workers' environment (``MALLOC_TRIM_THRESHOLD_=65536``, ``OMP_NUM_THREADS=1``,
    ``OPENBLAS_NUM_THREADS=1``, ``MKL_NUM_THREADS=1``, ``PYTHONHASHSEED``, …) into *this* process's ``os.environ``
    before it spawns them, and leaves it there: every later subprocess of the caller then ran single-threaded, with
    glibc returning freed heap above 64 KB to the kernel (measured: ~2 600 page faults a call of the binary moments
    at D = 2001, n = 2000, against 0). The variables are put back as they were once the workers run, and again by
    :func:`restore_environ` when the cluster closes (a nanny that restarts a killed worker writes them again)."""
    from distributed import Client, LocalCluster

    before = dict(os.environ)
    cluster = LocalCluster(n_workers=workers, threads_per_worker=1, processes=processes, dashboard_address=":0",
                           scheduler_port=0, silence_logs=40)
    restore_environ(before)
    return cluster, Client(cluster), before


def restore_environ(before: dict[str, str]) -> None:
    """``os.environ`` as it was in ``before``."""
    for k in [k for k in os.environ if k not in before]:
        del os.environ[k]
    for k, v in before.items():
        if os.environ.get(k) != v:
            os.environ[k] = v
