"""The Snakemake report of the embedded run (e2e/conftest.py), built as `make run` builds
it and opened in headless Chromium (the Debian package; the browser test is skipped, with
the reason, where none is installed, unless $XLALIGN_REQUIRE_CHROMIUM is set).

The report is a React application with every result embedded as a data URI; what a
reader sees exists only once a browser has run it. A probe script is added to a copy of
the report: it walks the categories through the report's own `app` (as clicking them
does), opens every result in the report's views, waits for each image to load and reads
each HTML result in a same-origin frame, then writes what it found into the DOM as JSON,
which `--dump-dom` returns.
"""

from __future__ import annotations

import base64
import html
import json
import re
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from matplotlib import image as mpimg
from snakemake_runner import EMBEDDED_CONFIG_ARGS, LAPTOP_PROFILE, embedded_config, snakemake

from xlalign.reporting.browser import dump_dom, missing_reason, screenshot

#: Categories of the report by stage, and the table pages of each (workflow/report/README).
TABLE_PAGES = {
    "Lexical": "tables/tables.html",
    "Zero-shot": "tables/zeroshot.html",
    "Significance": "tables/statistics.html",
}

PROBE = r"""
(async function () {
  const probe = { done: false, menu: [], categories: {}, results: {}, appImages: [], errors: [] };
  const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
  const text = (el) => (el ? el.textContent.replace(/\s+/g, " ").trim() : "");
  const decode = (uri) => {
    const b64 = uri.slice(uri.indexOf(";base64,") + 8);
    return new TextDecoder().decode(Uint8Array.from(atob(b64), (c) => c.charCodeAt(0)));
  };
  const loaded = async (img) => {
    for (let i = 0; i < 200 && !img.complete; i++) await sleep(50);
    return { complete: img.complete, width: img.naturalWidth, height: img.naturalHeight };
  };
  const navTable = () => {
    const nav = document.querySelector("nav");
    return {
      headers: Array.from(nav.querySelectorAll("table th"), text).filter((t) => t),
      cells: Array.from(nav.querySelectorAll("table td"), text).filter((t) => t),
    };
  };
  try {
    for (let i = 0; i < 200 && typeof app === "undefined"; i++) await sleep(50);
    await sleep(200);
    probe.menu = Array.from(document.querySelectorAll("nav li span"), text);
    probe.description = text(document.querySelector(".prose"));
    for (const cat of Object.keys(categories)) {
      const subs = Object.keys(categories[cat]);
      probe.categories[cat] = {};
      for (const sub of subs) {
        app.setView({ navbarMode: "menu" });  // a fresh results list per (sub)category
        await sleep(100);
        if (subs.length == 1) {
          app.showCategory(cat);  // as a click on the category: its only subcategory
        } else {
          app.setView({ navbarMode: "subcategory", category: cat, subcategory: sub });
        }
        await sleep(200);
        probe.categories[cat][sub] = navTable();
      }
    }
    for (const [path, entry] of Object.entries(results)) {
      const rec = { mime: entry.mime_type, labels: entry.labels, caption: entry.caption };
      if (entry.mime_type.startsWith("image/")) {
        app.setView({ content: "img", contentPath: entry.data_uri, resultPath: path });
        await sleep(100);
        const img = Array.from(document.querySelectorAll("#app img")).find(
          (el) => el.getAttribute("src") === entry.data_uri);
        rec.view = img ? await loaded(img) : null;
      } else if (entry.mime_type === "text/html") {
        app.setView({ content: "html", contentPath: entry.data_uri, resultPath: path });
        await sleep(100);
        rec.view = { frame: Array.from(document.querySelectorAll("#app iframe")).some(
          (el) => el.getAttribute("src") === entry.data_uri) };
        // The report's frame holds a data: URL, which the report cannot read; the same
        // page in a srcdoc frame is same-origin, so its tables and images can be read.
        const frame = document.createElement("iframe");
        frame.style.width = "1200px";
        const ready = new Promise((r) => frame.addEventListener("load", r));
        frame.srcdoc = decode(entry.data_uri);
        document.body.appendChild(frame);
        await ready;
        const doc = frame.contentDocument;
        rec.page = {
          title: doc.title,
          text: text(doc.body).length,
          tables: Array.from(doc.querySelectorAll("table"), (t) =>
            Array.from(t.rows, (r) => Array.from(r.cells, text))),
          captions: Array.from(doc.querySelectorAll("p.caption"), text),
          images: [],
        };
        for (const img of doc.querySelectorAll("img")) rec.page.images.push(await loaded(img));
        frame.remove();
      }
      probe.results[path] = rec;
    }
    for (const img of document.querySelectorAll("#app img")) {
      probe.appImages.push(await loaded(img));
    }
  } catch (err) {
    probe.errors.push(String((err && err.stack) || err));
  }
  probe.done = true;
  const pre = document.createElement("pre");
  pre.id = "xlalign-probe";
  pre.textContent = JSON.stringify(probe);
  document.body.appendChild(pre);
})();
"""

#: Opens one result in the report's content view, as its eye button does.
SHOW = r"""
(async function () {
  const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
  for (let i = 0; i < 200 && typeof app === "undefined"; i++) await sleep(50);
  const path = PATH;
  app.showCategory(CATEGORY);
  await sleep(100);
  app.setView({ content: "html", contentPath: results[path].data_uri, resultPath: path });
})();
"""


def _with_script(report: Path, script: str, out: Path) -> Path:
    """A copy of the report with ``script`` run after the report's own scripts."""
    src = report.read_text(encoding="utf-8")
    end = src.rindex("</body>")
    out.write_text(f"{src[:end]}<script>\n{script}\n</script>\n{src[end:]}", encoding="utf-8")
    return out


def _embedded_var(page: str, name: str) -> Any:
    """A JSON variable the report embeds (``var results = {...};``)."""
    m = re.search(rf'<script id="{name}">\s*var \w+ = (.*?);\s*</script>', page, flags=re.S)
    assert m, f"report: no embedded `{name}` data"
    return json.loads(m.group(1))


def _decode(uri: str) -> str:
    return base64.b64decode(uri.split(";base64,", 1)[1]).decode("utf-8")


def _result(results: dict[str, Any], suffix: str) -> tuple[str, dict[str, Any]]:
    found = [(path, r) for path, r in results.items() if path.endswith(suffix)]
    assert len(found) == 1, f"report: results ending in {suffix}: {sorted(results)}"
    return found[0]


def _blank_fraction(png: Path) -> float:
    """The share of pixels of the most common colour (1.0: a blank page)."""
    pixels = mpimg.imread(png)[..., :3]
    flat = np.round(pixels.reshape(-1, 3) * 255).astype(np.int32)
    codes = flat[:, 0] * 65536 + flat[:, 1] * 256 + flat[:, 2]
    return float(np.bincount(codes).max() / codes.size)


@pytest.fixture(scope="module")
def report(embedded_run: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """`snakemake --report` with the run's own arguments (as `make run` ends)."""
    out = tmp_path_factory.mktemp("report") / "report.html"
    snakemake(
        embedded_run,
        *LAPTOP_PROFILE,
        "--cores",
        "2",
        "all",
        *EMBEDDED_CONFIG_ARGS,
        "--report",
        str(out),
        timeout=900,
    )
    assert out.is_file() and out.stat().st_size > 0
    return out


@pytest.fixture(scope="module")
def chromium() -> None:
    """Skips the browser tests, saying why, where no Chromium is installed (before the
    workflow runs for them); $XLALIGN_REQUIRE_CHROMIUM makes them fail instead."""
    if reason := missing_reason():
        pytest.skip(reason)


@pytest.fixture(scope="module")
def probe(chromium: None, report: Path) -> dict[str, Any]:
    page = _with_script(report, PROBE, report.with_name("probe.html"))
    dom = dump_dom(page, budget_ms=60_000, timeout=300)
    m = re.search(r'<pre id="xlalign-probe">(.*?)</pre>', dom, flags=re.S)
    assert m, "the probe wrote nothing: the report's scripts did not run"
    found = json.loads(html.unescape(m.group(1)))
    assert found["done"] and not found["errors"], found["errors"]
    return found


@pytest.mark.slow
def test_report_embeds_tables_with_captions_and_labels(report: Path) -> None:
    """The report's data, before any browser: categories by stage, captions rendered
    (no reStructuredText errors), labels, and the table pages themselves."""
    page = report.read_text(encoding="utf-8")
    categories = _embedded_var(page, "categories")
    results = _embedded_var(page, "results")
    for cat, suffix in TABLE_PAGES.items():
        assert cat in categories, sorted(categories)
        assert any(p.endswith(suffix) for p in categories[cat]["Tables"])
        _, res = _result(results, suffix)
        assert res["mime_type"] == "text/html"
        assert res["labels"] and res["labels"]["tables"]
        assert len(res["caption"]) > 100
    for path, res in results.items():
        assert "System Message" not in res["caption"], (path, res["caption"])
    desc = _embedded_var(page, "workflow-desc")
    assert f"xlalign: {embedded_config()['name']}" in desc
    assert "System Message" not in desc
    _, lexical = _result(results, TABLE_PAGES["Lexical"])
    assert "P@1" in _decode(lexical["data_uri"])
    # Issue 17's analyses: each with its table page and its figures.
    analyses = categories["Analyses"]
    for sub, table in {
        "Derived languages": "tables/derived.html",
        "Meta-pretraining": "tables/metapretrain.html",
        "Alignment": "tables/analysis.html",
    }.items():
        assert any(p.endswith(table) for p in analyses[sub]), analyses[sub]
        assert any(p.endswith(".png") for p in analyses[sub]), analyses[sub]
    _, derived = _result(results, "tables/derived.html")
    assert "Spearman" in _decode(derived["data_uri"])


@pytest.mark.slow
def test_report_in_chromium_shows_categories_tables_and_images(probe: dict[str, Any]) -> None:
    cfg = embedded_config()
    menu = {"Workflow", "Lexical", "Zero-shot", "Significance", "Figures", "Analyses"}
    assert menu <= set(probe["menu"]), probe["menu"]
    assert f"xlalign: {cfg['name']}" in probe["description"]
    # The results list of each category: the labels as columns, one row per result.
    lexical = probe["categories"]["Lexical"]["Tables"]
    assert lexical["headers"][:2] == ["tables", "seeds"]
    assert ", ".join(map(str, cfg["seeds"])) in lexical["cells"]
    zeroshot = probe["categories"]["Zero-shot"]["Tables"]
    assert "fine-tuning seeds" in zeroshot["headers"]

    results = probe["results"]
    _, lex = _result(results, TABLE_PAGES["Lexical"])
    _, zs = _result(results, TABLE_PAGES["Zero-shot"])
    for res in (lex, zs):
        assert res["view"]["frame"]  # shown in the report's frame
        assert res["page"]["tables"] and res["page"]["captions"]
        for table in res["page"]["tables"]:
            assert len(table) >= 2 and len(table[0]) >= 2  # a header and at least a row
            assert all(len(row) == len(table[0]) for row in table)
    assert any("P@1" in c for c in lex["page"]["captions"])
    assert lex["page"]["tables"][0][0][0] == "Model"
    # The Table 3 shape comes first: the configured encoder is a row, with numbers in it.
    table3 = zs["page"]["tables"][0]
    rows = {row[0]: row[1:] for row in table3[1:]}
    encoder = cfg["encoder"]["name"]
    assert encoder in rows, sorted(rows)
    assert any(re.match(r"^\d+\.\d+", cell) for cell in rows[encoder]), rows[encoder]

    # No broken image anywhere: every image result in the report's image view, every
    # image inside an HTML result, and the report's own (its logo).
    for path, res in results.items():
        if res["mime"].startswith("image/"):
            assert res["view"] and res["view"]["width"] > 0, (path, res["view"])
        if "page" in res:
            assert res["page"]["text"] > 0, path  # an HTML result that shows something
            for img in res["page"]["images"]:
                assert img["width"] > 0, (path, img)
    assert probe["appImages"] and all(img["width"] > 0 for img in probe["appImages"])
    # The figures: every plot of the run is an image result that loaded.
    figures = [p for p, r in results.items() if "/plots/" in p and r["mime"] == "image/png"]
    assert len(figures) >= 5, sorted(results)
    # The statistics page: the Table 3 analogue with the original encoder's row.
    _, stats = _result(results, TABLE_PAGES["Significance"])
    assert any(row[0] == cfg["encoder"]["name"] for t in stats["page"]["tables"] for row in t)


@pytest.mark.slow
def test_report_screenshots_are_not_blank(chromium: None, report: Path) -> None:
    """The first page (the description, the rule graph, the menu) and the zero-shot
    tables as the report shows them; each saved beside the report."""
    first = screenshot(report, report.with_name("report-first-page.png"), (1400, 900))
    assert _blank_fraction(first) < 0.97
    results = _embedded_var(report.read_text(encoding="utf-8"), "results")
    path, _ = _result(results, TABLE_PAGES["Zero-shot"])
    script = SHOW.replace("PATH", json.dumps(path)).replace("CATEGORY", json.dumps("Zero-shot"))
    view = _with_script(report, script, report.with_name("show-zeroshot.html"))
    shot = screenshot(view, report.with_name("report-zeroshot.png"), (1400, 900))
    assert _blank_fraction(shot) < 0.97
