"""The workflow part of a run's PROV record (a mixin of capture._Builder): the workflow as a prov:Plan /
wfdesc:Workflow with its content hash and git tree, the registry snapshot it is part of (the pinned one that
ran, and the current one beside it when the registry moved on), its parameters and declared outputs
(wfdesc:Input / wfdesc:Output) and one wfdesc:Process step per rule with its declared IO.

Reads the workflow folder, its source.json and git; writes nothing (elements go into the builder's document).
"""

from __future__ import annotations

from pathlib import Path

from snakegate.provenance import gitinfo, snapshot, vocab
from snakegate.provenance.document import Many, Q, local
from snakegate.provenance.hashing import workflow_hash


class WorkflowPart:
    def _git_folder(self, content_hash: str) -> Path | None:
        """Where the workflow's git tree is read for a run that recorded no source (runs made before
        source.json): the folder itself, or, for a run's copy (runs/<id>/workflow/, outside git), the registry
        folder it was copied from while that still holds the same content; None when the registry has moved
        on (its tree would not be what ran)."""
        if self.run_dir not in self.workflow_folder.parents:
            return self.workflow_folder
        source = self.root / "workflows" / str(self.manifest.get("id") or "")
        return source if source.is_dir() and workflow_hash(source) == content_hash else None

    def _snapshot_entity(self, facts: dict, current: bool = False) -> str:
        """A registry snapshot: its git commit (`schema:version`, standard; `sg:gitCommit`), or why there is none.
        `current`: the registry as it is when the record is written, beside the pinned snapshot that ran."""
        commit = facts.get("commit")
        if commit:
            ident = f"registry:{commit}"
            attrs = {"prov:type": Many((Q("sg:RegistrySnapshot"), Q("schema:SoftwareSourceCode"))),
                     "prov:label": f"registry at commit {commit[:12]}", "schema:version": commit,
                     "sg:gitCommit": commit, "sg:gitDirty": facts.get("dirty"), "sg:gitBranch": facts.get("branch")}
        else:
            ident = "registry:no-git" if not current else "registry:no-git/current"
            attrs = {"prov:type": Q("sg:RegistrySnapshot"), "sg:git": facts.get("git") or "no git"}
        if current:
            attrs["prov:label"] = f"the registry when this record was written{f' (commit {commit[:12]})' if commit else ''}"
            attrs["sg:gitTree"] = facts.get("tree")
            attrs["sg:gitTreeDirty"] = facts.get("tree_dirty")
        self.doc.entity(ident, attrs)
        return ident

    def _registry_entity(self, git) -> str:
        """The registry snapshot of a git state (gitinfo.GitState) read now."""
        facts = ({"commit": git.commit, "dirty": git.dirty, "branch": git.branch} if git.available and git.commit
                 else {"git": git.reason or "no git"})
        return self._snapshot_entity(facts)

    def pinned_snapshot(self, home: Path, content_hash: str, folder: Path | None) -> tuple[dict, str]:
        """(source facts, snapshot entity) of the workflow copy in `home` (its source.json, snapshot.py); a run
        made before source.json: the registry as it is now, with the tree of `folder` (where the tree is read,
        see _git_folder) only while it still holds what ran."""
        facts = snapshot.read(home)
        if facts is None:
            git = gitinfo.git_state(self.root, folder)
            facts = ({"commit": git.commit, "dirty": git.dirty, "branch": git.branch, "tree": git.workflow_tree,
                      "tree_dirty": git.workflow_dirty} if git.available and git.commit else
                     {"git": git.reason or "no git"})
        return facts, self._snapshot_entity(facts)

    def current_registry(self, pinned: dict, wf_id: str) -> None:
        """The registry as it is when the record is written, when its commit is not the pinned one (a rerun of an
        old run, a registry that moved on during the run): used by the run, its workflow folder's tree beside it."""
        folder = self.root / "workflows" / wf_id
        now = snapshot.of_git(folder if folder.is_dir() else self.root)
        if now.get("commit") == pinned.get("commit") and now.get("tree") == pinned.get("tree"):
            return
        ident = self._snapshot_entity(now, current=True)
        self.doc.used(self.run_ident, ident, role="sg:currentRegistry")

    def workflow(self) -> str:
        content_hash = workflow_hash(self.workflow_folder)
        facts, registry_id = self.pinned_snapshot(self.run_dir, content_hash, self._git_folder(content_hash))
        wf_id = self.manifest.get("id") or self.workflow_folder.name
        _, shown = self.files.shown(str(self.workflow_folder))
        ident = f"wf:{local(wf_id)}/{content_hash}"
        # steps and roles live under the plan's own IRI: plan:rule/<rule>, plan:rule/<rule>/input/<name>
        self.doc.namespaces["plan"] = f"{vocab.NAMESPACES['wf']}{local(wf_id)}/{content_hash}/"
        inv = self.invocation.get("invocation") or {}
        self.doc.entity(ident, {
            "prov:type": Many((Q("prov:Plan"), Q("wfdesc:Workflow"), Q("schema:SoftwareSourceCode"))),
            "prov:label": self.manifest.get("title") or wf_id, "schema:name": self.manifest.get("title") or wf_id,
            "schema:version": self.manifest.get("version"), "dct:identifier": wf_id, "sg:workflowId": wf_id,
            "sg:contentHash": content_hash,
            "sg:gatedContentHash": inv.get("workflow_hash") if inv.get("workflow_hash") != content_hash else None,
            "prov:location": shown, "sg:gitTree": facts.get("tree"), "sg:gitTreeDirty": facts.get("tree_dirty"),
            "sg:copiedVia": Q(self.sibling_iri(facts["via_run"])) if facts.get("via_run") else None,
            "dct:isPartOf": Q(registry_id)})
        self.plan = ident
        self.current_registry(facts, str(wf_id))
        self.contract()
        for rule in self.manifest.get("rules") or {}:
            self.step(rule)
        return ident

    def contract(self) -> None:
        """The workflow's parameters and declared outputs as wfdesc:Input / wfdesc:Output of the workflow."""
        for name, sub in (self.schema.get("properties") or {}).items():
            self.parameter(self.plan, f"plan:param/{local(name)}", "wfdesc:Input", name,
                           sub.get("x-artifact") if isinstance(sub, dict) else None,
                           sub.get("description") if isinstance(sub, dict) else None)
        for name, out in (self.manifest.get("outputs") or {}).items():
            self.parameter(self.plan, f"plan:output/{local(name)}", "wfdesc:Output", name, out.get("type"),
                           out.get("description"))

    def parameter(self, owner: str, ident: str, kind: str, name: str, artifact_type: str | None,
                  description: str | None = None) -> str:
        """A parameter (wfdesc:Input or wfdesc:Output) of a workflow or one of its steps, linked from it."""
        if ident not in self.doc.elements:
            self.doc.entity(ident, {"prov:type": Many((Q(kind), Q("wfdesc:Parameter"))), "prov:label": name,
                                    "schema:name": name, "sg:artifactType": artifact_type,
                                    "schema:description": description})
            self.doc.add_values(owner, "wfdesc:hasInput" if kind == "wfdesc:Input" else "wfdesc:hasOutput", Q(ident))
        return ident

    def step(self, rule: str) -> str:
        """The plan step (wfdesc:Process) of a rule, made the first time it is needed."""
        step = self.steps.get(rule)
        if step is None:
            step = self.steps[rule] = self.doc.entity(f"plan:rule/{local(rule)}", {
                "prov:type": Many((Q("prov:Plan"), Q("wfdesc:Process"))), "prov:label": f"rule {rule}",
                "schema:name": rule, "sg:rule": rule})
            self.doc.add_values(self.plan, "wfdesc:hasSubProcess", Q(step))
            self.step_io(rule, step, self.rules_io.get(rule) or {})
        return step

    def step_io(self, rule: str, step: str, io: dict) -> None:
        """A step's declared inputs and outputs (workflow.yaml `rules:`) as its wfdesc parameters: the role IRIs
        its jobs use and generate files with."""
        for direction, kind in (("input", "wfdesc:Input"), ("output", "wfdesc:Output")):
            for name, artifact_type in ((io or {}).get(direction) or {}).items():
                self.parameter(step, f"{step}/{direction}/{local(name)}", kind, name, artifact_type)
