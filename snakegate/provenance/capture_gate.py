"""The gate part of a run's PROV record (a mixin of capture._Builder): the gated invocation with its
parameter values (schema:PropertyValue), the gate's decision (an activity that used the inputs at the bytes it
hashed and generated the invocation), the staging of the gated inputs into the run folder, and, for a chat
run, the approval: the model and its backend that proposed the invocation and the person who approved it.

Reads the run folder's inputs.json and origin.json; writes nothing (elements go into the builder's document).
"""

from __future__ import annotations

import os

from snakegate.provenance import origin as originrec
from snakegate.provenance import runstore
from snakegate.provenance.capture_terms import APPLICATION, SOFTWARE, strings
from snakegate.provenance.document import Many, Q, local
from snakegate.provenance.hashing import canonical_json


class GatePart:
    def invocation_entity(self) -> str:
        inv = self.invocation.get("invocation") or {}
        inv_id = self.invocation.get("invocation_id") or self.record.get("invocation_id") or "unknown"
        ident = f"inv:{local(inv_id)}"
        self.doc.entity(ident, {
            "prov:type": Q("sg:Invocation"), "prov:label": f"invocation {inv_id[:12]}", "dct:identifier": inv_id,
            "sg:invocationId": inv_id, "sg:workflow": inv.get("workflow"), "sg:version": inv.get("version"),
            "sg:workflowHash": inv.get("workflow_hash"), "sg:params": canonical_json(self.params),
            "sg:inputHashes": canonical_json(inv.get("inputs") or {})})
        return ident

    def parameter_values(self, inv_ident: str) -> None:
        """Each parameter's value as the run used it: a schema:PropertyValue (name, value: the value itself, JSON
        text for a list or an object, an `x-sensitive` one as its keyed hash) that is part of the invocation,
        described by the workflow's parameter and used by the run in that parameter's role."""
        for name, value in sorted(self.params.items()):
            role = f"plan:param/{local(name)}"
            shown = value if isinstance(value, (str, int, float, bool)) else canonical_json(value)
            ident = self.doc.entity(f"{inv_ident}/param/{local(name)}", {
                "prov:type": Q("schema:PropertyValue"), "prov:label": f"{name} = {shown}"[:200],
                "schema:name": name, "schema:value": shown, "dct:isPartOf": Q(inv_ident),
                "wfprov:describedByParameter": Q(role) if role in self.doc.elements else None})
            self.doc.used(self.run_ident, ident, role=role if role in self.doc.elements else None)

    def gate(self, inv_ident: str) -> str:
        """The gate's decision: an activity that used each input at the bytes it hashed (a file changed
        since then is another entity) and generated the invocation."""
        gate = self.invocation.get("gate") or {}
        when = gate.get("at") or self.record.get("started")
        ident = self.doc.activity(f"{self.run_ident}/gate", when, when, {
            "prov:type": Q("sg:GateDecision"), "prov:label": "the gate accepted the invocation",
            "sg:decision": "accepted" if gate.get("ok", True) else "refused",
            "sg:invocationId": self.invocation.get("invocation_id"), "sg:check": strings(gate.get("checks")),
            "sg:snakegateVersion": gate.get("snakegate_version")})
        self.doc.associated(ident, self.agent_ids["snakegate"], role="sg:gateKeeper")
        inv = self.invocation.get("invocation") or {}
        for where, digest in sorted((inv.get("inputs") or {}).items()):
            path = self._param_value(inv.get("params") or {}, where)
            if isinstance(path, str) and digest:
                full = path if os.path.isabs(path) else os.path.normpath(self.root / path)
                ent = self.files.at(full)
                if self.files.by_path[full].sha256 != digest:  # changed since the gate: the bytes it hashed
                    ent = self.files.at(full, digest=(None, digest))
                self.doc.used(ident, ent, role="sg:gatedInput")
        self.doc.generated(inv_ident, ident, role="sg:gatedInvocation")
        return ident

    def staging(self, gate_ident: str) -> None:
        """The gated inputs copied into the run folder before any job (inputs.json, snakegate/run/stage.py):
        each staged copy, which the jobs used, was derived from the data root's file the gate hashed."""
        data = runstore.read_json(self.run_dir / runstore.INPUTS_JSON)
        entries = data.get("inputs") if isinstance(data.get("inputs"), dict) else None
        if not entries:
            return
        when = (self.invocation.get("gate") or {}).get("at") or self.record.get("started")
        ident = self.doc.activity(f"{self.run_ident}/stage", when, when, {
            "prov:type": Q("sg:Staging"), "prov:label": "the gated inputs copied into the run folder",
            "sg:stageMode": data.get("mode"), "wfprov:wasPartOfWorkflowRun": Q(self.run_ident)})
        self.doc.associated(ident, self.agent_ids["snakegate"], role="sg:stager")
        self.doc.informed(ident, gate_ident)
        for _key, entry in sorted(entries.items()):
            source, rel = entry.get("source"), entry.get("path")
            if not isinstance(source, str) or not isinstance(rel, str):
                continue
            full = source if os.path.isabs(source) else os.path.normpath(self.root / source)
            gated = entry.get("gated_sha256") or entry.get("sha256")
            src = self.files.at(full)
            if self.files.by_path[full].sha256 != gated:  # changed since: the bytes that were staged
                src = self.files.at(full, digest=(None, gated))
            copy_path = str(self.run_dir / rel)
            copy = self.files.at(copy_path, {"sg:stagedFrom": self.files.shown(full)[1]})
            if self.files.by_path[copy_path].sha256 != entry.get("sha256"):  # changed in the run folder since
                self.files.at(copy_path, {"sg:changedAfterGeneration": True})
                copy = self.files.at(copy_path, {"sg:stagedFrom": self.files.shown(full)[1]},
                                     digest=(entry.get("size"), entry.get("sha256")))
            self.doc.used(ident, src, role="sg:gatedInput")
            self.doc.generated(copy, ident, role="sg:stagedInput")
            self.doc.derived(copy, src, ident)

    @staticmethod
    def _param_value(params: dict, where: str):
        """The value at a gate path such as `params.table` or `params.samples[2].fastq`."""
        node = params
        for part in where.removeprefix("params.").replace("]", "").replace("[", ".").split("."):
            if isinstance(node, list) and part.isdigit() and int(part) < len(node):
                node = node[int(part)]
            elif isinstance(node, dict) and part in node:
                node = node[part]
            else:
                return None
        return node

    def origin(self, inv_ident: str) -> None:
        origin = originrec.read_origin(self.run_dir)
        if origin is None:
            return
        doc = self.doc
        backend_name = origin["proposed_by_backend"]
        backend = doc.agent(f"agent:backend/{local(backend_name)}", {
            "prov:type": Many((SOFTWARE, APPLICATION)), "prov:label": f"{backend_name} backend",
            "schema:name": backend_name})
        model = doc.agent(f"agent:model/{local(backend_name)}/{local(origin['model'])}", {
            "prov:type": Many((SOFTWARE, APPLICATION)), "prov:label": origin["model"], "schema:name": origin["model"],
            "schema:provider": Q(backend), "sg:model": origin["model"], "sg:answeredBy": origin.get("answered_by"),
            "sg:backend": backend_name})
        doc.attributed(inv_ident, model)  # the model proposed the invocation
        approver = doc.agent(f"agent:person/{local(origin['approved_by'])}", {
            "prov:type": Many((Q("prov:Person"), Q("schema:Person"))), "prov:label": origin["approved_by"],
            "schema:name": origin["approved_by"]})
        when = originrec.approval_time(origin)
        approval = doc.activity(f"{self.run_ident}/approval", when, when, {
            "prov:type": Many((Q("sg:Approval"), Q("schema:AcceptAction"))),
            "prov:label": f"{origin['approved_by']} approved the invocation", "schema:agent": Q(approver),
            "schema:object": Q(inv_ident), "sg:conversationId": origin.get("conversation_id")})
        if origin.get("transcript_sha256") or origin.get("conversation_id"):
            transcript = doc.entity(f"{self.run_ident}/transcript", {
                "prov:type": Q("schema:Conversation"), "prov:label": "the chat up to the approval",
                "schema:identifier": origin.get("conversation_id"), "schema:sha256": origin.get("transcript_sha256")})
            doc.used(approval, transcript, role="sg:transcript")
        doc.used(approval, inv_ident, role="sg:approvedInvocation")
        doc.associated(approval, approver, role="sg:approver")
        doc.associated(approval, model, role="sg:proposer")
        doc.informed(self.run_ident, approval)
