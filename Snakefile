# xlalign: static and contextualised multilingual embeddings, aligned and evaluated.
# Thin on purpose: rules live in workflow/rules, logic in src/xlalign.
from snakemake.utils import min_version

min_version("9.0")


# The configuration: `--configfile` (e.g. config/paper.yaml) *replaces* the embedded default
# config/config.yaml instead of being merged into it (see common.smk); validated there.
include: "workflow/rules/common.smk"
include: "workflow/rules/resources.smk"
include: "workflow/rules/download.smk"
include: "workflow/rules/sample.smk"
include: "workflow/rules/segment.smk"
include: "workflow/rules/extract.smk"
include: "workflow/rules/wordalign.smk"
include: "workflow/rules/align.smk"
include: "workflow/rules/evaluate.smk"
include: "workflow/rules/track.smk"


rule all:
    default_target: True
    input:
        all_targets(),
    # A target only, nothing runs: stated so that Snakemake's default (twice the inputs'
    # size, unknown before they exist) does not show as <TBD> in a dry run.
    resources:
        disk_mb=0,
