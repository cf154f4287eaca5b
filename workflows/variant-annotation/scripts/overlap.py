"""Rule overlap: the GFF3 features each variant falls in, as a per-variant table and counts per feature type.

A variant is one VCF record as `bcftools query` printed it (CHROM, POS, REF, ALT); it covers POS to
POS + len(REF) - 1. A GFF3 feature covers start to end, 1-based, both ends included. The variant falls in
the feature when they share a base, so a SNP on a feature's first or last base is inside it.

Features are read once and sorted by start; each contig's variants are swept in position order past the
features that start at or before their last base and have not ended before their first one, so the work
grows with variants + features, not with their product.

A variant lists its features outermost first: by start, then the longest first, then in the file's order
(a gene before its transcript of the same extent); a feature split over several lines (a CDS) is listed
once. A feature is named by its Name attribute, else its ID, else contig:start-end. Names and types keep
the GFF3's own percent-escapes; a ',', ';', '=' or whitespace in them is percent-encoded, because the
table's cells and the VCF's INFO values are comma-separated lists. Rows keep the VCF's order, JSON keys
are sorted and the fraction has 6 significant digits: the outputs are byte-stable.
"""
import heapq
import json
import logging
import re
from collections import defaultdict
from dataclasses import dataclass

COLUMNS = ["chrom", "pos", "ref", "alt", "feature", "feature_type"]
WHOLE_NUMBER = re.compile(r"[0-9]{1,18}")
UNSAFE = re.compile(r"[,;=\s]")


@dataclass(frozen=True)
class Feature:
    start: int
    end: int
    order: int  # line number in the GFF3: the last tie-break, and the identity of a feature without ID
    name: str
    type: str


def encode(text):
    """Percent-encode what a comma-separated INFO value or table cell cannot hold."""
    return UNSAFE.sub(lambda m: "".join(f"%{b:02X}" for b in m.group().encode()), text)


def attributes(column):
    """{key: value} of a GFF3 attributes column (the first value of a repeated key wins)."""
    out = {}
    for pair in column.split(";"):
        key, sep, value = pair.strip().partition("=")
        if sep and key and key not in out:
            out[key] = value
    return out


def read_features(path, wanted):
    """({contig: [Feature]}, {type: set of feature identities}, set of every type in the file)."""
    features, identities, types_seen = defaultdict(list), defaultdict(set), set()
    with open(path, encoding="utf-8") as fh:
        for number, line in enumerate(fh, 1):
            line = line.rstrip("\n").rstrip("\r")
            if line.startswith("##FASTA") or line.startswith(">"):
                break
            if not line.strip() or line.startswith("#"):
                continue
            fields = line.split("\t")
            if len(fields) != 9:
                raise SystemExit(f"variant-annotation overlap: {path} line {number} has {len(fields)} "
                                 "tab-separated columns, not the 9 of GFF3")
            seqid, _, ftype, start, end = fields[:5]
            if not (WHOLE_NUMBER.fullmatch(start) and WHOLE_NUMBER.fullmatch(end) and 1 <= int(start) <= int(end)):
                raise SystemExit(f"variant-annotation overlap: {path} line {number} has start {start!r} and end "
                                 f"{end!r}; GFF3 needs whole numbers with 1 <= start <= end")
            types_seen.add(ftype)
            if wanted is not None and ftype not in wanted:
                continue
            attrs = attributes(fields[8])
            name = attrs.get("Name") or attrs.get("ID") or f"{seqid}:{start}-{end}"
            identities[ftype].add(("ID", attrs["ID"]) if attrs.get("ID") else ("line", number))
            features[seqid].append(Feature(int(start), int(end), number, encode(name), encode(ftype)))
    return features, identities, types_seen


def read_sites(path):
    """[(chrom, pos, ref, alt)] in the VCF's order, from `bcftools query -f '%CHROM\\t%POS\\t%REF\\t%ALT\\n'`."""
    sites = []
    with open(path, encoding="utf-8") as fh:
        for number, line in enumerate(fh, 1):
            fields = line.rstrip("\n").split("\t")
            if len(fields) != 4 or not WHOLE_NUMBER.fullmatch(fields[1]):
                raise SystemExit(f"variant-annotation overlap: {path} line {number} is not CHROM, POS, REF, ALT")
            chrom, pos, ref, alt = fields
            sites.append((chrom, int(pos), ref, alt))
    return sites


def overlaps(sites, features):
    """[[Feature, ...] per site]: the features each site falls in, outermost first."""
    found = [[] for _ in sites]
    by_contig = defaultdict(list)
    for index, (chrom, pos, ref, _) in enumerate(sites):
        by_contig[chrom].append((pos, pos + max(len(ref), 1) - 1, index))
    for chrom, spans in by_contig.items():
        ordered = sorted(features.get(chrom, ()), key=lambda f: (f.start, -f.end, f.order))
        spans.sort()
        active, next_feature, horizon = [], 0, 0
        for pos, last, index in spans:
            # Features start in order; a long deletion may reach further than the SNP after it, so a feature
            # that entered for one variant is re-checked against each later one (f.start <= last below).
            horizon = max(horizon, last)
            while next_feature < len(ordered) and ordered[next_feature].start <= horizon:
                f = ordered[next_feature]
                heapq.heappush(active, (f.end, f.order, f))
                next_feature += 1
            while active and active[0][0] < pos:  # ended before this variant, so before every later one too
                heapq.heappop(active)
            hits = sorted((f for _, _, f in active if f.start <= last), key=lambda f: (f.start, -f.end, f.order))
            seen = set()
            for f in hits:
                if (f.name, f.type) not in seen:
                    seen.add((f.name, f.type))
                    found[index].append(f)
    return found


def sig(x):
    return float(f"{x:.6g}")


def summarize(sites, found, features, identities, types_seen, wanted):
    inside = sum(1 for hits in found if hits)
    per_type = defaultdict(int)
    for hits in found:
        for ftype in {f.type for f in hits}:
            per_type[ftype] += 1
    contigs = list(dict.fromkeys(chrom for chrom, *_ in sites))
    return {
        "variants": len(sites),
        "in_features": inside,
        "outside_features": len(sites) - inside,
        "in_features_fraction": sig(inside / len(sites)) if sites else None,
        "by_feature_type": {encode(t): {"features": len(ids), "variants": per_type[encode(t)]}
                            for t, ids in identities.items()},
        "contigs_without_features": [c for c in contigs if not features.get(c)],
        "feature_types": list(wanted) if wanted is not None else None,
        "feature_types_not_found": [t for t in wanted if t not in types_seen] if wanted is not None else [],
    }


def main(smk):
    logging.basicConfig(filename=smk.log[0], filemode="w", level=logging.INFO, format="%(levelname)s %(message)s")
    wanted = list(smk.params.feature_types) if smk.params.feature_types is not None else None
    features, identities, types_seen = read_features(smk.input.features, set(wanted) if wanted else None)
    sites = read_sites(smk.input.sites)
    found = overlaps(sites, features)

    with open(smk.output.variants, "w", encoding="utf-8", newline="\n") as out:
        out.write("\t".join(COLUMNS) + "\n")
        for (chrom, pos, ref, alt), hits in zip(sites, found):
            names, types = ",".join(f.name for f in hits), ",".join(f.type for f in hits)
            out.write(f"{chrom}\t{pos}\t{ref}\t{alt}\t{names}\t{types}\n")

    summary = summarize(sites, found, features, identities, types_seen, wanted)
    with open(smk.output.summary, "w", encoding="utf-8") as fh:
        json.dump(summary, fh, sort_keys=True, indent=2)
        fh.write("\n")
    logging.info("%d variants, %d in a feature; %d features of %d types", summary["variants"],
                 summary["in_features"], sum(len(v) for v in features.values()), len(identities))
    if summary["feature_types_not_found"]:
        logging.warning("feature types not in the file: %s (types there: %s)",
                        summary["feature_types_not_found"], sorted(types_seen))
    if summary["contigs_without_features"]:
        logging.warning("contigs with variants but no feature: %s", summary["contigs_without_features"])


main(snakemake)  # noqa: F821 (injected by Snakemake's script directive)
