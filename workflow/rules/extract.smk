# Static embeddings from the encoder (paper section 3.1): vocabulary, the teacher's context
# vectors (computed once, cached on disk, reused by every epoch and seed), X2S-M training
# per seed, and the aggregation baseline.


rule vocab:
    input:
        rules.segment.output.txt,
    output:
        tsv=f"{RES}/corpus/s{{sseed}}/vocab/{{lang}}.tsv",
        stats=f"{RES}/corpus/s{{sseed}}/vocab/{{lang}}.json",
    log:
        log_path("vocab", "s{sseed}", "{lang}"),
    benchmark:
        bench_path("vocab", "s{sseed}", "{lang}")
    conda:
        f"{ENVS}/core.yaml"
    threads: job_threads("vocab")
    resources:
        mem_mb=job_mem("vocab"),
        runtime=job_runtime("vocab"),
        disk_mb=job_disk("vocab"),
    params:
        vocab=config["extract"]["vocab"],
    script:
        "../scripts/build_vocab.py"


# The declared output is the cache directory. The job builds it in the sidecar
# `<dir>.partial/` (not an output: Snakemake deletes a failed job's outputs, not it), so a
# killed job leaves its finished shards there and the re-run resumes at the first missing
# one; the complete cache is renamed into place at the end (meta.json inside marks it
# complete). Unless extract.keep_teacher_cache, it is temp(): Snakemake deletes it once
# x2static, aggregate and learning_curve of every seed using it have run (~30 GB a
# language at the paper's scale; `--notemp` keeps it for one run). When the aggregation
# baseline is asked for (aggregation.enabled or init: aggregation), the same
# encoder pass also sums the sampled occurrences of every seed that uses this corpus
# (aggregate-seed<seed>.npz in the cache, resumed with the shards): `aggregate` then
# runs no encoder. The seeds come from the config in the script, not params, so adding a
# seed re-runs nothing here (the new seed's `aggregate` encodes on its own). So is the
# memory budget (memory.block_mb): it sets how many sentences are encoded at once, which
# changes the vectors only by float32 noise, and must not re-run the whole encoder pass.
# For a learning_curve language it also sums each size's samples (its lines only, beside
# the others as aggregate-seed<seed>-lines<n>.npz), also from the config: `learning_curve`
# encodes a size's sampled sentences itself when they are missing.
rule teacher:
    input:
        txt=rules.segment.output.txt,
        vocab=rules.vocab.output.tsv,
        encoder=wp.encoder_dir(config),
    output:
        cache=teacher_cache_output(f"{RES}/cache/teacher/s{{sseed}}/{{lang}}"),
        # The cache's meta.json, copied beside it: the job's record (MLflow mirrors it),
        # kept when the cache itself is deleted.
        stats=f"{RES}/cache/teacher/s{{sseed}}/{{lang}}.json",
    log:
        log_path("teacher", "s{sseed}", "{lang}"),
    benchmark:
        bench_path("teacher", "s{sseed}", "{lang}")
    conda:
        f"{ENVS}/torch.yaml"
    threads: job_threads("teacher")
    resources:
        mem_mb=job_mem("teacher"),
        runtime=job_runtime("teacher"),
        disk_mb=job_disk("teacher"),
        gpu=job_gpu("teacher"),
    params:
        layer=config["extract"]["layer"],
        pooling=config["extract"]["pooling"],
        context=config["extract"]["context"],
        max_length=config["extract"]["max_length"],
        batch_tokens=config["extract"]["batch_tokens"],
    script:
        "../scripts/teacher_cache.py"


rule x2static:
    input:
        cache=lambda wc: teacher_cache(wc.seed, wc.lang),
        vocab=lambda wc: vocab_tsv(wc.seed, wc.lang),
        # extract.init: aggregation starts every word from its aggregation vector.
        init=lambda wc: (
            [output_path(rules.aggregate, "npy", **dict(wc.items()))]
            if config["extract"]["init"] == "aggregation"
            else []
        ),
    output:
        vec=f"{RES}/static/seed{{seed}}/x2s-m/{{lang}}.vec",
        npy=f"{RES}/static/seed{{seed}}/x2s-m/{{lang}}.npy",
        words=f"{RES}/static/seed{{seed}}/x2s-m/{{lang}}.vocab.txt",
        manifest=f"{RES}/static/seed{{seed}}/x2s-m/{{lang}}.manifest.json",
        stats=f"{RES}/static/seed{{seed}}/x2s-m/{{lang}}.json",
    log:
        log_path("x2static", "seed{seed}", "{lang}"),
    benchmark:
        bench_path("x2static", "seed{seed}", "{lang}")
    conda:
        f"{ENVS}/torch.yaml"
    threads: job_threads("x2static")
    resources:
        mem_mb=job_mem("x2static"),
        runtime=job_runtime("x2static"),
        disk_mb=job_disk("x2static"),
        gpu=job_gpu("x2static"),
    params:
        args={
            k: config["extract"][k]
            for k in (
                "epochs",
                "batch_sentences",
                "negatives",
                "subsample_t",
                "lr",
                "checkpoint_every_batches",
            )
        },
        init="vectors" if config["extract"]["init"] == "aggregation" else "uniform",
        checkpoint=lambda wc: wp.sidecar(
            output_path(rules.x2static, "npy", **dict(wc.items())), ".checkpoint"
        ),
    script:
        "../scripts/x2static.py"


# The vectors come from the sums the teacher's pass left (same corpus, layer, pooling and
# max_length); the job runs the encoder itself only when they are missing or for other
# settings (context: x2static-code, max_contexts changed since), with its own checkpoint.
# A target here runs the teacher first.
rule aggregate:
    input:
        txt=lambda wc: segment_txt(wc.seed, wc.lang),
        cache=lambda wc: (
            [teacher_cache(wc.seed, wc.lang)]
            if config["extract"]["context"] != "x2static-code"
            else []
        ),
        vocab=lambda wc: vocab_tsv(wc.seed, wc.lang),
        encoder=wp.encoder_dir(config),
    output:
        vec=f"{RES}/static/seed{{seed}}/aggregate/{{lang}}.vec",
        npy=f"{RES}/static/seed{{seed}}/aggregate/{{lang}}.npy",
        words=f"{RES}/static/seed{{seed}}/aggregate/{{lang}}.vocab.txt",
        manifest=f"{RES}/static/seed{{seed}}/aggregate/{{lang}}.manifest.json",
        stats=f"{RES}/static/seed{{seed}}/aggregate/{{lang}}.json",
    log:
        log_path("aggregate", "seed{seed}", "{lang}"),
    benchmark:
        bench_path("aggregate", "seed{seed}", "{lang}")
    conda:
        f"{ENVS}/torch.yaml"
    threads: job_threads("aggregate")
    resources:
        mem_mb=job_mem("aggregate"),
        runtime=job_runtime("aggregate"),
        disk_mb=job_disk("aggregate"),
        gpu=job_gpu("aggregate"),
    params:
        layer=config["extract"]["layer"],
        pooling=config["extract"]["pooling"],
        max_length=config["extract"]["max_length"],
        batch_tokens=config["extract"]["batch_tokens"],
        max_contexts=config["extract"]["aggregation"]["max_contexts"],
        # The running sums' checkpoint (not an output: kept when the job fails).
        checkpoint=lambda wc: wp.sidecar(
            output_path(rules.aggregate, "npy", **dict(wc.items())), ".checkpoint"
        ),
    script:
        "../scripts/aggregate.py"
