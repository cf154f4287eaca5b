# This registry's plain-Snakemake entry: `snakemake --configfile run.yaml` from this folder runs the
# config through the gate of the installed snakegate (its entry ships in the package: snakegate/entry/).
from snakegate.entry import include_entry
include_entry(workflow)
