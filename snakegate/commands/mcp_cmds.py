"""The MCP command: `snakegate mcp`, the platform actions served to any MCP client (stdio or streamable HTTP).

Checks the options (HTTP binds a loopback address unless `--allow-remote`
says otherwise, because the server has no authentication), finds who is
recorded as approving runs, and hands over to `snakegate.agent.mcp.server`,
imported only when the command runs so `snakegate --help` stays instant.
"""

from __future__ import annotations

import ipaddress

from snakegate.errors import ExitCode, UserError

DEFAULT_PORT = 8765


def register(sub, epilog: str) -> None:
    p = sub.add_parser(
        "mcp", help="serve the gated platform actions to an MCP client (stdio, or streamable HTTP on 127.0.0.1)",
        epilog=epilog,
        description="Start an MCP server: any MCP client (a desktop assistant, an IDE) can search and describe the "
                    "registry's workflows, inspect the data roots, validate parameters through the gate, and ask to "
                    "run a draft; the server then shows the person the exact config and runs it only when they "
                    "confirm (MCP elicitation). Every call is logged under .snakegate/audit/mcp-<id>/.")
    p.add_argument("--http", action="store_true", help="serve streamable HTTP at http://HOST:PORT/mcp instead of stdio")
    p.add_argument("--host", metavar="HOST", help="address to bind with --http (default 127.0.0.1; only loopback "
                                                   "addresses unless --allow-remote)")
    p.add_argument("--port", metavar="PORT", type=int, help=f"port with --http (default {DEFAULT_PORT})")
    p.add_argument("--allow-remote", action="store_true",
                   help="let --host be a non-loopback address: anyone who can reach it can list your data files and "
                        "ask for runs, since the server has no authentication")
    p.add_argument("--cores", metavar="N", type=int, default=1,
                   help="Snakemake --cores for the runs people confirm through this server (default 1)")
    p.add_argument("--user", metavar="NAME", help="the approver's name the confirmation form suggests (default: git "
                                                   "config user.name, else $USER); the person may type another")
    p.set_defaults(handler=cmd_mcp)


def is_loopback(host: str) -> bool:
    if host.strip().lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def cmd_mcp(ctx) -> int:
    args = ctx.args
    if not args.http and (args.host is not None or args.port is not None or args.allow_remote):
        raise UserError("--host, --port and --allow-remote configure the HTTP transport; add --http (without it "
                        "snakegate mcp speaks stdio)", ExitCode.USAGE)
    host = args.host if args.host is not None else "127.0.0.1"
    port = args.port if args.port is not None else DEFAULT_PORT
    if args.http and not is_loopback(host) and not args.allow_remote:
        raise UserError(f"--host {host} is not a loopback address: snakegate mcp has no authentication, so anyone who "
                        "can reach that address could list your data files and ask for runs. Bind 127.0.0.1 (the "
                        f"default), or add --allow-remote to bind {host} anyway", ExitCode.USAGE)
    if args.cores < 1:
        raise UserError(f"--cores {args.cores}: give at least 1", ExitCode.USAGE)
    if not 1 <= port <= 65535:
        raise UserError(f"--port {port} is not a port number (1-65535)", ExitCode.USAGE)
    from snakegate.agent.mcp.server import serve
    from snakegate.commands.chat_cmds import default_approver

    approver = args.user.strip() if args.user and args.user.strip() else default_approver(ctx.settings.registry_root)
    return serve(ctx.registry, ctx.settings, approver=approver, http=args.http, host=host, port=port,
                 cores=args.cores)
