"""variant-calling preflight: cross-field rules the gate proves before any job runs.

Pure: reads only its arguments (the resolved params and the read-only artifact
views the gate passes), never a file.
"""


def preflight(params, artifacts):
    """Gate findings ({path, message, hint}) for params JSON Schema cannot refuse on its own."""
    del artifacts  # the reads and the reference were already checked by type; these rules need the params
    found = []
    first_with_name, first_with_reads = {}, {}
    for i, sample in enumerate(params["samples"]):
        name, reads = sample["name"], sample["reads"]
        if name in first_with_name:
            found.append({
                "path": f"samples[{i}].name",
                "message": (f"`samples[{i}].name` is `{name}`, the same as `samples[{first_with_name[name]}].name`; "
                            "sample names must be unique (each becomes one VCF column and one BAM file)"),
                "hint": f"rename one of them, e.g. `{name}_2`, or remove the repeated entry",
            })
        else:
            first_with_name[name] = i
        if reads in first_with_reads:
            j = first_with_reads[reads]
            found.append({
                "path": f"samples[{i}].reads",
                "message": (f"`samples[{i}].reads` and `samples[{j}].reads` are the same file `{reads}`; two samples "
                            "called from the same reads would look like identical twins"),
                "hint": f"give sample `{name}` its own reads file, or remove one of the two entries",
            })
        else:
            first_with_reads[reads] = i
    return found
