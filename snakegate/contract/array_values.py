"""The values of an array archive's small axes, for a preflight: an .npz's 1-D numeric arrays of at most
SMALL_ARRAY_MAX elements (a delay or energy axis), never the data arrays.

`with_small_values(path, arrays)` takes the headers `snakegate.contract.artifacts.npz_headers` read (name,
shape, dtype) and returns a copy where each such array also has `values` (a list of floats; NaN and
infinity kept as they are) so a preflight can compare a param with the axis (a time zero before every
delay). Reads only those members, with pickle refused; ValueError when one cannot be read.
"""

from __future__ import annotations

import zipfile
import zlib
from pathlib import Path

SMALL_ARRAY_MAX = 4096
_NUMERIC_KINDS = "biuf"  # numpy dtype kinds: bool, signed, unsigned, float


def _small(header: dict) -> bool:
    shape = header.get("shape") or []
    return len(shape) == 1 and shape[0] <= SMALL_ARRAY_MAX


def with_small_values(path: Path, arrays: dict[str, dict]) -> dict[str, dict]:
    """`arrays` with `values` added to each small 1-D numeric array (see the module docstring)."""
    import numpy as np  # local: only array archives pay for importing numpy

    wanted = [name for name, header in arrays.items()
              if _small(header) and np.dtype(header["dtype"]).kind in _NUMERIC_KINDS]
    out = {name: dict(header) for name, header in arrays.items()}
    if not wanted:
        return out
    try:
        with np.load(path, allow_pickle=False) as archive:
            for name in wanted:
                out[name]["values"] = [float(v) for v in np.asarray(archive[name], dtype=np.float64).ravel()]
    except (OSError, EOFError, KeyError, zipfile.BadZipFile, zlib.error) as exc:
        raise ValueError(f"{path.name}: an array cannot be read ({exc})") from None
    return out
