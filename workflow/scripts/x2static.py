"""Snakemake job: X2S-M static vectors of one language and seed (see xlalign.x2static)."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(snakemake.scriptdir).resolve().parents[1] / "src"))

from xlalign.jobs import job_logging
from xlalign.static import save_space
from xlalign.teacher import TeacherCache
from xlalign.vocab import read_vocab
from xlalign.x2static import X2StaticArgs, train_x2static

with job_logging(snakemake):
    out = snakemake.output
    cache = TeacherCache(Path(snakemake.input.cache).parent)
    vocab = read_vocab(snakemake.input.vocab)
    args = X2StaticArgs(seed=int(snakemake.wildcards.seed), **snakemake.params.args)
    result = train_x2static(cache, vocab, args, output_dir=snakemake.params.checkpoint)
    stats = {
        **result.stats,
        "curves": {
            "loss": [p["loss"] for p in result.loss_curve],
            "epoch_loss": result.epoch_losses,
        },
        "teacher": cache.meta,
    }
    save_space(
        vocab.words,
        result.vectors,
        cache.occurrence_counts(len(vocab)) > 0,
        vec_path=out.vec,
        npy_stem=str(out.npy)[: -len(".npy")],
        stats_path=out.stats,
        stats=stats,
        language=snakemake.wildcards.lang,
        reason="never a training target (every occurrence lacked a context)",
    )
