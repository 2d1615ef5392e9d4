"""Snakemake job: the tokenised parallel corpus of one language pair (xlalign.corpus.parallel)."""

from xlalign.corpus.parallel import PairFilter, build_parallel, make_tokeniser, sources_from_specs
from xlalign.workflow.jobscript import job_logging

with job_logging(snakemake):
    src, tgt = snakemake.wildcards.src, snakemake.wildcards.tgt
    opts = snakemake.params.options
    models = {src: snakemake.input.get("src_model"), tgt: snakemake.input.get("tgt_model")}
    tokenisers, tools = {}, {}
    for lang in (src, tgt):
        tokenisers[lang], tools[lang] = make_tokeniser(
            lang,
            tool=snakemake.params.tools[lang],
            udpipe_model=models[lang],
            fallback=snakemake.params.fallback,
        )
    build_parallel(
        sources_from_specs(snakemake.params.sources),
        snakemake.output.tsv,
        snakemake.output.stats,
        src_lang=src,
        tgt_lang=tgt,
        src_tokenise=tokenisers[src],
        tgt_tokenise=tokenisers[tgt],
        filters=PairFilter(**opts["filter"]),
        max_pairs=opts["max_pairs"],
        seed=opts["seed"],
        oversample=opts["oversample"],
        info={"tokenisers": tools},
    )
