"""The audit log: every model request and response and every action, as JSON lines per conversation in a
git-ignored folder, sensitive values redacted; a run from the chat records the hash of the transcript up to
its approval. Real scripted HTTP server, real gate, one real Snakemake run.
"""

from __future__ import annotations

import hashlib
import json
import subprocess

from openai_server import call, completion
from registry_copies import REPO
from snakegate.provenance import runstore

PENGUINS = "data/examples/tabular-penguins.csv"
SECRET = "hunter2-s3cret-0042"


def lines(convo) -> list[dict]:
    return [json.loads(line) for line in convo.audit.path.read_text().splitlines()]


def test_every_request_response_and_action_is_one_json_line(conversation, agent_registry):
    convo, _ = conversation([[call("describe_workflow", {"workflow": "tabular-profile"})], "It profiles tables."])
    convo.send("what does tabular-profile do?")
    assert convo.audit.path.parent == agent_registry / ".snakegate" / "audit"
    assert convo.audit.path.name == f"{convo.conversation_id}.jsonl"
    kinds = [entry["kind"] for entry in lines(convo)]
    assert kinds == ["conversation", "user", "request", "response", "action", "request", "response"]
    entries = lines(convo)
    assert entries[2]["body"]["messages"][-1] == {"role": "user", "content": "what does tabular-profile do?"}
    assert entries[4]["name"] == "describe_workflow" and entries[4]["result"]["id"] == "tabular-profile"
    assert [e["seq"] for e in entries] == list(range(1, len(entries) + 1))
    assert oct(convo.audit.path.stat().st_mode & 0o777) == "0o600"


def test_the_audit_folder_is_git_ignored():
    ignored = subprocess.run(["git", "check-ignore", "-q", ".snakegate/audit/c-1.jsonl"], cwd=REPO)
    assert ignored.returncode == 0


def test_sensitive_values_are_redacted_in_the_log_even_ones_learned_later(conversation):
    convo, _ = conversation([[call("validate_params", {"workflow": "secret-note", "params": {"token": SECRET}})],
                             "Draft ready."])
    convo.send(f"write a note with token {SECRET}")  # typed before anything marked it sensitive
    text = convo.audit.path.read_text()
    assert SECRET not in text and "<redacted>" in text
    assert lines(convo)[1] == {**lines(convo)[1], "text": "write a note with token <redacted>"}


def test_a_run_records_the_hash_of_the_transcript_up_to_its_approval(conversation):
    convo, _ = conversation([completion([call("validate_params", {"workflow": "tabular-profile",
                                                                  "params": {"dataset_file": PENGUINS}})],
                                        model="answering-model-q4"), "Draft ready."])
    convo.send("profile the penguins")
    approval = convo.approve("Ada Lovelace")
    upto = convo.audit.path.read_bytes()
    assert json.loads(upto.splitlines()[-1])["kind"] == "approval"
    outcome = convo.execute(approval)
    assert outcome.status == "succeeded", outcome.record
    origin = runstore.read_run(outcome.run_dir)["origin"]
    assert origin["transcript_sha256"] == hashlib.sha256(upto).hexdigest() == approval.transcript_sha256
    assert origin["answered_by"] == "answering-model-q4" and origin["model"] == "scripted-model"
    prov = (outcome.run_dir / "prov.json").read_text()
    assert approval.transcript_sha256 in prov and "answering-model-q4" in prov
    assert lines(convo)[-1]["kind"] == "run" and lines(convo)[-1]["run_id"] == outcome.run_id
