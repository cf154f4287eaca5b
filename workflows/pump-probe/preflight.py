"""pump-probe preflight: the ROIs against the detector shape, and the archive's arrays, before any job runs.

Refused, each with the fix: an archive without `frames` (4 axes: delays x shots x rows x columns) and
`delays_ps` (one per delay), fewer than 3 delays or 2 shots, arrays that are not numbers; a delay that is
not a finite number; a time_zero_ps with no delay before it (scripts/pvalues.py tests every delay against
the shots taken before the pump); an empty ROI, one reaching outside the detector, a background ROI under
16 pixels or overlapping the signal ROI.

What it cannot see (the data, never read at the gate): non-finite pixel counts, and a background ROI whose
pixels never change; scripts/extract.py and scripts/pvalues.py refuse those when the run reads the frames.

Pure: reads only its arguments (the resolved params and the read-only view of data_file the gate passes:
array names, shapes and dtypes, and the values of the small 1-D `delays_ps`, never the frames).
"""

ROIS = ("signal_roi", "background_roi")
MIN_BACKGROUND_PIXELS = 16


def _span(roi):
    return f"rows {roi[0]}-{roi[1] - 1}, columns {roi[2]}-{roi[3] - 1}"


def _array_findings(arrays):
    """Findings about the archive's arrays; the detector shape (rows, cols) or None when unusable."""
    found = []
    frames, delays = arrays.get("frames"), arrays.get("delays_ps")
    missing = [name for name, a in (("frames", frames), ("delays_ps", delays)) if a is None]
    if missing:
        found.append({"path": "data_file",
                      "message": f"`data_file` has no array named {' or '.join(missing)} (it holds: "
                                 f"{', '.join(sorted(arrays)) or 'nothing'})",
                      "hint": "save the images as `frames` (delays x shots x rows x columns) and the delays as "
                              "`delays_ps`: numpy.savez(path, frames=..., delays_ps=...)"})
        return found, None
    shape = tuple(frames["shape"])
    if len(shape) != 4:
        found.append({"path": "data_file",
                      "message": f"`frames` in `data_file` has shape {list(shape)}; expected 4 axes: delays x shots "
                                 "x rows x columns",
                      "hint": "reshape the stack so its axes are (delay, shot, row, column); a single shot per "
                              "delay needs a shots axis of length 1 — but at least 2 shots are required"})
        return found, None
    if len(tuple(delays["shape"])) != 1 or tuple(delays["shape"])[0] != shape[0]:
        found.append({"path": "data_file",
                      "message": f"`delays_ps` has shape {list(delays['shape'])} but `frames` has {shape[0]} delays; "
                                 "there must be one delay per first-axis entry of `frames`",
                      "hint": "save delays_ps as a 1-D array with one value (ps) per delay"})
    if shape[0] < 3 or shape[1] < 2:
        found.append({"path": "data_file",
                      "message": f"`frames` has {shape[0]} delays and {shape[1]} shots per delay; at least 3 delays "
                                 "and 2 shots are needed to test for a delay dependence",
                      "hint": "record more delays or shots"})
    for name, a in (("frames", frames), ("delays_ps", delays)):
        kind = a["dtype"].lstrip("<>|=")
        if not kind.startswith(("int", "uint", "float")):
            found.append({"path": "data_file",
                          "message": f"`{name}` in `data_file` has dtype {a['dtype']}; numbers are needed",
                          "hint": f"save `{name}` as an integer or float array"})
    return found, shape[2:]


def _delay_findings(params, delays):
    """Findings about the delay values (when the gate could read them) against time_zero_ps."""
    values = delays.get("values")
    if values is None:
        return []
    if any(v != v or v in (float("inf"), float("-inf")) for v in values):
        return [{"path": "data_file", "message": "`delays_ps` in `data_file` holds a value that is not a finite "
                                                 "number (NaN or infinity)",
                 "hint": "save every delay as a number of picoseconds"}]
    t0 = params["time_zero_ps"]
    if not any(v < t0 for v in values):
        return [{"path": "time_zero_ps",
                 "message": f"no delay lies before `time_zero_ps` {t0:g} ps (the delays run from {min(values):g} to "
                            f"{max(values):g} ps); every delay is tested against the shots taken before the pump "
                            "arrives",
                 "hint": f"set time_zero_ps above {min(values):g} (where the pump really arrives), or record "
                         "delays before time zero"}]
    return []


def preflight(params, artifacts):
    """Gate findings ({path, message, hint}) for the ROIs and the archive's arrays."""
    view = artifacts.get("data_file")
    found, detector = _array_findings(view["arrays"]) if view else ([], None)
    if view and not found:
        found += _delay_findings(params, view["arrays"]["delays_ps"])
    rois = {name: list(params[name]) for name in ROIS}
    usable = {}
    for name, roi in rois.items():
        r0, r1, c0, c1 = roi
        if r0 >= r1 or c0 >= c1:
            found.append({"path": name,
                          "message": f"`{name}` {roi} is empty: it needs row0 < row1 and col0 < col1 "
                                     "([row0, row1, col0, col1], ends excluded)",
                          "hint": f"for example [{min(r0, r1)}, {max(r0, r1) + (r0 == r1)}, {min(c0, c1)}, "
                                  f"{max(c0, c1) + (c0 == c1)}]"})
            continue
        if detector is not None and (r1 > detector[0] or c1 > detector[1]):
            found.append({"path": name,
                          "message": f"`{name}` {roi} ({_span(roi)}) reaches outside the detector, which has "
                                     f"{detector[0]} rows (0-{detector[0] - 1}) and {detector[1]} columns "
                                     f"(0-{detector[1] - 1})",
                          "hint": f"keep row1 <= {detector[0]} and col1 <= {detector[1]}"})
            continue
        usable[name] = roi
    if "background_roi" in usable:
        r0, r1, c0, c1 = usable["background_roi"]
        if (r1 - r0) * (c1 - c0) < MIN_BACKGROUND_PIXELS:
            found.append({"path": "background_roi",
                          "message": f"`background_roi` {usable['background_roi']} has {(r1 - r0) * (c1 - c0)} "
                                     f"pixels; at least {MIN_BACKGROUND_PIXELS} are needed for a null distribution",
                          "hint": "enlarge it (e.g. 8 x 8 pixels or more) in a region without signal"})
    if len(usable) == 2:
        s, b = usable["signal_roi"], usable["background_roi"]
        rows = (max(s[0], b[0]), min(s[1], b[1]))
        cols = (max(s[2], b[2]), min(s[3], b[3]))
        if rows[0] < rows[1] and cols[0] < cols[1]:
            found.append({"path": "background_roi",
                          "message": f"`background_roi` {b} overlaps `signal_roi` {s} in rows {rows[0]}-{rows[1] - 1}, "
                                     f"columns {cols[0]}-{cols[1] - 1}; the background would contain the signal",
                          "hint": f"move background_roi so it shares no pixel with signal_roi ({_span(s)})"})
    return found
