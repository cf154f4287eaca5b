"""The registry's parsed-manifest cache (issue 30: parsing every workflow.yaml was 89 % of loading a 500-workflow
registry): the same workflows load from it, an edited workflow.yaml is parsed and checked again (a broken edit is
reported broken, never served from the cache), and a damaged or unwritable cache only makes loading slower."""

from __future__ import annotations

import json
import os
import stat

from registry_copies import make_registry
from snakegate.registry.manifest_cache import FILE, FOLDER, VERSION
from snakegate.registry.workflows import Registry


def _cache(root):
    return root.joinpath(*FOLDER) / FILE


def test_a_second_load_comes_from_the_cache_and_gives_the_same_workflows(tmp_path):
    root = make_registry(tmp_path / "registry")
    first = Registry.load(root)
    assert _cache(root).is_file() and stat.S_IMODE(_cache(root).stat().st_mode) == 0o600
    entries = json.loads(_cache(root).read_text())["entries"]
    assert [k.split(":")[1] for k in entries] == ["tabular-profile"]
    second = Registry.load(root)
    assert second.ids() == first.ids()
    assert second.get("tabular-profile").manifest == first.get("tabular-profile").manifest
    # ... in the author's order too: outputs and params are listed and asked in it
    assert repr(second.get("tabular-profile").manifest) == repr(first.get("tabular-profile").manifest)


def test_an_edited_manifest_is_parsed_again_and_a_broken_edit_is_reported(tmp_path):
    root = make_registry(tmp_path / "registry")
    Registry.load(root)
    manifest = root / "workflows" / "tabular-profile" / "workflow.yaml"
    manifest.write_text(manifest.read_text().replace("title:", "title_typo:", 1))
    reg = Registry.load(root)
    assert "tabular-profile" not in reg.ids() and "title" in reg.broken["tabular-profile"]
    manifest.write_text(manifest.read_text().replace("title_typo:", "title:", 1))
    assert Registry.load(root).ids() == ["tabular-profile"]


def test_a_poisoned_entry_cannot_change_a_manifest_whose_bytes_it_does_not_match(tmp_path):
    root = make_registry(tmp_path / "registry")
    Registry.load(root)
    data = json.loads(_cache(root).read_text())
    (key,) = data["entries"]
    data["entries"]["0" * 64 + ":tabular-profile"] = {**data["entries"][key], "title": "Hijacked"}
    del data["entries"][key]
    _cache(root).write_text(json.dumps(data))
    assert Registry.load(root).get("tabular-profile").manifest.title != "Hijacked"


def test_a_damaged_or_unwritable_cache_only_makes_loading_slower(tmp_path):
    root = make_registry(tmp_path / "registry")
    _cache(root).parent.mkdir(parents=True)
    _cache(root).write_text("{not json")
    assert Registry.load(root).ids() == ["tabular-profile"]
    assert json.loads(_cache(root).read_text())["version"] == VERSION  # rewritten whole
    os.chmod(_cache(root).parent, 0o500)
    try:
        _cache(root).unlink() if os.geteuid() != 0 else None
        assert Registry.load(root).ids() == ["tabular-profile"]
    finally:
        os.chmod(_cache(root).parent, 0o700)


def test_the_first_writer_makes_the_private_folder_owner_only_and_git_ignored(tmp_path):
    root = make_registry(tmp_path / "registry")
    Registry.load(root)  # the manifest cache is the first to write under .snakegate/ here
    for folder in (root / ".snakegate", _cache(root).parent):
        assert stat.S_IMODE(folder.stat().st_mode) == 0o700, folder
    assert (root / ".snakegate" / ".gitignore").read_text().splitlines()[-1] == "*"
