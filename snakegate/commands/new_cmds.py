"""Registry-making commands: `new` (scaffold a registry of your own) and `types` (the artifact types in force:
the built-in ones and those the registry's snakegate.toml adds)."""

from __future__ import annotations

import json
from pathlib import Path

from snakegate.errors import ExitCode


def register(sub, epilog: str) -> None:
    p = sub.add_parser("new", help="make a new registry: snakegate.toml, Snakefile, workflows/, data/, "
                                   "profiles/slurm/, a CI file and a README", epilog=epilog)
    p.add_argument("dir", help="the new registry's folder (new or empty; nothing is ever overwritten)")
    p.add_argument("--with-examples", action="store_true",
                   help="copy the curated example workflows and their demo data in as well")
    p.set_defaults(handler=cmd_new)

    p = sub.add_parser("types", help="list the artifact types in force: built-in and the registry's own",
                       epilog=epilog)
    p.add_argument("--json", action="store_true", help="print {name: {description, extensions, check, ...}}")
    p.set_defaults(handler=cmd_types)


def cmd_new(ctx) -> int:
    from snakegate.registry.scaffold import new_registry

    target = Path(ctx.args.dir)
    written = new_registry(target, with_examples=ctx.args.with_examples)
    workflows = sorted(p.parent.name for p in (target / "workflows").glob("*/workflow.yaml"))
    print(f"made a registry in {target} ({len(written)} files"
          + (f"; workflows: {', '.join(workflows)}" if workflows else "") + ")")
    print("next:")
    print(f"  cd {target} && git init && git add -A && git commit -m 'a new registry'   # runs record its SHAs")
    print("  snakegate draft PATH/TO/A/SNAKEMAKE/WORKFLOW --id <id>   # bring a workflow in, then:")
    print("  snakegate check <id> && snakegate test <id>")
    return ExitCode.OK


def cmd_types(ctx) -> int:
    from snakegate.metaschemas import artifact_types, builtin_artifact_types

    ctx.registry  # loading the registry puts its own types in force
    types = artifact_types()
    builtin = builtin_artifact_types()
    if ctx.args.json:
        print(json.dumps({name: {**spec, "source": "built-in" if name in builtin else "registry"}
                          for name, spec in sorted(types.items())}, indent=2, sort_keys=True))
        return ExitCode.OK
    width = max(len(n) for n in types)
    for name in sorted(types):
        spec = types[name]
        where = "built-in" if name in builtin else "registry"
        ext = " ".join(spec.get("extensions") or []) or "-"
        print(f"{name:<{width}}  {where:<8}  {spec.get('check', 'none'):<9} {ext}")
    return ExitCode.OK
