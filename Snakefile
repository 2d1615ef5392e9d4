# xlalign: static and contextualised multilingual embeddings, aligned and evaluated.
# Thin on purpose: rules live in workflow/rules, logic in src/xlalign.
from snakemake.utils import min_version

min_version("9.0")


# `snakemake --report results/<name>/report.html`: this page first, then the results
# flagged with report() in the rules, by category (workflow/report/README.md).
report: "workflow/report/workflow.rst"


# Shared helpers first, by concern: set-up (the library's path, the configuration,
# validated before any job runs: `--configfile` *replaces* the embedded default
# config/config.yaml instead of being merged into it; constants, wildcard constraints),
# paths, job sizes (threads and resources) and the tracking manifest.
include: "workflow/rules/common/setup.smk"
include: "workflow/rules/common/paths.smk"
include: "workflow/rules/common/jobsizes.smk"
include: "workflow/rules/common/tracking.smk"
# The rules, each stage after the stages it reads from.
include: "workflow/rules/resources.smk"
include: "workflow/rules/download.smk"
include: "workflow/rules/sample.smk"
include: "workflow/rules/segment.smk"
include: "workflow/rules/extract.smk"
include: "workflow/rules/wordalign.smk"
include: "workflow/rules/align.smk"
include: "workflow/rules/evaluate.smk"
include: "workflow/rules/tasks_download.smk"
include: "workflow/rules/labelled.smk"
include: "workflow/rules/pretrain.smk"
include: "workflow/rules/zeroshot.smk"
include: "workflow/rules/derived.smk"
include: "workflow/rules/metapretrain.smk"
include: "workflow/rules/analysis.smk"
include: "workflow/rules/learning_curve.smk"
include: "workflow/rules/track.smk"
include: "workflow/rules/results.smk"


rule all:
    default_target: True
    input:
        all_targets(),
    # A target only, nothing runs: stated so that Snakemake's default (twice the inputs'
    # size, unknown before they exist) does not show as <TBD> in a dry run.
    resources:
        disk_mb=0,
