"""Snakemake job: the paper's Tables 1, 2, 5, 6 and 7 over every compared space and seed."""

from pathlib import Path

from xlalign.core.io import read_json, write_json
from xlalign.reporting.html import write_html
from xlalign.reporting.tables import bli_test_sets, load_records, write_tables
from xlalign.workflow.jobscript import job_logging

with job_logging(snakemake):
    p = snakemake.params
    out_dir = Path(snakemake.output.md).parent
    written = write_tables(
        load_records(list(snakemake.input.bli)),
        load_records(list(snakemake.input.wordsim)),
        out_dir,
        spaces=list(p.spaces),
        metric=p.metric,
        retrieval=p.retrieval,
        test_sets=bli_test_sets(list(p.dictionaries)),
    )
    selection = {}
    for path in snakemake.input.selection:
        s = read_json(path)
        selection[f"{Path(path).parent.parent.name}/{Path(path).parent.name}/{s['language']}"] = {
            "chosen": s["chosen"],
            "reason": s["reason"],
        }
    written["selection"] = selection
    write_html(snakemake.output.md, snakemake.output.html)
    write_json(snakemake.output.summary, written)
