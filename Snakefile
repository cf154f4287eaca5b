# This registry's plain-Snakemake entry: `snakemake --configfile run.yaml` from this folder runs the
# config through the gate of the installed snakegate (its entry ships in the package: snakegate/entry/).
try:
    from snakegate.entry import include_entry
except ImportError as exc:  # this snakemake is not the one installed beside snakegate
    raise WorkflowError(f"the Python running snakemake ({sys.executable}) has no snakegate with its entry ({exc}): "
                        "run the snakemake of the environment snakegate is installed in (its bin/snakemake, or "
                        "`python -m snakemake` with its python), or `pip install snakegate` into this one")
include_entry(workflow)
