"""The chat command: `snakegate chat`, the Textual app in front of the conversation controller.

Builds the backend (an OpenAI-compatible server, or the offline guided
dialogue) and a `Conversation` from the same registry and settings as every
other command, then hands the terminal to the app. Textual, the agent and the
backends are imported only when the command runs, so `snakegate --help`
stays instant.
"""

from __future__ import annotations

import os
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
    p.add_argument("--guided", action="store_true",
                   help="use the offline guided dialogue even when a model is configured")
    p.add_argument("--model", metavar="NAME", help="model name on the OpenAI-compatible server")
    p.add_argument("--base-url", metavar="URL", help="OpenAI-compatible server, e.g. http://localhost:11434/v1")
    p.add_argument("--user", metavar="NAME",
                   help="who approves runs, recorded in provenance (default: git config user.name, else $USER)")
    p.set_defaults(handler=cmd_chat)


def cmd_chat(ctx) -> int:
    args = ctx.args
    if args.guided and (args.model or args.base_url):
        raise UserError("--guided runs the offline dialogue; leave out --model/--base-url, or drop --guided")
    if not (sys.stdin.isatty() and sys.stdout.isatty()):
        print(NOT_A_TERMINAL, file=sys.stderr)
        return ExitCode.USAGE
    # the registry is loaded by the app after its first paint (ctx.registry is loaded on first use)
    app = build_app(lambda: ctx.registry, ctx.settings, guided=args.guided, model=args.model,
                    base_url=args.base_url, approved_by=args.user or default_approver(ctx.settings.registry_root))
    app.run()  # quitting during a run: the app says so, and the process ends once the run is recorded
    return app.return_code or ExitCode.OK  # 2 when the conversation could not start (the app said why)


def build_app(registry, settings, *, guided: bool = False, model: str | None = None, base_url: str | None = None,
              approved_by: str, conversation_id: str | None = None):
    """The chat app, ready to run (also used by tests and bench/bench_tui.py). `registry` is a Registry or a
    function returning one: the app paints first, then loads it and builds backend + Conversation in the
    background."""
    from snakegate.tui.app import ChatApp

    def connect():
        from snakegate.agent.backends import make_backend
        from snakegate.agent.controller import Conversation

        backend = make_backend(settings, guided=guided, model=model, base_url=base_url)
        return Conversation(registry() if callable(registry) else registry, settings, backend,
                            conversation_id=conversation_id)

    return ChatApp(connect, approved_by=approved_by, settings=settings)


def default_approver(root) -> str:
    """`git config user.name` as seen from the registry (repository, then global config), else $USER."""
    try:
        import git
        name = git.Git(str(root)).config("--get", "user.name").strip()
    except Exception:  # noqa: BLE001 - no git, not configured, not a repository: fall back to the login name
        name = ""
    name = name or os.environ.get("USER") or os.environ.get("USERNAME") or ""
    if not name:
        raise UserError("cannot tell who approves runs (no git user.name, no $USER); pass --user NAME")
    return name
