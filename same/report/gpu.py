"""The committed GPU measurements claim C6 is judged from when the workflow's own m sweep ran on
a CPU: results of ``benchmarks/gpu_same.py`` (SAME's seconds per pass at a paper shape, on a
synthetic corpus, for each m), kept under :data:`GPU_DIR` as
``<device>_<date>/same_<shape>_cupy.json`` (:data:`MEASUREMENT_GLOB`), e.g.
``results/gpu/h100_2026-11-27/same_nytimes_cupy.json``.

:func:`newest_gpu_measurement` reads them, each checked against
``gpu_measurement.schema.json`` (:mod:`same.io.schema`), and returns the newest by the time it
records (never the file's modification time) as a :class:`GpuMeasurement`.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

__all__ = ["GPU_DIR", "MEASUREMENT_GLOB", "SAMPLER", "GpuMeasurement", "GpuMeasurementError",
           "measurement_files", "read_gpu_measurement", "newest_gpu_measurement"]

#: Where GPU measurements are committed (relative to the repository root, where the workflow
#: runs): the one place the report and the workflow's claims rule take it from.
GPU_DIR = "results/gpu"
#: A measurement's path under :data:`GPU_DIR`: one folder per session, ``<device>_<date>``.
MEASUREMENT_GLOB = "*/same_*_cupy.json"
#: The sampler whose seconds C6 reads: the per-nonzero one (Algorithm 3 as written, whose cost
#: against m is the question; the m sweep's own sampler).
SAMPLER = "nonzero"

SCHEMA = Path(__file__).with_name("gpu_measurement.schema.json")


class GpuMeasurementError(ValueError):
    """A GPU measurement that is unreadable or not one of ``benchmarks/gpu_same.py``'s (one line
    naming the file)."""


@dataclass(frozen=True)
class GpuMeasurement:
    """One measurement of ``benchmarks/gpu_same.py``, as C6 reads it.

    path : the file
    device : the GPU's name ("NVIDIA H100 80GB HBM3")
    seconds_per_pass : m → seconds of one pass of the per-nonzero sampler (:data:`SAMPLER`);
        empty when that sampler was not measured
    samplers : every sampler the file measured
    time_utc : when it was measured (time zone aware)
    commit : the git commit of the code measured (None: unknown)
    shape, settings : the corpus shape and the fit's settings, as the file records them
    wall_seconds_per_pass : m → the same pass's wall-clock seconds on the host (gpu_same.py's
        ``wall_seconds_per_pass``: the device's seconds plus the host's staging) for the
        per-nonzero sampler; empty when the file has none. C6 is re-judged on them, a free
        choice of its rule (:data:`~same.report.verdicts.FREE_CHOICES`)
    """

    path: Path
    device: str
    seconds_per_pass: dict[float, float]
    samplers: tuple[str, ...]
    time_utc: datetime
    commit: str | None
    shape: dict = field(default_factory=dict)
    settings: dict = field(default_factory=dict)
    wall_seconds_per_pass: dict[float, float] = field(default_factory=dict)

    @property
    def date(self) -> str:
        """The measurement's date (UTC), YYYY-MM-DD."""
        return self.time_utc.date().isoformat()

    @property
    def commit_text(self) -> str:
        """The commit, short: 7 hex digits, ``-dirty`` kept; "unknown" when not recorded."""
        if not self.commit:
            return "unknown"
        head, dirty, _ = self.commit.partition("-dirty")
        return head[:7] + ("-dirty" if dirty else "")

    @property
    def shape_text(self) -> str:
        """"NYTimes shape (synthetic: D 300,000, W 102,660, NNZ 69,679,427), K=256, n_inner=5,
        batch 15,000, the last of 2 passes" (the scale named when not 1)."""
        s, st = self.shape, self.settings
        scale = "" if s["scale"] == 1 else f" at {s['scale']:g} of it"
        return (f"{s['name']} shape{scale} (synthetic: D {s['n_docs']:,}, W {s['n_words']:,}, "
                f"NNZ {s['nnz']:,}), K={st['n_components']}, n_inner={st['n_inner']}, batch "
                f"{st['batch_size']:,}, the last of {st['passes']} passes")


def measurement_files(root: str | os.PathLike = GPU_DIR) -> list[Path]:
    """The GPU measurements under ``root`` (:data:`MEASUREMENT_GLOB`), sorted; [] when there is
    no such folder."""
    return sorted(Path(root).glob(MEASUREMENT_GLOB))


def read_gpu_measurement(path: str | os.PathLike) -> GpuMeasurement:
    """One measurement file, checked: JSON without repeated keys, and valid against
    ``gpu_measurement.schema.json`` (a gpu_same.py result measured with CuPy, with its device,
    shape, settings, seconds per pass, time and commit).

    Raises
    ------
    GpuMeasurementError
        One line naming the file and what is wrong.
    """
    path = Path(path)
    from same.io.schema import check_schema
    from same.io.textinput import loads_json

    try:
        data = loads_json(path.read_text(encoding="utf-8"), str(path))
    except (OSError, ValueError) as exc:
        raise GpuMeasurementError(f"GPU measurement {path}: unreadable "
                                  f"({type(exc).__name__}: {' '.join(str(exc).split())})") \
            from None
    try:
        check_schema(data, SCHEMA, f"GPU measurement {path}")
    except ValueError as exc:
        raise GpuMeasurementError(" ".join(str(exc).split())) from None
    try:
        when = datetime.fromisoformat(data["time_utc"].replace("Z", "+00:00"))
    except ValueError as exc:
        raise GpuMeasurementError(f"GPU measurement {path} time_utc: {exc}") from None
    runs, wall = data["seconds_per_pass"], data.get("wall_seconds_per_pass") or {}
    return GpuMeasurement(path, data["device"]["name"],
                          {float(m): float(s) for m, s in (runs.get(SAMPLER) or {}).items()},
                          tuple(runs), when, data["commit"], dict(data["shape"]),
                          dict(data["settings"]),
                          {float(m): float(s) for m, s in (wall.get(SAMPLER) or {}).items()})


def newest_gpu_measurement(source: str | os.PathLike | Iterable = GPU_DIR
                           ) -> GpuMeasurement | None:
    """The newest GPU measurement by the time it records (ties: the later path), read from a
    directory (its :func:`measurement_files`) or from the given files; None when there is none.

    Every file is read and checked (:func:`read_gpu_measurement`), not only the newest: a
    damaged one is an error, never skipped.
    """
    files = (measurement_files(source) if isinstance(source, (str, os.PathLike))
             else [Path(p) for p in source])
    found = [read_gpu_measurement(p) for p in files]
    return max(found, key=lambda g: (g.time_utc, str(g.path)), default=None)
