"""Generate the synthetic pump-probe detector set (fixed seed) used by the tests and the examples.

A 32 x 32 pixel detector, 12 pump-probe delays from -2 to 8 ps, 16 shots per
delay. Every pixel records Poisson counts around a flat 100-count background.
The pump adds a Gaussian spot (centre row 12, column 16, sigma 4 px) whose
amplitude follows the delay: zero before time zero, then a 0.5 ps rise and a
6 ps decay, peaking at about +32 counts in the centre pixel. Its wings reach
several rows beyond the signal ROI, which is what the contaminated example's
background ROI catches.

  signal ROI                 [8, 16, 12, 20]   rows 8-15, columns 12-19 (the spot's core)
  clean background ROI       [24, 32, 8, 24]   rows 24-31: 3 sigma and more from the centre
  contaminated background    [16, 24, 8, 24]   rows 16-23: the spot's wing (1-3 sigma)

Writes frames.npz (frames: delays x shots x rows x columns, uint16 counts;
delays_ps: float64) to workflows/pump-probe/test/data/ and
data/examples/pump-probe/ (same bytes: savez_compressed with fixed member times).
Run from anywhere: python workflows/pump-probe/test/data/make_data.py
"""
import io
import zipfile
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[3]  # registry root: workflows/pump-probe/test/data -> root
SEED = 20260301
SHAPE = (32, 32)
DELAYS_PS = np.array([-2.0, -1.0, -0.5, 0.0, 0.25, 0.5, 1.0, 1.5, 2.0, 3.0, 5.0, 8.0])
N_SHOTS = 16
BACKGROUND = 100.0
AMPLITUDE = 40.0
CENTRE, SIGMA = (12.0, 16.0), 4.0
RISE_PS, DECAY_PS = 0.5, 6.0


def amplitude(t):
    """Pump-induced amplitude at delay t (ps): 0 before time zero, rise then decay after."""
    t = np.asarray(t, float)
    return np.where(t > 0, AMPLITUDE * (1 - np.exp(-t / RISE_PS)) * np.exp(-t / DECAY_PS), 0.0)


def spot():
    rows, cols = np.mgrid[0:SHAPE[0], 0:SHAPE[1]]
    return np.exp(-((rows - CENTRE[0]) ** 2 + (cols - CENTRE[1]) ** 2) / (2 * SIGMA ** 2))


def make_frames(rng):
    mean = BACKGROUND + amplitude(DELAYS_PS)[:, None, None, None] * spot()[None, None]
    mean = np.broadcast_to(mean, (len(DELAYS_PS), N_SHOTS, *SHAPE))
    return rng.poisson(mean).astype(np.uint16)


def npz_bytes(arrays):
    """An .npz (what numpy.savez_compressed writes) whose zip members carry a fixed time, so the bytes repeat."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for name, array in arrays.items():
            member = io.BytesIO()
            np.lib.format.write_array(member, np.ascontiguousarray(array), allow_pickle=False)
            info = zipfile.ZipInfo(f"{name}.npy", date_time=(1980, 1, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_DEFLATED
            archive.writestr(info, member.getvalue(), compresslevel=9)
    return buf.getvalue()


def main():
    rng = np.random.default_rng(SEED)
    data = npz_bytes({"frames": make_frames(rng), "delays_ps": DELAYS_PS})
    for folder in (HERE, ROOT / "data" / "examples" / "pump-probe"):
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "frames.npz").write_bytes(data)
        print(f"wrote {folder / 'frames.npz'} ({len(data)} bytes)")


if __name__ == "__main__":
    main()
