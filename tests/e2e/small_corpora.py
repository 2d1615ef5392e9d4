"""Small corpora for the end-to-end runs: a few sentences per language, and documents
made of them whose paragraphs the segment stage's filters can count."""

from __future__ import annotations

EN = [
    "The committee met on Tuesday to discuss the new budget for the city library.",
    "Several members argued that the reading rooms needed longer opening hours.",
    "Others wanted to spend the money on digital books and faster computers.",
    "After a long debate, they agreed to fund both plans over the next two years.",
    "The river had risen sharply during the night after three days of heavy rain.",
    "Farmers along the valley moved their animals to higher ground before dawn.",
    "By noon the water had covered the main road between the two villages.",
]
ZH = [
    "我们昨天下午在图书馆里讨论了这个新的研究计划。",
    "这个城市的公共交通系统在过去十年里发展得非常快。",
    "他每天早上都会在公园里跑步，然后去公司上班。",
    "老师告诉学生们明天的考试会比上次的更难一些。",
]
JA = [
    "私は昨日の午後に図書館で新しい研究計画について友達と話しました。",
    "この町の公共交通機関はここ十年でとても便利になりました。",
    "彼は毎朝公園を走ってから会社に行くことにしています。",
    "先生は学生たちに明日の試験は前回よりも難しいと言いました。",
]
TL = [
    "Ang komite ay nagpulong noong Martes upang pag-usapan ang bagong badyet ng aklatan.",
    "Maraming miyembro ang nagsabi na kailangan ng mas mahabang oras ang silid-aralan.",
    "Ang ilog ay tumaas nang husto sa gabi matapos ang tatlong araw ng malakas na ulan.",
    "Inilipat ng mga magsasaka ang kanilang mga hayop sa mas mataas na lugar bago mag-umaga.",
]


def corpus_text(sentences: list[str], n_docs: int = 12) -> str:
    """``n_docs`` documents of three two-sentence paragraphs and a one-sentence one."""
    docs = []
    for d in range(n_docs):
        pars = []
        for p in range(3):
            k = (d + p) % len(sentences)
            pars.append(" ".join(sentences[k : k + 2] if k + 1 < len(sentences) else sentences[:2]))
        pars.append(sentences[(d * 3) % len(sentences)])  # a one-sentence paragraph: dropped
        docs.append("\n".join(pars))
    return "\n\n".join(docs) + "\n"


def turkish_raw_sentences(n: int) -> list[str]:
    """Raw text of treebank sentences the model was not trained on (the web section)."""
    from xlalign.corpus.udpipe import turkish_treebank_blocks

    texts = []
    for block in turkish_treebank_blocks(n * 3, section="web"):
        for line in block.splitlines():
            if line.startswith("# text = ") and len(line.split()) >= 12:
                texts.append(line[len("# text = ") :].strip())
    return texts[:n]
