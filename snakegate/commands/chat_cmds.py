"""The chat commands: `snakegate chat` (the Textual app) and `snakegate ask` (one request, for scripts).

Both build the backend (an OpenAI-compatible server, or the offline guided
dialogue) and a `Conversation` from the same registry and settings as every
other command. `chat` hands the terminal to the app; `ask` runs one request to
a draft and prints it, and runs it only with `--yes` (the person who typed the
command is then the approver). Textual, the agent and the backends are
imported only when a command runs, so `snakegate --help` stays instant.
"""

from __future__ import annotations

import json
import sys

from snakegate.errors import ExitCode, UserError

NOT_A_TERMINAL = ("snakegate chat: the chat needs an interactive terminal (stdin and stdout are not both one); "
                  "for scripts use `snakegate validate RUN_YAML` and `snakegate run RUN_YAML`")


def register(sub, epilog: str) -> None:
    p = sub.add_parser(
        "chat", help="talk through a run: a model (or the offline guided dialogue) drafts, you approve",
        epilog=epilog,
        description="Open the chat: describe what you want to run; the model (or, without one, an offline guided "
                    "dialogue) picks a workflow and fills a run config that must pass the gate. Nothing runs "
                    "until you approve the draft. The model is set by [agent] base_url/model in snakegate.toml "
                    "or SNAKEGATE_LLM_BASE_URL/SNAKEGATE_LLM_MODEL; the API key only by SNAKEGATE_LLM_API_KEY "
                    "(else OPENAI_API_KEY).")
    add_model_options(p)
    p.set_defaults(handler=cmd_chat)

    p = sub.add_parser(
        "ask", help="one request to a gated draft without a terminal (for scripts); --yes also runs it",
        epilog=epilog,
        description="Send one request to the model (or the guided dialogue, which keeps the defaults of whatever "
                    "the request does not name) and stop at the draft: print its path and the command that runs "
                    "it. With --yes the draft is run at once and you, who typed the command, are recorded as the "
                    "approver. Exit 0 with a draft (and a succeeded run), 1 without one or when the run fails, "
                    "2 when the model server cannot be used.")
    p.add_argument("text", help='what you want to run, e.g. "profile data/examples/tabular-penguins.csv"')
    p.add_argument("--yes", action="store_true", help="approve and run the draft (you are the approver)")
    p.add_argument("--json", action="store_true", help="print JSON: events, draft, run")
    add_model_options(p)
    p.add_argument("--cores", type=int, default=1, help="cores for Snakemake with --yes (default 1)")
    p.set_defaults(handler=cmd_ask)


def add_model_options(p) -> None:
    p.add_argument("--guided", action="store_true",
                   help="use the offline guided dialogue even when a model is configured")
    p.add_argument("--model", metavar="NAME", help="model name on the OpenAI-compatible server")
    p.add_argument("--base-url", metavar="URL", help="OpenAI-compatible server, e.g. http://localhost:11434/v1")
    p.add_argument("--timeout", type=float, metavar="S", help="seconds to wait for one model reply ([agent] timeout)")
    p.add_argument("--max-tokens", type=int, metavar="N", help="longest reply to ask for ([agent] max_tokens)")
    p.add_argument("--temperature", type=float, metavar="T", help="sampling temperature ([agent] temperature)")
    p.add_argument("--tool-mode", choices=("auto", "native", "json"),
                   help="native tool calls, constrained JSON steps (small models), or detect ([agent] tool_mode)")
    p.add_argument("--user", metavar="NAME",
                   help="who approves runs, recorded in provenance (default: the name the chat remembered for the "
                        "registry, else git config user.name, else $USER)")


def backend_options(args) -> dict:
    """The command line's model settings, checked; None where [agent] (or the default) applies."""
    if args.guided and (args.model or args.base_url):
        raise UserError("--guided runs the offline dialogue; leave out --model/--base-url, or drop --guided")
    for name, value, low, high in (("--timeout", args.timeout, 1, 3600), ("--max-tokens", args.max_tokens, 16, 131072),
                                   ("--temperature", args.temperature, 0, 2)):
        if value is not None and not low <= value <= high:
            raise UserError(f"{name} must be from {low} to {high} (got {value:g})")
    return {"guided": args.guided, "model": args.model, "base_url": args.base_url, "timeout": args.timeout,
            "max_tokens": args.max_tokens, "temperature": args.temperature, "tool_mode": args.tool_mode}


def cmd_chat(ctx) -> int:
    args = ctx.args
    options = backend_options(args)
    if not (sys.stdin.isatty() and sys.stdout.isatty()):
        print(NOT_A_TERMINAL, file=sys.stderr)
        return ExitCode.USAGE
    # the registry is loaded by the app after its first paint (ctx.registry is loaded on first use)
    from snakegate.registry.approver import resolve

    who = resolve(ctx.settings.registry_root, args.user)  # only the machine's name: asked once at the first run
    app = build_app(lambda: ctx.registry, ctx.settings, approved_by=who.name, approver_asks=who.machine_only,
                    **options)
    app.run()  # quitting during a run: the app says so, and the process ends once the run is recorded
    return app.return_code or ExitCode.OK  # 2 when the conversation could not start (the app said why)


def build_app(registry, settings, *, guided: bool = False, model: str | None = None, base_url: str | None = None,
              approved_by: str, approver_asks: bool = False, conversation_id: str | None = None,
              **backend_opts):
    """The chat app, ready to run (also used by tests and bench/bench_tui.py). `registry` is a Registry or a
    function returning one: the app paints first, then loads it and builds backend + Conversation in the
    background; `approver_asks`: the approver is only the machine's name, asked once before the first run.
    `backend_opts` are make_backend's timeout, max_tokens, temperature and tool_mode."""
    from snakegate.tui.app import ChatApp

    def connect():
        from snakegate.agent.backends.choose import make_backend
        from snakegate.agent.controller import Conversation

        backend = make_backend(settings, guided=guided, model=model, base_url=base_url, **backend_opts)
        return Conversation(registry() if callable(registry) else registry, settings, backend,
                            conversation_id=conversation_id)

    return ChatApp(connect, approved_by=approved_by, approver_asks=approver_asks, settings=settings)


def default_approver(root) -> str:
    """The approver when --user is not given: the name remembered for the registry (the chat asks for it once),
    else `git config user.name` as seen from the registry, else $USER (snakegate.registry.approver)."""
    from snakegate.registry.approver import resolve

    return resolve(root).name


def cmd_ask(ctx) -> int:
    from snakegate.agent.backends.choose import make_backend
    from snakegate.agent.controller import Conversation
    from snakegate.agent.drafts import draft_title
    from snakegate.agent.oneshot import ask
    from snakegate.agent.prompt import relative
    from snakegate.commands.run_cmds import ProgressPrinter, exit_for, summary_lines
    from snakegate.run.runner import GateRejected, RunOptions

    args = ctx.args
    if args.cores < 1:
        raise UserError(f"--cores must be at least 1 (got {args.cores})")
    if not args.text.strip():
        raise UserError('ask needs a request, e.g. snakegate ask "profile data/examples/tabular-penguins.csv"')
    approver = (args.user or default_approver(ctx.settings.registry_root)) if args.yes else None
    backend = make_backend(ctx.settings, **backend_options(args))
    convo = Conversation(ctx.registry, ctx.settings, backend)
    result = ask(convo, args.text)
    root = ctx.settings.registry_root
    out = {"ok": False, "conversation_id": convo.conversation_id, "backend": backend.name, "model": backend.model,
           "answered_by": convo.answered_by, "events": result.to_json(), "draft": None, "run": None,
           "audit_log": relative(convo.audit.path, root) if convo.audit else None}
    if not args.json:
        for e in out["events"]:
            _print_event(e)
    if result.failure is not None or result.draft is None:
        why = result.failure or "no draft: the request needs more answers (see above), or could not be met"
        out["error"] = why
        _finish(args, out, f"no draft: {why}" if result.failure else why)
        return ExitCode.USAGE if result.failure else ExitCode.INVALID
    draft = result.draft
    path = relative(draft.config_path, root)
    out["draft"] = {"path": path, "workflow": draft.workflow, "version": draft.version,
                    "invocation_id": draft.invocation_id, "command": f"snakegate run {path}",
                    "faithful": draft.faithful, "differences": list(draft.differences)}
    if not args.json and draft.differences:
        print("the draft passed the gate but differs from your request:")
        for line in draft.differences:
            print(f"  - {line}")
    if draft.plan is not None:  # a plan: its steps in run order and what each takes from another
        out["draft"]["steps"] = [{"name": s.name, "workflow": s.workflow, "version": s.version,
                                  "takes": [{"param": p, "from": f, "output": o} for p, f, o in s.takes]}
                                 for s in draft.plan.steps]
    if not args.yes:
        out["ok"] = True
        _finish(args, out, f"draft: {path} ({draft_title(draft)}, invocation {draft.invocation_id[:12]}…"
                           + ("; differs from your request" if draft.differences else "") + ")"
                           f"\nrun it with: snakegate run {path}"
                           "\n(or ask again with --yes to approve and run it at once)")
        return ExitCode.OK
    if draft.differences:
        # --yes approves what was asked; a draft that is not that needs the person to read it first
        out["error"] = "the draft differs from your request: " + "; ".join(draft.differences)
        _finish(args, out, f"nothing was run: the draft {path} differs from your request (see above); read it, "
                           f"then run it with: snakegate run {path}, or ask again more precisely")
        return ExitCode.INVALID
    approval = convo.approve(approver)
    if not args.json:
        print(f"approved by {approver}: running {path}", file=sys.stderr)
    try:
        outcome = convo.execute(approval, RunOptions(cores=args.cores),
                                on_progress=None if args.json else ProgressPrinter())
    except GateRejected as rejected:
        out["error"] = rejected.message
        _finish(args, out, f"nothing was run: {rejected.message}")
        return ExitCode.INVALID
    out["ok"] = outcome.status == "succeeded"
    out["run"] = {"run_id": outcome.run_id, "status": outcome.status, "approved_by": approver,
                  "folder": relative(outcome.run_dir, root)}
    _finish(args, out, "\n".join(summary_lines(outcome, root)))
    return exit_for(outcome.status)


def _print_event(e: dict) -> None:
    """One event of the conversation as plain lines that fit the terminal (commands.plain_text)."""
    from snakegate.commands.layout import wrap
    from snakegate.commands.plain_text import plain_lines

    if e["kind"] == "said":
        lines = plain_lines(e["text"])
    elif e["kind"] == "action":
        lines = wrap(f"{e['name']}: {e['summary']}", indent=2, first=f"{'✓' if e['ok'] else '✗'} ")
    elif e["kind"] == "sensitive":
        lines = wrap(f"(sensitive: {e['param']} of {e['workflow']} can only be entered in snakegate chat's masked "
                     "field)")
    else:
        return
    if lines:
        print("\n".join(lines))


def _finish(args, out: dict, text: str) -> None:
    """The last words: JSON with --json, else `text`'s lines wrapped to the terminal (a path is never cut)."""
    from snakegate.commands.layout import wrap

    if args.json:
        print(json.dumps(out, indent=2, sort_keys=True, default=str))
    else:
        print("\n".join(line for part in text.split("\n") for line in (wrap(part, indent=2, first="")
                                                                       if part.strip() else [""])))
