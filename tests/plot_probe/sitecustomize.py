"""Plot probe: describes every matplotlib figure a workflow script saves, for tests/workflows/test_plot_labels.py.

Python imports `sitecustomize` at start-up from the path, so putting this folder on PYTHONPATH (and
naming an output folder in SNAKEGATE_PLOT_PROBE) reaches the scripts Snakemake starts, unchanged.
When `matplotlib.figure` is first imported, `Figure.savefig` is wrapped: after the real save, one JSON
file per saved figure records the file written and, per axes, its axis labels, titles, legend entries
and how many data series it draws. It never changes what is drawn or written (the expected PNGs still
match byte for byte under it), and without SNAKEGATE_PLOT_PROBE it does nothing at all.
"""

from __future__ import annotations

import importlib.abc
import importlib.util
import json
import os
import sys

PROBE_DIR = os.environ.get("SNAKEGATE_PLOT_PROBE")


def _visible(artist) -> bool:
    return artist.get_visible()


def _series(ax) -> int:
    """Data series drawn in data coordinates: a bar/hist/errorbar container counts once, an image once,
    a line or collection with data once; reference lines (axhline/axvline, drawn in axes coordinates)
    and empty legend proxies do not count."""
    grouped = set()
    count = 0
    for container in ax.containers:
        members = [a for a in container.get_children() if a is not None]
        grouped.update(id(a) for a in members)
        if any(_visible(a) for a in members):
            count += 1
    for line in ax.lines:
        if id(line) in grouped or not _visible(line) or line.get_transform() != ax.transData:
            continue
        if len(line.get_xdata()):
            count += 1
    for collection in ax.collections:
        if id(collection) in grouped or not _visible(collection):
            continue
        if len(collection.get_paths()) or len(collection.get_offsets()):
            count += 1
    count += sum(1 for image in ax.images if _visible(image))
    return count


def _describe(ax) -> dict:
    legend = ax.get_legend()
    return {
        "xlabel": ax.get_xlabel(),
        "ylabel": ax.get_ylabel(),
        "title": " ".join(t for t in (ax.get_title("left"), ax.get_title(), ax.get_title("right")) if t),
        "legend": [t.get_text() for t in legend.get_texts()] if legend is not None and legend.get_visible() else [],
        "series": _series(ax),
        # an x axis shared with another panel may carry its label there (a strip under a main panel)
        "shares_x_with": [ax.figure.axes.index(o) for o in ax.get_shared_x_axes().get_siblings(ax)
                          if o is not ax and o in ax.figure.axes],
        "colorbar": getattr(ax, "_colorbar", None) is not None,
        "shown": bool(ax.axison),
    }


def _patch(figure_module) -> None:
    original = figure_module.Figure.savefig

    def savefig(self, fname, *args, **kwargs):
        result = original(self, fname, *args, **kwargs)
        path = os.path.abspath(os.fspath(fname))
        record = {"path": path, "suptitle": self._suptitle.get_text() if self._suptitle else "",
                  "axes": [_describe(ax) for ax in self.axes]}
        os.makedirs(PROBE_DIR, exist_ok=True)
        name = f"{os.getpid()}-{len(os.listdir(PROBE_DIR))}-{os.path.basename(path)}.json"
        with open(os.path.join(PROBE_DIR, name), "w") as fh:
            json.dump(record, fh, indent=1, sort_keys=True)
        return result

    figure_module.Figure.savefig = savefig


class _PatchOnImport(importlib.abc.MetaPathFinder):
    """Finds nothing itself; when matplotlib.figure is about to load, wraps its loader to patch it after."""

    def find_spec(self, name, path=None, target=None):
        if name != "matplotlib.figure":
            return None
        sys.meta_path.remove(self)
        spec = importlib.util.find_spec(name)
        loader = spec.loader
        run_module = loader.exec_module

        def exec_module(module):
            run_module(module)
            _patch(module)

        loader.exec_module = exec_module
        return spec


if PROBE_DIR:
    sys.meta_path.insert(0, _PatchOnImport())
