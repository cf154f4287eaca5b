"""The model cannot flood or probe: caps that come back as refusals it can act on, and paths that never show
the machine (home, working directory, /proc, symlink targets). Real scripted server, real actions and gate.
"""

from __future__ import annotations

import json
from pathlib import Path

from openai_server import call
from snakegate.agent.actions import limits
from snakegate.agent.actions.platform import ActionContext, call_action
from snakegate.registry.workflows import Registry
from snakegate.registry.settings import load_settings

PENGUINS = "data/examples/tabular-penguins.csv"


def results(request: dict) -> list[dict]:
    return [json.loads(m["content"]) for m in request["messages"] if m["role"] == "tool"]


def test_calls_beyond_the_per_reply_cap_are_refused_and_every_call_is_answered(conversation):
    many = [call("search_workflows", {"query": f"csv {n}"}) for n in range(limits.MAX_CALLS_PER_REPLY + 2)]
    convo, server = conversation([many, "Done."])
    events = convo.send("search a lot")
    ran = [e for e in events if getattr(e, "name", None) == "search_workflows" and e.ok]
    assert len(ran) == limits.MAX_CALLS_PER_REPLY
    answered = results(server.requests[1])
    assert len(answered) == len(many)  # every call id has its answer, so the history stays valid
    assert [r["error"]["code"] for r in answered[limits.MAX_CALLS_PER_REPLY:]] == ["too_many_calls"] * 2
    assert "one at a time" in answered[-1]["error"]["hint"]


def test_a_megabyte_argument_is_refused_and_never_kept_in_the_history(conversation):
    huge = {"workflow": "tabular-profile", "params": {"dataset_file": PENGUINS, "columns": ["x" * 1_000_000]}}
    convo, server = conversation([[call("validate_params", huge)], "Sorry."])
    events = convo.send("profile it")
    assert events[0].ok is False
    (result,) = results(server.requests[1])
    assert result["error"]["code"] == "arguments_too_large"
    assert len(server.raw_bodies[1]) < 64_000  # the 1 MB stays out of the next request (was 63 MB)
    assert max(len(json.dumps(m)) for m in convo.messages) < 10_000


def test_a_result_over_the_size_cap_is_refused_with_how_to_narrow_it(agent_registry):
    folder = agent_registry / "data" / "many"
    folder.mkdir()
    for n in range(200):
        (folder / (f"{n:03d}-" + "long-name-" * 14 + ".csv")).write_text("a,b\n1,2\n")
    ctx = ActionContext(Registry.load(agent_registry), load_settings(agent_registry))
    out = call_action(ctx, "inspect_data", {"path": "data/many"})
    assert not out.ok and out.result["error"]["code"] == "result_too_large"
    assert "narrow the request" in out.result["error"]["hint"]
    assert len(json.dumps(out.result)) < 1000


def test_drafts_beyond_the_per_turn_cap_are_not_written(conversation, agent_registry):
    sets = [{"dataset_file": PENGUINS, "missing_strategy": s, "drop_duplicates": d}
            for s in ("remove", "fill_mean", "fill_median") for d in (True, False)][:limits.MAX_DRAFTS_PER_TURN + 2]
    convo, server = conversation([[call("validate_params", {"workflow": "tabular-profile", "params": p})]
                                  for p in sets] + ["Which one?"])
    events = convo.send("try every combination")
    assert len([e for e in events if type(e).__name__ == "DraftReady"]) == limits.MAX_DRAFTS_PER_TURN
    assert len(list((agent_registry / "drafts").glob("*.yaml"))) == limits.MAX_DRAFTS_PER_TURN
    last = results(server.requests[-1])[-1]
    assert last["error"]["code"] == "draft_limit" and "ask the researcher" in last["error"]["hint"]
    server.add([call("validate_params", {"workflow": "tabular-profile", "params": sets[-1]})], "Here it is.")
    assert any(type(e).__name__ == "DraftReady" for e in convo.send("the last one"))  # a new turn may again


# ---- paths ---------------------------------------------------------------------------------------
def test_paths_shown_to_the_model_never_reveal_the_machine(conversation, agent_registry, tmp_path):
    private = tmp_path / "private"
    private.mkdir()
    (private / "salaries.csv").write_text("name,salary\nada,1\n")
    (agent_registry / "data" / "innocent.csv").symlink_to(private / "salaries.csv")
    probes = ["data/innocent.csv", "/proc/self/environ", "~/.ssh/id_rsa", "../../etc/passwd", str(agent_registry)]
    convo, server = conversation(
        [[call("inspect_data", {"path": p}) for p in probes[:3]],
         [call("inspect_data", {"path": p}) for p in probes[3:]],
         [call("validate_params", {"workflow": "tabular-profile", "params": {"dataset_file": "data/innocent.csv"}})],
         [call("validate_params", {"workflow": "tabular-profile", "params": {"dataset_file": "data/missing.csv"}})],
         "I cannot use those files."])
    convo.send("look around")
    sent = "\n".join(server.raw_bodies)
    # (the model's own relative probe `../../etc/passwd` may come back quoted: it reveals nothing)
    for secret in (str(private), str(tmp_path), str(agent_registry), str(Path.home()), "/proc/self"):
        assert secret not in sent, secret
    answers = results(server.requests[-1])
    assert [a["error"]["code"] for a in answers[:5]] == ["path_outside_roots"] * 5
    assert answers[5]["errors"][0]["code"] == "path_outside_roots"
    assert "<outside the data roots>" in json.dumps(answers[5])
    assert "not_found" == answers[6]["errors"][0]["code"] and "data/missing.csv" in json.dumps(answers[6])


def test_a_path_inside_the_registry_is_shown_relative_to_it(agent_registry):
    view = limits.PathView(agent_registry, [agent_registry / "data"], home="/home/ada")
    assert view.hide(f"see {agent_registry}/workflows/x/Snakefile, line 3") == "see workflows/x/Snakefile, line 3"
    assert view.hide("http://127.0.0.1:8080/v1 and 1/2 and data/x.csv") == "http://127.0.0.1:8080/v1 and 1/2 and data/x.csv"
    assert view.hide("~/secret.csv or /home/ada/secret.csv") == "<outside the data roots> or <outside the data roots>"
    # a JSON pointer of a workflow's contract is no path on this machine: kept as written
    assert view.hide("keys: [/rows_in, /background/ks_pvalue]") == "keys: [/rows_in, /background/ks_pvalue]"
    assert view.hide("/etc/hostname and /tmp/x") == "<outside the data roots> and <outside the data roots>"
    outside_root = limits.PathView(agent_registry, ["/srv/shared-data"], home="/home/ada")
    assert outside_root.hide("/srv/shared-data/a.csv") == "/srv/shared-data/a.csv"  # inside a data root: kept
