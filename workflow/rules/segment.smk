# Stage `segment`: sentence segmentation and tokenisation with the paper's Appendix B
# tools, then its filters (>= 7 tokens; paragraphs with >= 2 sentences).


rule segment:
    input:
        txt=rules.sample.output.txt,
        model=udpipe_model_input,
    output:
        txt=f"{RES}/corpus/s{{sseed}}/segment/{{lang}}.txt",
        stats=f"{RES}/corpus/s{{sseed}}/segment/{{lang}}.json",
    log:
        log_path("segment", "s{sseed}", "{lang}"),
    benchmark:
        bench_path("segment", "s{sseed}", "{lang}")
    conda:
        f"{ENVS}/segment.yaml"
    threads: job_threads("segment")
    resources:
        mem_mb=job_mem("segment"),
        runtime=job_runtime("segment"),
        disk_mb=job_disk("segment"),
    params:
        tool=lambda wc: xlconfig.segment_tool(config, wc.lang),
        fallback=config["segment"]["udpipe"]["fallback"],
        min_tokens=lambda wc: xlconfig.segment_filter(config, wc.lang, "min_tokens"),
        min_paragraph_sentences=lambda wc: xlconfig.segment_filter(
            config, wc.lang, "min_paragraph_sentences"
        ),
        max_sentences=config["segment"]["max_sentences"],
    script:
        "../scripts/segment.py"
