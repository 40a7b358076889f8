"""What else ran on the machine while a measurement was taken.

Seconds are comparable only when the machine was the measurement's own.  :class:`LoadMeter`
reads the machine's busy CPU time (Linux ``/proc/stat``: every CPU's user, nice, system, irq,
softirq and steal time) and this process's own CPU time (:func:`time.process_time`, all its
threads) at the start and at the end of a measurement; the difference is the CPU time other
processes used beside it, and divided by the wall seconds, the **other cores**: how many cores
other work kept busy on average while it ran (0 on an idle machine; 1.0: one core fully busy
with another job).  A measurement is *shared* when that exceeds :data:`SHARED_CORES`.

Every run's ``meta.json`` records it (``machine_load``), and every seconds figure a verdict,
table or figure reads comes from a measurement that was not shared (the report refuses the
others; :mod:`same.report.timing`).  Where ``/proc/stat`` cannot be read (not Linux), the load
is unknown (None), and an unknown load counts as shared.
"""

from __future__ import annotations

import os
import time

__all__ = ["SHARED_CORES", "LoadMeter", "machine_busy_seconds", "is_shared", "wait_quiet"]

#: Other work averaging more than this many busy cores makes a measurement shared. Measured
#: on the 2-core VM: idle, 0.003–0.007 (its kernel threads); Snakemake's own scheduler while
#: it runs the quick profile's 190-job DAG beside a job that reserves every core, 0.12–0.19;
#: another 1-thread job beside the measurement, about 1.0. A 1-thread measurement on two
#: cores leaves one core free: other work up to half of it does not take the measurement's.
SHARED_CORES = 0.5

_PROC_STAT = "/proc/stat"


def machine_busy_seconds(path: str = _PROC_STAT) -> float | None:
    """CPU seconds every CPU of the machine has been busy since boot (``/proc/stat``'s first
    line: all fields but idle and iowait, guest time being inside user time), or None where
    it cannot be read."""
    try:
        with open(path) as f:
            fields = f.readline().split()
        ticks = [int(x) for x in fields[1:9]]  # user nice system idle iowait irq softirq steal
        hz = os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError):
        return None
    if fields[0] != "cpu" or len(ticks) < 8:
        return None
    return (sum(ticks) - ticks[3] - ticks[4]) / hz


class LoadMeter:
    """Measure other work beside a block of code: ``with LoadMeter() as m: ...`` then
    :meth:`record` (``other_cores``, ``wall_seconds``, ``own_cpu_seconds``,
    ``other_cpu_seconds``, ``logical_cores``, ``shared``, ``source``).  Reusable: each
    ``with`` block is one measurement."""

    def __init__(self, threshold: float = SHARED_CORES):
        self.threshold = threshold
        self._start = self._end = None

    def __enter__(self) -> LoadMeter:
        self._start = (time.perf_counter(), time.process_time(), machine_busy_seconds())
        self._end = None
        return self

    def __exit__(self, *exc) -> None:
        self._end = (time.perf_counter(), time.process_time(), machine_busy_seconds())

    def record(self) -> dict:
        """The measurement as meta.json stores it (``other_cores`` None: unknown)."""
        if self._start is None or self._end is None:
            raise RuntimeError("LoadMeter.record() before the measured block ended")
        (w0, c0, b0), (w1, c1, b1) = self._start, self._end
        wall, own = w1 - w0, c1 - c0
        other = None if b0 is None or b1 is None else max(0.0, (b1 - b0) - own)
        cores = None if other is None or wall <= 0 else other / wall
        return {"other_cores": cores, "wall_seconds": wall, "own_cpu_seconds": own,
                "other_cpu_seconds": other, "logical_cores": os.cpu_count(),
                "threshold_cores": self.threshold,
                "shared": is_shared({"other_cores": cores}, self.threshold),
                "source": _PROC_STAT if cores is not None else None}


def is_shared(record: dict | None, threshold: float = SHARED_CORES) -> bool:
    """Whether a :meth:`LoadMeter.record` (or meta.json's ``machine_load``) says the
    measurement shared the machine: other work above ``threshold`` cores on average, or the
    load unknown (no record, or not measurable there)."""
    if not record or record.get("other_cores") is None:
        return True
    return float(record["other_cores"]) > threshold


def wait_quiet(max_seconds: float, threshold: float = SHARED_CORES, window: float = 0.25,
               *, clock=time.monotonic, sleep=time.sleep) -> float:
    """Wait, this process idle, until the other work on the machine over one ``window`` (s) is
    at most ``threshold`` cores, or ``max_seconds`` have passed; returns the seconds waited.
    A measurement found shared is taken again after this (:mod:`same.experiments.timing`):
    other work comes in bursts (a workflow's short local jobs, another process's start-up),
    and a retry at once falls in the same burst. Where the load cannot be read, no wait."""
    start = clock()
    while clock() - start < max_seconds:
        before = machine_busy_seconds()
        if before is None:
            break
        sleep(window)
        after = machine_busy_seconds()
        if after is None or (after - before) / window <= threshold:
            break
    return clock() - start
