"""The run part of a run's PROV record (a mixin of capture._Builder): the config file, a rerun's or a fork's
relations to its parent run and its files, a refinement's approval, the outputs a fork copied, the run
activity itself with how it ended (status, failure, cancel, counts), and its verdict in W3C DQV.

Reads run.json of this run and of its parent; writes nothing (elements go into the builder's document).
"""

from __future__ import annotations

import os

from snakegate.provenance import jobfacts, runstore
from snakegate.provenance.capture_terms import action_status, run_iri, strings
from snakegate.provenance.document import Q, local
from snakegate.provenance.hashing import canonical_json
from snakegate.provenance.runfiles import under
from snakegate.provenance.runrecords import scrub


class RunPart:
    def config_entity(self, inv_ident: str) -> str | None:
        config_path = self.run_dir / runstore.CONFIG_YAML
        if not config_path.is_file():
            return None
        config = self.files.at(str(config_path), {"prov:label": "run config (what Snakemake got)"})
        self.doc.derived(config, inv_ident)
        self.doc.used(self.run_ident, config, role="sg:runConfig")
        return config

    def sibling_iri(self, run_id: str) -> str:
        """The IRI of another run of this registry named by its folder (its run_uuid, as run_iri), read from its
        run.json; only a plain folder name is looked up (a source.json is a file in a run folder)."""
        name = str(run_id)
        if name in ("", ".", "..") or "/" in name or "\\" in name:
            return f"run:{local(name)}"
        return run_iri(runstore.read_run(self.run_dir.parent / name), name)

    def lineage(self, config: str | None, inv_ident: str) -> None:
        """A rerun and a fork as relations to their parent run and its files."""
        rec = self.record
        parent = rec.get("parent_run") or rec.get("rerun_of")
        if not parent:
            return
        kind = "sg:Fork" if rec.get("parent_run") else "sg:Rerun"
        parent_dir = self.run_dir.parent / parent
        parent_ident = self.parent_ident = run_iri(runstore.read_run(parent_dir), parent)
        self.doc.activity(parent_ident, None, None, {"prov:type": Q("wfprov:WorkflowRun"), "dct:identifier": parent})
        self.doc.informed(self.run_ident, parent_ident, kind=kind)
        parent_config = parent_dir / runstore.CONFIG_YAML
        if config and parent_config.is_file():
            self.doc.derived(config, self.files.at(str(parent_config)))
        # which run it repeats or changes, in standard terms: a rerun used the invocation its parent used; a
        # fork's invocation is a revision of the one its parent used
        parent_inv = rec.get("parent_invocation_id")
        if kind == "sg:Fork" and parent_inv and f"inv:{local(parent_inv)}" != inv_ident:
            parent_inv_ident = self.doc.entity(f"inv:{local(parent_inv)}", {
                "prov:type": Q("sg:Invocation"), "dct:identifier": parent_inv, "sg:invocationId": parent_inv})
            self.doc.derived(inv_ident, parent_inv_ident, kind="prov:Revision")
            self.doc.used(parent_ident, parent_inv_ident, role="sg:gatedInvocation")
        elif kind == "sg:Rerun":
            self.doc.used(parent_ident, inv_ident, role="sg:gatedInvocation")
        if kind == "sg:Rerun":
            for abspath in sorted(self.files.declared):
                mine = self.files.by_path.get(abspath)
                rel = under(abspath, str(self.run_dir))
                if mine is None or mine.sha256 is None or rel is None:
                    continue
                theirs = self.files.at(str(parent_dir / rel), must_exist=True)
                if theirs is not None and self.files.by_path[str(parent_dir / rel)].sha256 == mine.sha256:
                    self.doc.relation("alternateOf", mine.ident, theirs)

    def refinement(self) -> None:
        """A run of an approved refinement: the approval as a prov:Plan the run used (its id, its sha256 and
        which point of how many this run is); snakegate.refine keeps the approval itself."""
        ref = self.record.get("refinement")
        if not isinstance(ref, dict) or not isinstance(ref.get("id"), str):
            return
        ident = self.doc.entity(f"refinement:{local(ref['id'])}", {
            "prov:type": Q("sg:RefinementApproval"), "prov:label": f"approved refinement {ref['id']}",
            "sg:refinementId": ref["id"], "sg:approvalSha256": ref.get("approval_sha256")})
        self.doc.used(self.run_ident, ident, role="sg:approval")
        self.doc.activity(self.run_ident, None, None, {"sg:refinementPoint": ref.get("point"),
                                                       "sg:refinementPoints": ref.get("points")})

    def seeded(self, jobs) -> None:
        """Files a fork copied from its parent run (the jobs that made them were not re-run)."""
        parent = self.record.get("parent_run")
        if not parent:
            return
        parent_dir = self.run_dir.parent / parent
        made = {self.files.abspath(p) for job in jobs for p in (*job.outputs, *job.logs)}
        copies = [p for p in self.files.run_files() if p not in made
                  and (parent_dir / under(p, str(self.run_dir))).is_file()]
        if not copies:
            return
        doc = self.doc
        seed = doc.activity(f"{self.run_ident}/seed", None, None, {
            "prov:type": Q("sg:CopyFromParent"), "prov:label": f"outputs copied from run {parent}",
            "wfprov:wasPartOfWorkflowRun": Q(self.run_ident)})
        for path in copies:
            source = self.files.at(str(parent_dir / under(path, str(self.run_dir))))
            copy = self.files.at(path)
            doc.used(seed, source, role="sg:parentOutput")
            doc.generated(copy, seed, role="sg:copiedOutput")
            doc.derived(copy, source, seed)

    def run_activity(self, jobs: list, failed_ident: str | None, planned: int | None) -> None:
        rec = self.record
        start = runstore.parse_time(rec.get("started"))
        end = runstore.parse_time(rec.get("ended"))
        if start and end and end < start:
            end = start
        counts = {s: sum(1 for j in jobs if j.status == s)
                  for s in ("succeeded", "failed", "incomplete", "cancelled", "interrupted")}
        parent = rec.get("parent_run")
        parent_ident = getattr(self, "parent_ident", None)
        failure = rec.get("failure") if isinstance(rec.get("failure"), dict) else {}
        changed = [c for c in rec.get("input_changed") or [] if isinstance(c, dict)]
        reused = rec.get("reused") if isinstance(rec.get("reused"), list) else None
        attrs = {
            "prov:type": Q("wfprov:WorkflowRun"), "prov:label": f"{self.manifest.get('id')} run {self.run_id}",
            "dct:identifier": self.run_id, "schema:actionStatus": action_status(self.status),
            "sg:status": self.status, "sg:source": rec.get("source"),
            "wfprov:describedByWorkflow": Q(self.plan) if self.plan else None,
            "prov:location": self.files.shown(str(self.run_dir))[1],
            "sg:failedRule": rec.get("failed_rule") or failure.get("rule"),
            "schema:error": scrub(rec.get("error"), self.secrets, self.key),
            "sg:failureException": failure.get("exception"),
            "sg:failureMessage": scrub(failure.get("message"), self.secrets, self.key),
            "sg:stoppedAt": Q(failed_ident) if failed_ident else None, "sg:cancelledBy": rec.get("cancelled_by"),
            "sg:runningJob": strings(rec.get("running_jobs")),
            "sg:missingOutput": strings(rec.get("missing_outputs")),
            "sg:inputChanged": strings([c.get("path") or c.get("param") for c in changed]),
            "sg:reused": strings([canonical_json(r) for r in reused]) if reused else None,
            "sg:interruptedDetectedAt": rec.get("interrupted_detected_at"),
            "sg:jobsPlanned": planned, "sg:jobsSucceeded": counts["succeeded"], "sg:jobsFailed": counts["failed"],
            # started and never finished: killed with the run (interrupted) or left unfinished
            "sg:jobsIncomplete": counts["incomplete"] + counts["interrupted"],
            "sg:jobsCancelled": counts["cancelled"] or None,
            "sg:rerunOf": Q(parent_ident) if rec.get("rerun_of") and parent_ident else None,
            "sg:forkOf": Q(parent_ident) if parent and parent_ident else None,
            "sg:forkChanges": canonical_json(rec["fork_changes"]) if rec.get("fork_changes") else None,
            **_recovery(rec, parent_ident),
            **jobfacts.run_attributes(rec),
        }
        log = failure.get("log")
        if isinstance(log, str) and log:
            attrs["sg:failureLog"] = Q(self.files.at(os.path.normpath(self.run_dir / log)))
        self.doc.activity(self.run_ident, start, end, attrs)
        for change in changed:  # the input as the jobs met it: another entity than the one the gate hashed
            path = change.get("path")
            if isinstance(path, str):
                full = path if os.path.isabs(path) else os.path.normpath(self.root / path)
                self.files.at(full, {"sg:changedAfterGate": True})

    def verdict(self) -> None:
        """run.json's `verdict` in W3C DQV: each check a `dqv:Metric` of its workflow (label, test, threshold or
        threshold param, what it measures, `skos:definition` = what failing means); each check of this run a
        `dqv:QualityMeasurement` generated by the run, of that metric, computed on the output file it read,
        with its value, the threshold it was held to and its verdict (an item of a `{param}` pointer another
        measurement, part of it); the run says the overall verdict (`sg:verdict`)."""
        verdict = self.record.get("verdict")
        if not isinstance(verdict, dict) or verdict.get("status") not in ("pass", "fail", "unknown"):
            return
        doc = self.doc
        doc.activity(self.run_ident, None, None, {"sg:verdict": verdict["status"],
                                                  "sg:verdictNote": verdict.get("reason")})
        homes = getattr(self, "step_workflows", {})  # a plan's checks are `<step>.<check>` of that step's workflow
        outputs = self.manifest.get("outputs") or {}
        for check in verdict.get("checks") or []:
            if not isinstance(check, dict) or not isinstance(check.get("name"), str):
                continue
            name = check["name"]
            step, dot, own = name.partition(".")
            home, own = (homes[step], own) if dot and step in homes else (self.plan, name)
            constant = check.get("threshold") if not check.get("threshold_param") else None
            metric = doc.entity(f"{home}/check/{local(own)}", {
                "prov:type": Q("dqv:Metric"), "prov:label": own, "skos:definition": check.get("says"),
                "sg:test": check.get("test"), "sg:threshold": constant, "sg:thresholdParam": check.get("threshold_param"),
                "sg:measure": check.get("measure"), "sg:adviceParam": strings(check.get("params"))})
            decl = outputs.get(check.get("output")) or {}
            path = os.path.normpath(self.run_dir / decl["path"]) if isinstance(decl.get("path"), str) else None
            measured = check.get("value") is not None and path is not None and os.path.isfile(path)
            file = self.files.at(path, must_exist=True) if measured else None
            parts = [(f"{self.run_ident}/check/{local(name)}", check)]
            parts += [(f"{parts[0][0]}/{i}", item) for i, item in enumerate(check.get("values") or [], start=1)
                      if isinstance(item, dict)]
            for ident, part in parts:
                doc.entity(ident, {
                    "prov:type": Q("dqv:QualityMeasurement"), "prov:label": f"check {name}: {part.get('status')}",
                    "dqv:isMeasurementOf": Q(metric), "dqv:computedOn": Q(file) if file else None,
                    "dqv:value": part.get("value"), "sg:verdict": part.get("status"),
                    "sg:threshold": check.get("threshold"), "sg:measure": part.get("at") or check.get("measure"),
                    "sg:reason": self.scrub(part.get("reason"), self.secrets, self.key),
                    "dct:isPartOf": Q(parts[0][0]) if ident != parts[0][0] else None})
                doc.generated(ident, self.run_ident)


def _recovery(record: dict, parent_ident: str | None) -> dict:
    """A recovery fork's link to the failure it answers (run.json `recovery_of: {run, check}`), next to sg:forkOf:
    the same run, so the same IRI (`parent_ident`, its run_uuid)."""
    rec = record.get("recovery_of")
    if not isinstance(rec, dict) or not isinstance(rec.get("run"), str) or rec["run"] != record.get("parent_run") \
            or not parent_ident:
        return {}
    return {"sg:recoveryOf": Q(parent_ident),
            "sg:recoveredCheck": rec.get("check") if isinstance(rec.get("check"), str) else None}
