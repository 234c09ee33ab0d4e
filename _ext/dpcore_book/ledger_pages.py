"""The verification ledger and errata pages, filled in from the ledger records of this build.

Directives
----------
``{dpcore-ledger}``
    Every claim declared in ``dpbook/claims/*.toml``, chapter by chapter: the
    statement, the seed and passage, the symbolic and the numeric check, the
    result recorded *in this build*, and a link to the cell that checked it.
``{dpcore-errata}``
    Every declared erratum (``kind = "erratum"``): the seed file and passage,
    what the seed says, the correct statement, and a link to the numeric
    demonstration.

How the results get there
-------------------------
Chapters are notebooks that myst-nb executes while Sphinx *reads* them; each
``dpbook.ledger.record(...)`` call appends a JSON line to
``$DPCORE_LEDGER_DIR/<chapter>.jsonl`` (this extension sets that variable to
``<build>/_build/ledger`` when the caller has not). The pages' structure comes
from the declarations at read time; the results are filled in at
``doctree-resolved``, in the write phase, which Sphinx starts only after every
document has been read (and so every notebook executed). A chapter whose
records are missing (a cleared ledger folder with a cached environment) is
marked outdated so that it is executed again; the ledger pages are re-written
on every build. A declared claim without a record, or a failed record, is a
build warning (so ``-W`` fails the build).

Each ``record`` call displays a badge with ``id="ledger-<slug>"``
(:func:`dpbook.ledger.anchor`); the extension notes which anchors each chapter
page really contains and links to the anchor when it is there, else to the
chapter page.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

from docutils import nodes
from sphinx.application import Sphinx
from sphinx.util import logging
from sphinx.util.docutils import SphinxDirective

logger = logging.getLogger(__name__)

_ANCHOR_RE = re.compile(r'id="(ledger-[a-z0-9-]+)"')


def _on_config_inited(app: Sphinx, config: Any) -> None:
    if not os.environ.get("DPCORE_LEDGER_DIR"):
        os.environ["DPCORE_LEDGER_DIR"] = str(Path(app.outdir).parent / "ledger")


def _ledger_dir() -> Path:
    return Path(os.environ["DPCORE_LEDGER_DIR"])


def _declared() -> list[Any]:
    from dpbook import ledger

    ledger.claims.cache_clear()
    return list(ledger.claims().values())


def _results() -> dict[str, dict[str, Any]]:
    from dpbook import ledger

    d = _ledger_dir()
    return ledger.load_results(d) if d.is_dir() else {}


def _chapter_doc(chapter: str) -> str:
    return f"chapters/{chapter}"


def _chapter_title(srcdir: Path, chapter: str) -> str:
    path = srcdir / "chapters" / f"{chapter}.ipynb"
    try:
        nb = json.loads(path.read_text(encoding="utf-8"))
        for cell in nb.get("cells", []):
            if cell.get("cell_type") == "markdown":
                for line in "".join(cell.get("source", "")).splitlines():
                    if line.startswith("# "):
                        return line[2:].strip()
    except (OSError, ValueError):
        pass
    return chapter


def _title_nodes(env: Any, chapter: str) -> list[nodes.Node]:
    """The chapter's title as nodes (math included) if Sphinx has read it, else its heading text."""
    title = env.titles.get(_chapter_doc(chapter))
    if title is not None and title.children:
        return [child.deepcopy() for child in title.children]
    return [nodes.Text(_chapter_title(Path(env.srcdir), chapter))]


def _seed_label(srcdir: Path, seed: str) -> str:
    """``seed 000 (title)`` from ``dpbook/claims/seeds.toml``: nothing outside the repository is read."""
    if not seed:
        return "(no seed)"
    from dpbook.ledger import seeds

    known = seeds().get(seed)
    return f"seed {seed} ({known['title']})" if known else f"seed {seed}"


class ledger_pending(nodes.General, nodes.Element):
    """Placeholder filled in at ``doctree-resolved`` with this build's results."""


def _visit_skip(self: Any, node: nodes.Node) -> None:  # never reaches a writer
    raise nodes.SkipNode


def _pending(what: str, claim_id: str = "", chapter: str = "") -> ledger_pending:
    return ledger_pending("", what=what, claim_id=claim_id, chapter=chapter)


def _field(name: str, body: nodes.Node | str) -> nodes.field:
    if isinstance(body, str):
        body = nodes.paragraph("", body)
    elif not isinstance(body, (nodes.paragraph, nodes.Structural, nodes.container)) and isinstance(body, nodes.Inline):
        body = nodes.paragraph("", "", body)
    return nodes.field("", nodes.field_name("", name), nodes.field_body("", body))


def _para(*children: nodes.Node | str) -> nodes.paragraph:
    para = nodes.paragraph()
    for child in children:
        para += nodes.Text(child) if isinstance(child, str) else child
    return para


class _LedgerBase(SphinxDirective):
    has_content = False
    kind: str = "claim"

    def _common(self) -> tuple[list[Any], Path]:
        env = self.env
        srcdir = Path(env.srcdir)
        from dpbook import ledger

        for path in sorted(ledger.CLAIMS_DIR.glob("*.toml")):
            env.note_dependency(str(path))
        if not hasattr(env, "dpcore_ledger_docs"):
            env.dpcore_ledger_docs = set()
        env.dpcore_ledger_docs.add(env.docname)
        return _declared(), srcdir


class LedgerDirective(_LedgerBase):
    """``{dpcore-ledger}``: the full verification ledger."""

    def run(self) -> list[nodes.Node]:
        declared, srcdir = self._common()
        chapters = sorted({c.chapter for c in declared})
        out: list[nodes.Node] = []

        # summary table
        table = nodes.table(classes=["dpcore-ledger-summary"])
        tgroup = nodes.tgroup(cols=5)
        table += tgroup
        for width in (40, 12, 12, 12, 12):
            tgroup += nodes.colspec(colwidth=width)
        head = nodes.thead()
        tgroup += head
        row = nodes.row()
        for text in ("Chapter", "Claims", "Errata", "Recorded", "Passed"):
            row += nodes.entry("", nodes.paragraph("", text))
        head += row
        body = nodes.tbody()
        tgroup += body
        for chapter in [*chapters, ""]:
            mine = [c for c in declared if not chapter or c.chapter == chapter]
            row = nodes.row()
            if chapter:
                ref = nodes.reference(
                    "", "", *_title_nodes(self.env, chapter), internal=True, refid=f"ledger-{chapter}"
                )
                row += nodes.entry("", nodes.paragraph("", "", ref))
            else:
                row += nodes.entry("", nodes.paragraph("", "", nodes.strong("", "All chapters")))
            row += nodes.entry("", nodes.paragraph("", str(sum(c.kind == "claim" for c in mine))))
            row += nodes.entry("", nodes.paragraph("", str(sum(c.kind == "erratum" for c in mine))))
            row += nodes.entry("", nodes.paragraph("", "", _pending("recorded", chapter=chapter)))
            row += nodes.entry("", nodes.paragraph("", "", _pending("passed", chapter=chapter)))
            body += row
        out.append(table)

        for chapter in chapters:
            section = nodes.section(ids=[f"ledger-{chapter}"], names=[f"ledger-{chapter}"])
            section += nodes.title("", "", *_title_nodes(self.env, chapter))
            section += _para(
                "Claims checked in the chapter ",
                _pending("chapter-link", chapter=chapter),
                f" (notebook chapters/{chapter}.ipynb).",
            )
            for claim in (c for c in declared if c.chapter == chapter):
                section += _claim_block(claim, srcdir, in_errata=False)
            out.append(section)
        return out


class ErrataDirective(_LedgerBase):
    """``{dpcore-errata}``: every declared erratum of the seed files."""

    def run(self) -> list[nodes.Node]:
        declared, srcdir = self._common()
        errata = [c for c in declared if c.kind == "erratum"]
        if not errata:
            return [_para("No erratum has been declared yet.")]
        out: list[nodes.Node] = []
        seeds = sorted({c.seed for c in errata})
        for seed in seeds:
            label = _seed_label(srcdir, seed)
            section = nodes.section(ids=[f"errata-seed-{seed or 'none'}"], names=[f"errata-seed-{seed or 'none'}"])
            section += nodes.title("", label[0].upper() + label[1:])
            for claim in (c for c in errata if c.seed == seed):
                section += _claim_block(claim, srcdir, in_errata=True)
            out.append(section)
        return out


def _claim_block(claim: Any, srcdir: Path, in_errata: bool) -> nodes.container:
    from dpbook import ledger

    slug = ledger.anchor(claim.id)[len("ledger-") :]
    box = nodes.container(
        ids=[("erratum-" if in_errata else "claim-") + slug],
        classes=["dpcore-claim", f"dpcore-claim-{claim.kind}"],
    )
    header = nodes.paragraph(classes=["dpcore-claim-header"])
    header += nodes.literal("", claim.id)
    if claim.kind == "erratum" and not in_errata:
        header += nodes.Text(" (erratum)")
    header += nodes.Text(" — ")
    header += nodes.Text(claim.statement)
    box += header
    fields = nodes.field_list()
    seed_text = f"{_seed_label(srcdir, claim.seed)}: «{claim.passage}»" if claim.seed else claim.passage or "—"
    fields += _field("Source", seed_text)
    if claim.kind == "erratum":
        fields += _field("The seed says", claim.seed_says)
        fields += _field("Correct statement", claim.correct)
    fields += _field("Result", _para(_pending("result", claim_id=claim.id)))
    fields += _field("Evidence", _pending("evidence", claim_id=claim.id))
    link_para = _para(_pending("claim-link", claim_id=claim.id, chapter=claim.chapter))
    if in_errata:
        link_para += nodes.Text(" · ")
        link_para += _pending("ledger-link", claim_id=claim.id)
    fields += _field("Demonstration" if claim.kind == "erratum" else "Checked in", link_para)
    box += fields
    return box


# --------------------------------------------------------------------------- env bookkeeping
def _on_doctree_read(app: Sphinx, doctree: nodes.document) -> None:
    env = app.env
    if not hasattr(env, "dpcore_anchors"):
        env.dpcore_anchors = {}
    found: set[str] = set()
    for raw in doctree.findall(nodes.raw):
        if "html" in raw.get("format", ""):
            found.update(_ANCHOR_RE.findall(raw.astext()))
    if found:
        env.dpcore_anchors[env.docname] = found
    else:
        env.dpcore_anchors.pop(env.docname, None)


def _on_purge(app: Sphinx, env: Any, docname: str) -> None:
    getattr(env, "dpcore_anchors", {}).pop(docname, None)
    getattr(env, "dpcore_ledger_docs", set()).discard(docname)
    if docname.startswith("chapters/"):
        # the chapter is about to be executed again: drop its old records
        stale = _ledger_dir() / f"{docname.split('/', 1)[1]}.jsonl"
        stale.unlink(missing_ok=True)


def _on_merge(app: Sphinx, env: Any, docnames: set[str], other: Any) -> None:
    env.dpcore_anchors = {**getattr(env, "dpcore_anchors", {}), **getattr(other, "dpcore_anchors", {})}
    env.dpcore_ledger_docs = getattr(env, "dpcore_ledger_docs", set()) | getattr(other, "dpcore_ledger_docs", set())


def _on_get_outdated(app: Sphinx, env: Any, added: set[str], changed: set[str], removed: set[str]) -> list[str]:
    extra = set(getattr(env, "dpcore_ledger_docs", set()))
    have = {p.stem for p in _ledger_dir().glob("*.jsonl")} if _ledger_dir().is_dir() else set()
    for chapter in {c.chapter for c in _declared()}:
        doc = _chapter_doc(chapter)
        if chapter not in have and doc in env.found_docs and doc not in added:
            extra.add(doc)
    return sorted(extra - removed)


# --------------------------------------------------------------------------- fill in
def _on_doctree_resolved(app: Sphinx, doctree: nodes.document, docname: str) -> None:
    pendings = list(doctree.findall(ledger_pending))
    if not pendings:
        return
    # the evidence typeset below is math the page did not have when it was read: tell the math domain, so
    # that MathJax is loaded on this page (the errata page had no other math)
    app.env.get_domain("math").data["has_equations"][docname] = True
    from dpbook import ledger

    declared = {c.id: c for c in _declared()}
    results = _results()
    anchors = getattr(app.env, "dpcore_anchors", {})
    builder = app.builder
    warned: set[str] = set()

    def uri(target_doc: str, frag: str = "") -> str:
        try:
            base = builder.get_relative_uri(docname, target_doc)
        except Exception:  # pragma: no cover - builders without URIs
            base = ""
        return base + (f"#{frag}" if frag else "")

    for node in pendings:
        what = node["what"]
        cid = node["claim_id"]
        chapter = node["chapter"]
        new: nodes.Node
        if what in ("recorded", "passed"):
            ids = [c.id for c in declared.values() if not chapter or c.chapter == chapter]
            if what == "recorded":
                n = sum(i in results for i in ids)
            else:
                n = sum(bool(results.get(i, {}).get("passed")) for i in ids)
            new = nodes.Text(f"{n} / {len(ids)}")
        elif what == "chapter-link":
            doc = _chapter_doc(chapter)
            if doc in app.env.all_docs:
                new = nodes.reference("", "", *_title_nodes(app.env, chapter), internal=True, refuri=uri(doc))
            else:
                new = nodes.literal("", doc)
        elif what == "claim-link":
            doc = _chapter_doc(chapter)
            aid = ledger.anchor(cid)
            if doc not in app.env.all_docs:
                new = nodes.Text(f"chapters/{chapter}.ipynb (not in this book)")
            elif aid in anchors.get(doc, set()):
                new = nodes.reference(
                    "",
                    "",
                    *_title_nodes(app.env, chapter),
                    nodes.Text(", the cell that checks it"),
                    internal=True,
                    refuri=uri(doc, aid),
                )
            else:
                new = nodes.reference("", "", *_title_nodes(app.env, chapter), internal=True, refuri=uri(doc))
        elif what == "ledger-link":
            ledger_docs = sorted(getattr(app.env, "dpcore_ledger_docs", set()) - {docname})
            ledger_doc = next((d for d in ledger_docs if d.endswith("ledger")), ledger_docs[0] if ledger_docs else "")
            if ledger_doc:
                new = nodes.reference(
                    "",
                    "its ledger entry",
                    internal=True,
                    refuri=uri(ledger_doc, "claim-" + ledger.anchor(cid)[len("ledger-") :]),
                )
            else:
                new = nodes.Text("")
        elif what == "result":
            claim = declared.get(cid)
            rec = results.get(cid)
            if rec is None:
                new = nodes.inline("", "not recorded in this build", classes=["dpcore-result-missing"])
                if cid not in warned:
                    warned.add(cid)
                    logger.warning(
                        f"ledger: claim {cid!r} is declared (chapter {claim.chapter if claim else '?'}) "
                        "but no notebook recorded it in this build",
                        type="dpcore",
                        subtype="ledger",
                        location=docname,
                    )
            else:
                ok = bool(rec["passed"])
                if ok:
                    label = "demonstrated" if claim is not None and claim.kind == "erratum" else "passed"
                    new = nodes.inline("", "", classes=["dpcore-result-pass"])
                    new += nodes.strong("", f"✔ {label}")
                else:
                    new = nodes.inline("", "", classes=["dpcore-result-fail"])
                    new += nodes.strong("", "✘ FAILED")
                    if cid not in warned:
                        warned.add(cid)
                        logger.warning(
                            f"ledger: claim {cid!r} FAILED in this build",
                            type="dpcore",
                            subtype="ledger",
                            location=docname,
                        )
                for reason in rec.get("reasons", []):
                    new += nodes.Text(" — ")
                    new += nodes.inline("", reason, classes=["dpcore-evidence"])
        elif what == "evidence":
            new = _evidence_nodes(declared.get(cid), results.get(cid))
        else:  # pragma: no cover
            new = nodes.Text("")
        node.replace_self(new)


_KIND_NAMES = {
    "symbolic": "symbolic (sympy)",
    "exact": "exact computation",
    "numeric": "numeric (floating point)",
    "monte-carlo": "Monte Carlo",
}


def _evidence_nodes(claim: Any, rec: dict[str, Any] | None) -> nodes.Node:
    """The kinds of evidence, each piece of evidence and each control, as this build computed them."""
    if rec is None:
        return nodes.paragraph("", "no evidence recorded in this build")
    box = nodes.container(classes=["dpcore-evidence-list"])
    kinds = rec.get("kinds", [])
    text = "Kinds of evidence: " + ", ".join(_KIND_NAMES.get(k, k) for k in kinds)
    if "symbolic" not in kinds:
        text += "; this claim has no symbolic part"
    if rec.get("false_alarm"):
        text += f"; Monte Carlo false-alarm probability <= {rec['false_alarm']:.2g} (union bound)"
    box += nodes.paragraph("", text + ".")
    erratum = claim is not None and claim.kind == "erratum"
    items = nodes.bullet_list()
    pieces = [(e, False) for e in rec.get("evidence", [])] + [(c, True) for c in rec.get("controls", [])]
    for entry, is_control in pieces:
        ok = (not entry.get("holds")) if is_control else bool(entry.get("holds"))
        label = ""
        if is_control:
            who = "the seed's statement" if erratum else "negative control"
            label = who + (", rejected" if ok else ", NOT rejected")
        para = nodes.paragraph()
        para += nodes.strong("", "✔ " if ok else "✘ ")
        if label:
            para += nodes.emphasis("", label + ": ")
        para += nodes.Text(f"{entry.get('what', '')} [{_KIND_NAMES.get(entry.get('kind', ''), '')}]: ")
        if entry.get("latex"):  # sympy evidence: typeset (the text form stays in the JSON record)
            para += nodes.math(entry["latex"], entry["latex"])
        else:
            para += nodes.inline("", entry.get("detail", ""), classes=["dpcore-evidence"])
        items += nodes.list_item("", para)
    box += items
    return box


def setup(app: Sphinx) -> None:
    app.add_node(ledger_pending, html=(_visit_skip, None), latex=(_visit_skip, None), text=(_visit_skip, None))
    app.add_directive("dpcore-ledger", LedgerDirective)
    app.add_directive("dpcore-errata", ErrataDirective)
    app.connect("config-inited", _on_config_inited)
    app.connect("doctree-read", _on_doctree_read)
    app.connect("env-purge-doc", _on_purge)
    app.connect("env-merge-info", _on_merge)
    app.connect("env-get-outdated", _on_get_outdated)
    app.connect("doctree-resolved", _on_doctree_resolved)
