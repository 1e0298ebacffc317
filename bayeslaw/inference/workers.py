"""What a Dask worker process needs before its first fit: a compile folder, cores per fit.

Imported only on the Dask path (it imports ``distributed``, the optional extra ``dask``).
:class:`WorkerSetup` is registered by :mod:`bayeslaw.inference.fleet` on every cluster it runs on,
so its ``setup`` runs in each worker process, those already there and those that join later,
before any task of bayeslaw's:

* PyTensor's compilation is not thread-safe and its compile folder is shared by default, so a
  worker that has not imported PyTensor yet gets a compile folder of its own (PyTensor's
  ``compiledir``: ``<tmp>/bayeslaw-pytensor/<host>-<worker name>``, stable across restarts of
  the same cluster, so its compiled C code is kept), unless ``PYTENSOR_FLAGS`` names one. A
  worker that already imported PyTensor (a remote worker that ran other work first) keeps its
  folder: PyTensor locks it between processes. The numba cache of the compiled densities
  (:mod:`bayeslaw.inference.compiled`) stays where PyTensor keeps it, under ``base_compiledir``,
  shared by every process of the host: a worker loads from disk what another process compiled
  (numba writes each entry to a temporary file and renames it into place).
* The cores of one fit (``BAYESLAW_CORES``, which :func:`bayeslaw.inference.sampling.fit` passes to
  nutpie as ``cores``): the host's CPUs divided by the worker processes on that host, so that
  ``K`` workers each sampling their chains do not oversubscribe the machine. The number of
  chains is the spec's: changing it would change the draws, and a fleet's results must equal
  the serial run's.
"""

from __future__ import annotations

import os
import re
import sys
import tempfile
from collections import Counter
from typing import Any

from distributed import WorkerPlugin

from .. import constants as C


def compile_folder(host: str, name: Any) -> str:
    """The PyTensor compile folder of the worker ``name`` on ``host``."""
    tag = re.sub(r"[^A-Za-z0-9_.-]+", "_", f"{host}-{name}")
    return os.path.join(tempfile.gettempdir(), "bayeslaw-pytensor", tag)


def workers_per_host(workers: dict[str, dict[str, Any]]) -> Counter[str]:
    """How many worker processes each host runs (``scheduler_info()["workers"]``)."""
    return Counter(info["host"] for info in workers.values())


def cores_per_worker(workers: dict[str, dict[str, Any]], cpus: dict[str, int]
                     ) -> dict[str, int]:
    """Cores one fit may use on each worker: its host's CPUs over that host's workers.

    ``workers`` is the scheduler's ``scheduler_info()["workers"]`` (address -> ``host``);
    ``cpus`` each worker's ``os.cpu_count()``.
    """
    per_host = workers_per_host(workers)
    return {addr: max(1, int(cpus.get(addr) or 1) // per_host[info["host"]])
            for addr, info in workers.items()}


class WorkerSetup(WorkerPlugin):
    """Registered on a cluster by :mod:`bayeslaw.inference.fleet`; see the module docstring.

    Parameters
    ----------
    cores : dict of str to int
        Cores per fit by worker address (:func:`cores_per_worker`); a worker that joins later
        takes its host's CPUs over the number of workers known on that host, or all of them.
    """

    name = "bayeslaw-worker-setup"

    def __init__(self, cores: dict[str, int], hosts: dict[str, int]) -> None:
        self.cores = dict(cores)
        self.hosts = dict(hosts)

    def setup(self, worker: Any) -> None:
        """Set this process's compile folder (if PyTensor is not loaded yet) and cores."""
        host = worker.address.split("://")[-1].rsplit(":", 1)[0]
        flags = os.environ.get("PYTENSOR_FLAGS", "")
        named = {f.split("=", 1)[0].strip() for f in flags.split(",")}
        if "pytensor" not in sys.modules and "compiledir" not in named:
            os.environ["PYTENSOR_FLAGS"] = ",".join(
                f for f in (flags, f"compiledir={compile_folder(host, worker.name)}") if f)
        cores = self.cores.get(worker.address)
        if cores is None:
            cores = max(1, (os.cpu_count() or 1) // max(1, self.hosts.get(host, 1)))
        os.environ[C.ENV_CORES] = str(cores)


def plugin_for(client: Any) -> WorkerSetup:
    """The setup plugin for the workers ``client``'s scheduler knows now."""
    workers = client.scheduler_info(n_workers=-1)["workers"]
    cpus = client.run(os.cpu_count) if workers else {}
    return WorkerSetup(cores_per_worker(workers, cpus), dict(workers_per_host(workers)))
