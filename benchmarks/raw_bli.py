"""Raw (unmapped) BLI of static spaces of the embedded default against a random baseline.

Nearest-neighbour retrieval en->xx over the embedded dictionaries (MUSE conventions: only
pairs with both words in the vocabularies count). Issue 4 brings the full BLI stage (CSLS,
both directions, train/test splits); this is the quick check quoted for extraction.

    .venv/bin/python benchmarks/raw_bli.py results/embedded/static/seed1 x2s-m aggregate
"""

from __future__ import annotations

import argparse
from pathlib import Path

from xlalign.evaluation.bli import evaluate_bli, random_baseline, read_dictionary
from xlalign.static.vectors import load_space

DICTS = {
    "de": "en-de.freedict.txt",
    "ru": "en-ru.freedict.txt",
    "ar": "en-ar.freedict.txt",
    "hi": "en-hi.freedict.txt",
    "ja": "en-ja.freedict.txt",
    "zh": "en-zh.cedict.txt",
}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("spaces", help="directory holding <method>/<lang>.vec")
    ap.add_argument("methods", nargs="+")
    ap.add_argument("--dictionaries", default="resources/embedded/dictionaries")
    args = ap.parse_args()
    root = Path(args.spaces)
    print(f"{'pair':7}{'method':11}{'P@1':>7}{'P@5':>7}{'P@10':>7}{'pairs':>7}{'random P@1':>12}")
    for lang, name in DICTS.items():
        dic = read_dictionary(Path(args.dictionaries) / name)
        for method in args.methods:
            src, tgt = root / method / "en.vec", root / method / f"{lang}.vec"
            if not (src.exists() and tgt.exists()):
                continue
            (sw, sv), _ = load_space(src)
            (tw, tv), _ = load_space(tgt)
            r = evaluate_bli(sw, sv, tw, tv, dic)
            rnd = random_baseline(len(tw))["p@1"]
            print(
                f"en-{lang:4}{method:11}{100 * r.precision[1]:7.1f}{100 * r.precision[5]:7.1f}"
                f"{100 * r.precision[10]:7.1f}{r.evaluated:7d}{100 * rnd:12.2f}"
            )


if __name__ == "__main__":
    main()
