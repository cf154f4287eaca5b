"""What a run's crate says without prov.json (a mixin of export._Crate): the PROV record's agents and
snapshot under the same IRIs: snakegate and Python with their versions, the registry snapshot (git commit) the
workflow is part of, each external tool a job ran, and a chat's approval (an AcceptAction by the person of the
invocation the model proposed, the model with its backend as provider, the transcript's sha256).

Reads only the PROV record already loaded; writes nothing (entities go into the crate).
"""

from __future__ import annotations

from snakegate.provenance import runstore, vocab
from snakegate.provenance.document import local
from snakegate.provenance.rocrate import from_prov as rp
from snakegate.provenance.rocrate.terms import slug


class ContextPart:
    def iri(self, qname: str) -> str:
        """A PROV record's prefixed name (`agent:snakegate`) as the absolute IRI it stands for."""
        prefix, _, rest = str(qname).partition(":")
        base = (self.prov.get("prefix") or {}).get(prefix) or vocab.NAMESPACES.get(prefix)
        return f"{base}{rest}" if base else f"#{slug(qname)}"

    def external_tool(self, agent_id: str):
        """An external tool (workflow.yaml `tools:`) as the record found it: name, version, executable's sha256."""
        tool = self.external.get(agent_id) or {"name": agent_id.rsplit("/", 1)[-1]}
        ident = self.iri(agent_id)
        return self.add(ident, {
            "@type": "SoftwareApplication", "name": tool.get("name"), "url": ident,
            "softwareVersion": tool.get("version") or "unknown",
            **({"sha256": tool["sha256"]} if tool.get("sha256") else {}),
            "description": f"external tool {tool.get('name')} (workflow.yaml `tools:`), as found when the run ended"})

    def context(self, engine, run_action) -> list:
        """What a reader needs without opening prov.json, from the PROV record: snakegate and Python with their
        versions (snakegate returned as a further instrument of the OrganizeAction, Python as Snakemake's
        requirement), the registry snapshot (git commit) the workflow is part of, and a chat's approval: an
        AcceptAction by the person, of the invocation the model proposed (its backend as provider), with the
        transcript's sha256."""
        found = {s["key"]: s for s in rp.software(self.prov)}
        extra = []
        # the same IRIs as the PROV record's agents and snapshot (agent:python, agent:snakegate, registry:<commit>)
        if found.get("python"):
            engine["softwareRequirements"] = self.add(self.iri("agent:python"), {
                "@type": "SoftwareApplication", "name": "Python", "url": "https://www.python.org",
                "softwareVersion": found["python"]["version"] or "unknown"})
        if found.get("snakegate"):
            ident = self.iri("agent:snakegate")
            extra.append(self.add(ident, {
                "@type": "SoftwareApplication", "name": "snakegate", "url": ident,
                "softwareVersion": found["snakegate"]["version"] or "unknown",
                "description": "the gate that proved the invocation and the runner that handed it to Snakemake"}))
        snaps = rp.snapshots(self.prov)
        if snaps and snaps[0].get("commit"):
            snap = snaps[0]
            state = "with uncommitted changes" if snap.get("dirty") in (True, "true") else "clean"
            ident = self.iri(snap["id"])
            self.main["isPartOf"] = self.add(ident, {
                "@type": "SoftwareSourceCode", "name": f"workflow registry at git commit {snap['commit']}",
                "version": snap["commit"], "identifier": snap["commit"], "url": ident,
                "description": f"the registry snapshot the workflow copy that ran was made from ({state}"
                               + (f", branch {snap['branch']}" if snap.get("branch") else "")
                               + (f"; the workflow folder's git tree {snap['tree']}" if snap.get("tree") else "") + ")"})
        self.approval(run_action)
        return extra

    def approval(self, run_action) -> None:
        """A chat's (or MCP client's) approval of the invocation, mentioned from the root."""
        found = rp.approval(self.prov)
        if not found or not found.get("approver"):
            return
        person = self.add(f"#person-{slug(found['approver'])}", {"@type": "Person", "name": found["approver"]})
        props = {"@type": "AcceptAction", "name": f"{found['approver']} approved the invocation",
                 "description": f"{found['approver']} approved the invocation proposed by model {found.get('model')}"
                                f" through {found.get('backend')}; the run followed"}
        if found.get("at"):
            props["endTime"] = rp.crate_time(found["at"])
        accept = self.add(f"#approval-{slug(self.run_id)}", props)
        accept["agent"] = person
        invocation = self.files.get(f"{self.run_rel}/{runstore.INVOCATION_JSON}")
        accept["object"] = invocation if invocation is not None else run_action
        accept["result"] = run_action
        if found.get("model"):
            backend_id = self.iri(f"agent:backend/{local(found.get('backend') or 'unknown')}")
            backend = self.add(backend_id, {"@type": "SoftwareApplication", "name": found.get("backend") or "unknown",
                                            "url": backend_id})
            model_id = self.iri(found["model_id"]) if found.get("model_id") else f"#model-{slug(found['model'])}"
            model = self.add(model_id, {
                "@type": "SoftwareApplication", "name": found["model"], "provider": backend, "url": model_id,
                **({"alternateName": found["answered_by"]} if found.get("answered_by") not in (None, found["model"])
                   else {})})
            accept["participant"] = model
        if found.get("transcript_sha256") or found.get("conversation_id"):
            accept["instrument"] = self.add(f"#transcript-{slug(self.run_id)}", {
                "@type": "CreativeWork", "name": "the chat up to the approval",
                **({"sha256": found["transcript_sha256"]} if found.get("transcript_sha256") else {}),
                **({"identifier": found["conversation_id"]} if found.get("conversation_id") else {})})
        self.mentioned.append(accept)
