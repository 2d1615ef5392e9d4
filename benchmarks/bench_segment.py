"""Throughput of the ``segment`` stage (``xlalign.corpus.segment.segment_file``) per tool.

Usage: .venv/bin/python benchmarks/bench_segment.py [--sentences N] [--out PATH]

Text, all real or realistic, all offline:
- udpipe (tr): the ``# text`` sentences of the turkish-treebanks ``web`` section, with a
  small UDPipe model trained here on 400 sentences of its ``wiki`` section (disjoint);
  a reference row runs the same model through spacy-udpipe's full pipeline
  (tagger + parser + spaCy Doc), which the library skips;
- icu (en): the paragraphs of the GPL-3 text in /usr/share/common-licenses;
- icu (sw, th), icu+jieba (zh), icu+fugashi (ja): sentences written for this benchmark.

Paragraphs of 2-5 sentences are built deterministically from each pool, with an occasional
one-sentence "headline" paragraph and a blank line every few paragraphs. Thai has no
sentence-final punctuation, so ICU finds one sentence per paragraph; its row runs with
``min_paragraph_sentences=1`` (otherwise the paragraph filter drops everything).
"""

from __future__ import annotations

import argparse
import platform
import random
import re
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from xlalign.core.io import write_json  # noqa: E402
from xlalign.corpus.segment import UDPipeSegmenter, make_segmenter, segment_file  # noqa: E402
from xlalign.corpus.udpipe import (  # noqa: E402
    read_conllu_blocks,
    train_udpipe_model,
    turkish_treebank_blocks,
    turkish_treebank_path,
)

SW = [
    "Tanzania ni nchi iliyoko Afrika Mashariki, inayopakana na Kenya upande wa kaskazini.",
    "Mji mkuu wa nchi hiyo ni Dodoma, ingawa Dar es Salaam ndio mji mkubwa zaidi.",
    "Lugha ya Kiswahili inazungumzwa na mamilioni ya watu katika nchi nyingi za Afrika.",
    "Mlima Kilimanjaro ndio mlima mrefu kuliko yote barani Afrika na huvutia watalii wengi.",
    "Wakulima wengi hulima mahindi, maharage na mihogo kwa ajili ya chakula cha familia zao.",
    "Serikali imeahidi kujenga shule mpya na hospitali katika maeneo ya vijijini.",
    "Mvua za masika zilianza mapema mwaka huu, na mito mingi imejaa maji.",
    "Wanafunzi walikusanyika uwanjani asubuhi kusikiliza hotuba ya mwalimu mkuu.",
    "Bei ya mafuta imepanda tena, jambo linalowaathiri madereva wa teksi na mabasi.",
    "Timu ya taifa ilishinda mechi ya jana kwa mabao mawili kwa moja.",
    "Wavuvi hutoka baharini alfajiri na kurudi mchana wakiwa na samaki wengi.",
    "Soko la Kariakoo hujaa watu kila siku wanaonunua nguo, vyakula na vifaa vya nyumbani.",
    "Daktari alisema kwamba mgonjwa anaendelea vizuri baada ya upasuaji.",
    "Historia ya pwani ya Afrika Mashariki inahusiana sana na biashara ya Bahari ya Hindi.",
    "Watoto walicheza mpira hadi jua lilipozama nyuma ya milima.",
    "Kampuni hiyo inapanga kuajiri vijana mia tano katika miezi sita ijayo.",
    "Je, unajua kwamba tembo anaweza kunywa zaidi ya lita mia moja za maji kwa siku?",
    "Mkutano wa wazazi utafanyika Jumamosi ijayo saa nne asubuhi.",
    "Barabara mpya itapunguza muda wa safari kati ya miji hiyo miwili.",
    "Bibi yangu hupenda kusimulia hadithi za zamani jioni tunapokaa pamoja.",
    "Karibu sana!",
]

TH = [
    "กรุงเทพมหานครเป็นเมืองหลวงและเมืองที่มีประชากรมากที่สุดของประเทศไทย",
    "แม่น้ำเจ้าพระยาไหลผ่านใจกลางเมืองและเป็นเส้นทางคมนาคมที่สำคัญมาตั้งแต่อดีต",
    "นักท่องเที่ยวจำนวนมากเดินทางมาเยี่ยมชมวัดพระแก้วและพระบรมมหาราชวังทุกปี",
    "อาหารไทยมีชื่อเสียงไปทั่วโลกเพราะมีรสชาติที่กลมกล่อมทั้งเปรี้ยวหวานเค็มและเผ็ด",
    "ฤดูฝนในประเทศไทยเริ่มตั้งแต่เดือนพฤษภาคมจนถึงเดือนตุลาคม",
    "เกษตรกรในภาคอีสานส่วนใหญ่ปลูกข้าวเหนียวและมันสำปะหลัง",
    "รัฐบาลประกาศแผนพัฒนาระบบรถไฟฟ้าเพื่อลดปัญหาการจราจรติดขัด",
    "นักเรียนทุกคนต้องเข้าแถวเคารพธงชาติในตอนเช้าก่อนเข้าห้องเรียน",
    "ตลาดน้ำเป็นสถานที่ที่ชาวบ้านนำผลไม้และอาหารมาขายบนเรือ",
    "ภาษาไทยมีพยัญชนะสี่สิบสี่ตัวและมีวรรณยุกต์ห้าเสียง",
    "โรงพยาบาลแห่งใหม่จะเปิดให้บริการประชาชนในปีหน้า",
    "เด็กๆ ชอบเล่นน้ำในช่วงเทศกาลสงกรานต์ซึ่งเป็นวันขึ้นปีใหม่ของไทย",
    "บริษัทนี้ส่งออกสินค้าเกษตรไปยังหลายประเทศในเอเชีย",
    "เชียงใหม่เป็นจังหวัดที่มีภูเขาสูงและอากาศเย็นสบายในฤดูหนาว",
]

ZH = [
    "北京是中华人民共和国的首都，也是全国的政治和文化中心。",
    "长江是中国最长的河流，全长约六千三百公里。",
    "近年来，越来越多的年轻人选择在网上购买日常用品。",
    "这家公司计划明年在上海开设一个新的研发中心。",
    "春节是中国最重要的传统节日，家家户户都会团聚在一起吃年夜饭。",
    "科学家们发现，适量运动有助于改善睡眠质量。",
    "图书馆每天早上八点开门，晚上十点关门。",
    "由于连续几天下大雨，部分地区的道路被洪水淹没。",
    "他从小就喜欢画画，后来考上了美术学院。",
    "政府宣布将投入更多资金用于农村教育和医疗。",
    "我们明天早上七点在火车站门口集合，请不要迟到。",
    "这座古老的寺庙已经有一千多年的历史了。",
    "随着技术的进步，电动汽车的价格正在逐渐下降。",
    "你知道这个周末博物馆有什么新的展览吗？",
    "老师耐心地回答了每一个学生提出的问题。",
    "好消息！",
]

JA = [
    "東京は日本の首都であり、世界有数の大都市として知られている。",
    "富士山は日本で最も高い山で、標高は三千七百七十六メートルです。",
    "毎年春になると、多くの人々が公園に集まって桜を楽しみます。",
    "この会社は来年から新しい工場で電気自動車の生産を始める予定だ。",
    "昨日の夜から降り続いた雨のため、一部の電車が運転を見合わせています。",
    "京都には千年以上の歴史を持つ寺や神社がたくさんあります。",
    "子どもたちは夏休みに祖父母の家で川遊びをして過ごした。",
    "政府は少子高齢化への対策として新たな支援制度を発表した。",
    "図書館で借りた本を読み終えたので、明日返しに行くつもりです。",
    "日本料理は見た目の美しさと季節感を大切にすることで知られています。",
    "駅前に新しいパン屋が開店し、朝から長い行列ができていた。",
    "研究チームは、睡眠不足が記憶力に影響を与えることを明らかにした。",
    "週末は家族と一緒に近くの山へハイキングに出かけました。",
    "このアプリを使えば、外国語の勉強がもっと楽しくなるでしょう。",
    "彼女は三年間の留学を終えて、先月日本に帰国した。",
    "本日のお知らせ",
]

GPL3 = Path("/usr/share/common-licenses/GPL-3")


class SpacyUDPipeFull:
    """Reference: the same UDPipe model through spacy-udpipe's whole pipeline."""

    def __init__(self, seg: UDPipeSegmenter) -> None:
        self.nlp = seg.nlp
        self.name = seg.name + " via spaCy (tag+parse)"

    def segment(self, paragraph: str) -> list[list[str]]:
        return [[t.text for t in s] for s in self.nlp(paragraph).sents]


def build_paragraphs(pool: list[str], n_sentences: int, joiner: str, seed: int) -> list[str]:
    """Lines of a paragraph-per-line file with about ``n_sentences`` sentences."""
    rng = random.Random(seed)
    lines: list[str] = []
    used = 0
    i = 0
    while used < n_sentences:
        if i and i % 4 == 0:
            lines.append("")  # document boundary
        k = 1 if i % 8 == 7 else rng.randint(2, 5)  # every 8th paragraph: a headline
        start = rng.randrange(len(pool))
        lines.append(joiner.join(pool[(start + j) % len(pool)] for j in range(k)))
        used += k
        i += 1
    return lines


def english_paragraphs(n_sentences: int) -> list[str]:
    """GPL-3 paragraphs (unwrapped), cycled until about ``n_sentences`` sentences."""
    if not GPL3.is_file():
        raise SystemExit(f"{GPL3} not found: the English row needs a Debian base system")
    blocks = re.split(r"\n\s*\n", GPL3.read_text(encoding="utf-8"))
    paras = [" ".join(b.split()) for b in blocks if b.strip()]
    lines: list[str] = []
    used = 0
    for i in range(10**9):
        para = paras[i % len(paras)]
        if i and i % 6 == 0:
            lines.append("")
        lines.append(para)
        used += max(1, len(re.findall(r"[.!?](?:\s|$)", para)))
        if used >= n_sentences:
            break
    return lines


def turkish_paragraphs(n_sentences: int) -> list[str]:
    pool = []
    for block in read_conllu_blocks(turkish_treebank_path("web")):
        for line in block.split("\n"):
            if line.startswith("# text = "):
                pool.append(line[len("# text = ") :].strip())
    return build_paragraphs(pool, n_sentences, " ", seed=1)


def run_case(
    name: str,
    lang: str,
    lines: list[str],
    segmenter: Any,
    info: dict[str, Any],
    tmp: Path,
    **kwargs: Any,
) -> dict[str, Any]:
    src = tmp / f"{name}.txt"
    src.write_text("\n".join(lines) + "\n", encoding="utf-8")
    chars = sum(len(line) for line in lines)
    start = time.perf_counter()
    stats = segment_file(
        src,
        tmp / f"{name}.out",
        tmp / f"{name}.json",
        lang,
        segmenter,
        info,
        progress=False,
        **kwargs,
    )
    wall = time.perf_counter() - start
    return {
        "case": name,
        "language": lang,
        "tool": stats["tool"],
        "paragraphs": stats["paragraphs_in"],
        "sentences_in": stats["sentences_in"],
        "sentences_out": stats["sentences_out"],
        "tokens_out": stats["tokens_out"],
        "seconds": wall,
        "sentences_per_s": stats["sentences_in"] / wall,
        "chars_per_s": chars / wall,
        "min_paragraph_sentences": kwargs.get("min_paragraph_sentences", 2),
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sentences", type=int, default=20_000, help="input sentences per case")
    ap.add_argument("--out", type=Path, default=ROOT / "benchmarks/out/segment.json")
    ap.add_argument(
        "--spacy-fraction",
        type=float,
        default=0.1,
        help="share of --sentences for the slow spaCy reference row",
    )
    args = ap.parse_args(argv)
    n = args.sentences
    rows: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="bench_segment.") as tmpdir:
        tmp = Path(tmpdir)
        t0 = time.perf_counter()
        model = train_udpipe_model(turkish_treebank_blocks(400), tmp / "tr-bench.udpipe")
        train_s = time.perf_counter() - t0
        print(f"trained UDPipe model on 400 Turkish sentences in {train_s:.1f} s", flush=True)

        tr_lines = turkish_paragraphs(n)
        seg, info = make_segmenter("tr", udpipe_model=model)
        rows.append(run_case("udpipe-tr", "tr", tr_lines, seg, info, tmp))
        n_ref = max(100, int(n * args.spacy_fraction))
        ref = SpacyUDPipeFull(seg)  # type: ignore[arg-type]
        rows.append(
            run_case(
                "udpipe-tr-spacy-full",
                "tr",
                turkish_paragraphs(n_ref),
                ref,
                {"tool": ref.name, "requested_tool": "udpipe"},
                tmp,
            )
        )
        cases = [
            ("icu-en", "en", "icu", english_paragraphs(n), {}),
            ("icu-sw", "sw", None, build_paragraphs(SW, n, " ", seed=2), {}),
            (
                "icu-th",
                "th",
                None,
                build_paragraphs(TH, n, " ", seed=3),
                {"min_paragraph_sentences": 1},
            ),
            ("icu+jieba-zh", "zh", None, build_paragraphs(ZH, n, "", seed=4), {}),
            ("icu+fugashi-ja", "ja", None, build_paragraphs(JA, n, "", seed=5), {}),
        ]
        for name, lang, tool, lines, kwargs in cases:
            seg, info = make_segmenter(lang, tool=tool)
            rows.append(run_case(name, lang, lines, seg, info, tmp, **kwargs))
            print(f"{name}: {rows[-1]['sentences_per_s']:.0f} sentences/s", flush=True)

    print()
    header = f"{'case':<22}{'tool':<38}{'sent in':>9}{'sent out':>9}{'sent/s':>9}{'chars/s':>11}"
    print(header)
    print("-" * len(header))
    for r in rows:
        print(
            f"{r['case']:<22}{r['tool'][:37]:<38}{r['sentences_in']:>9}{r['sentences_out']:>9}"
            f"{r['sentences_per_s']:>9.0f}{r['chars_per_s']:>11.0f}"
        )
    result = {
        "benchmark": "segment_file throughput per tool",
        "sentences_per_case": n,
        "udpipe_training_seconds": train_s,
        "machine": {
            "platform": platform.platform(),
            "processor": platform.processor(),
            "python": platform.python_version(),
        },
        "rows": rows,
    }
    write_json(args.out, result)
    print(f"\nwrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
