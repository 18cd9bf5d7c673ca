"""`mtok inspect FILE`: dump a `.mtok`: header lists, section table, components, model summary,
added tokens, tables, chat template, post-processing per runtime, warnings."""

# function-local imports: a command's modules load when the command runs, so `mtok --help` and every
# other command start without them (tests/acceptance/test_startup_imports.py)

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated, Optional

import typer

from ..dump.sanitize import clip, show
from ..errors import InputError


def inspect(
    file: Annotated[Path, typer.Argument(help="A .mtok or legacy tokenizer.txt file, or an MNN model folder "
                                         "(config.json / llm_config.json): then also which tokenizer file, "
                                         "template and EOS the engine will use.")],
    as_json: Annotated[bool, typer.Option("--json", help="Print everything as JSON (stable keys).")] = False,
    section: Annotated[Optional[str], typer.Option(help="Print one section in full: header, normalizer, "
                                                   "pre_tokenizer, vocab, merges, scores, decoder, "
                                                   "added_tokens, chat_template, post_processor.")] = None,
    limit: Annotated[int, typer.Option(help="Entries shown at each end of long lists.")] = 5,
    specials: Annotated[bool, typer.Option("--specials", help="Also measure on the MNN runtime which special and "
                                           "added tokens it matches when their text is typed inside user text, and "
                                           "which end a turn, start a role or call a tool (what an app must "
                                           "escape).")] = False,
):
    """Show what a .mtok (or legacy tokenizer.txt) holds and how MNN runtimes will use it."""
    from ..deployed_file import inspect as read
    from ..dump.jsonify import SECTIONS
    from ..dump.jsonify import section as one_section
    from .console import out

    if section is not None and section not in SECTIONS:
        raise InputError(f"--section {section!r}: choose one of {', '.join(SECTIONS)}")
    result = read(file, limit=limit)
    if section is not None:
        value = one_section(result.tokenizer, result.layout, section)
        if as_json:
            out.print_json(json.dumps(value, ensure_ascii=False))
        elif isinstance(value, list):  # TSV: plain writes keep the tabs
            for row in value:
                if not out.quiet:
                    sys.stdout.write("\t".join(show(str(x)) for x in (row.values() if isinstance(row, dict) else row))
                                     + "\n")
        else:
            out.print(value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, indent=1),
                      markup=False)
        return
    rows = _surface(result) if specials else None
    if as_json:
        info = result.info if rows is None else {**result.info, "special_tokens": [r.to_json() for r in rows]}
        out.print_json(json.dumps(info, ensure_ascii=False))
        return
    _print(result.info, result.path)
    if rows is not None:
        out.print("")
        print_surface(rows)


def _surface(result):
    """The special-token surface of the inspected file on the runtime (`verify.surface`), with the
    template the engine renders (an MNN model folder's jinja block when it has one)."""
    from ..verify.surface import measure

    jinja = (result.info.get("engine") or {}).get("jinja") or {}
    return measure(result.path, result.tokenizer, template=jinja.get("chat_template"))


def _print(info: dict, file: Path):
    from rich.table import Table
    from rich.text import Text

    from ..dump.render import size
    from .console import out

    def heading(s):
        out.print(f"\n[bold]{s}[/]")

    def line(s):
        out.print(Text(s))

    from rich.markup import escape

    out.print(f"[bold]{escape(str(file))}[/]  {size(info['file']['size'])}, "
              f"header {info['file']['header_size']} bytes", markup=True, highlight=False)
    line(f"sha256 {info['file']['sha256']}")
    if "engine" in info:
        e = info["engine"]
        line(f"engine: loads {e['tokenizer_file']} (named by {e['tokenizer_file_from']}); chat template from "
             f"{e['template_from']}, EOS from {e['eos_from']}"
             + (f"; template context keys: {', '.join(e['context'])}" if e.get("context") else ""))
        if e["jinja"]:
            same = "equals" if e["template_equals_embedded"] else "DIFFERS from"
            eos = "equals" if e["eos_equals_embedded"] else "DIFFERS from"
            line(f"  llm_config.json jinja: chat_template {same} the embedded one, eos {eos} the embedded one "
                 "(the engine uses the jinja block)")
    m = info["file"]["manifest"]
    if m is None:
        line("manifest: none beside the file")
    else:
        state = "matches" if m["matches"] else "DOES NOT MATCH (the file changed after export)"
        line(f"manifest: {m['path']} {state}; target {m['target']}, exported by mtok-export {m['tool_version']}, "
             f"verification {m['verification']}")
    heading("header lists")
    for k, items in info["header"].items():
        shown = " ".join(f"{show(x['text'] or '?')}({x['id']})" for x in items[:20])
        line(f"  {k:8} {len(items):4}  {shown}{' …' if len(items) > 20 else ''}")
    heading("sections")
    t = Table("section", "offset", "size", "holds", box=None, padding=(0, 2))
    for s in info["sections"]:
        t.add_row(s["name"], f"0x{s['offset']:08x}", f"{s['size']:,}" if s["present"] else "absent",
                  Text(s["holds"]))  # Text: the layout's [brackets] are not markup
    out.print(t)
    heading("components")
    for k in ("normalizer", "pre_tokenizer", "decoder", "post_processor"):
        line(f"  {k}:")
        _tree(info[k], "    ", line)
    m = info["model"]
    heading(f"model {m['type']}")
    for k, v in m.items():
        if k in ("type",) or k.endswith(("_first", "_last")):
            continue
        line(f"  {k}: {v}")
    for k in ("vocab_first", "vocab_last", "merges_first", "merges_last"):
        if m.get(k):
            line(f"  {k.replace('_', ' ')}: " + ", ".join(show(" ".join(str(x) for x in e)) for e in m[k]))
    heading(f"added tokens ({len(info['added_tokens'])})")
    for a in info["added_tokens"][:40]:
        flags = " ".join(k for k in ("special", "lstrip", "rstrip") if a[k])
        line(f"  {a['id']:>8}  {show(a['content'])}  {flags}")
    if len(info["added_tokens"]) > 40:
        line(f"  … +{len(info['added_tokens']) - 40} more (--section added_tokens)")
    if info["tables"]:
        heading("normalization tables")
        for tb in info["tables"]:
            same = ("equals" if tb["differences_from_it"] == 0
                    else f"differs in {tb['differences_from_it']:,} entries from")
            line(f"  {tb['normalizer']}.{tb['field']}: {tb['entries']:,} entries, {tb['bytes']:,} bytes; {same} "
                 f"{tb['closest_form']} of Unicode {tb['unicode_version_here']} (HF tokenizers' version, "
                 f"as this tool builds it from {tb['unicode_data_here']})")
    c = info["chat"]
    heading("chat template")
    line(f"  {c['template_chars']:,} chars; bos \"{show(c['bos_token'])}\", eos \"{show(c['eos_token'])}\", "
         f"clean_up_tokenization_spaces {c['clean_up_tokenization_spaces']}")
    for ln in c["template_head"]:
        line("  | " + clip(show(ln), 100))
    p = info["post_processing"]
    heading("post-processing of encode()")
    line(f"  MNN 3.5/3.6: {show(p['mnn_3_6'])}   (header prefix only; the program is ignored)")
    line(f"  MNN HEAD:    {show(p['mnn_head'])}   (prefix, then the program around everything)")
    if info["warnings"]:
        heading("warnings")
        for w in info["warnings"]:
            out.print(Text(f"  ! {w}", style="yellow"))


def _tree(node, indent: str, line):
    if node is None:
        line(indent + "none")
        return
    kids_key = next((k for k in ("normalizers", "pretokenizers", "decoders", "processors") if k in node), None)
    def value(v):
        if isinstance(v, str):
            return '"' + show(v, marks=True) + '"'
        if isinstance(v, dict) and len(v) == 1 and next(iter(v)) in ("Regex", "String"):
            (k, pattern), = v.items()
            return f"{k}({show(pattern, marks=True)})"
        return show(json.dumps(v, ensure_ascii=False))

    params = ", ".join(f"{k}={clip(value(v), 80)}" for k, v in node.items() if k not in ("type", kids_key))
    line(f"{indent}{node['type']}" + (f"({params})" if params else ""))
    kids = node.get(kids_key, []) if kids_key else []
    for child in kids[:6]:
        _tree(child, indent + "  ", line)
    if len(kids) > 6:
        kinds = sorted({k["type"] for k in kids[6:]})
        line(f"{indent}  … {len(kids) - 6} more ({', '.join(kinds)}; --section {'normalizer' if kids_key == 'normalizers' else kids_key} or --json for all)")


def print_surface(rows, title: str = "special tokens typed inside user text") -> None:
    """The special-token table (`verify.surface`): the rows with a role, a stop or a disagreement,
    then a line counting the rest."""
    from rich.table import Table
    from rich.text import Text

    from ..verify.surface import summary
    from .console import out

    if not rows:
        return
    keep, rest = summary(rows)
    yes = lambda v: "-" if v is None else "matched" if v else "text"  # noqa: E731
    t = Table("id", "token", "runtime", "source", "stop", "role", box=None, padding=(0, 2), title=title,
              title_justify="left")
    for r in keep:  # Text cells: a token's text is never markup (`[/INST]`)
        t.add_row(*(Text(x) for x in (str(r.id), clip(show(r.text), 40), yes(r.runtime), yes(r.source),
                                      "stop" if r.stop else "", r.role)),
                  style="bold" if r.runtime and r.role == "turn end" else None)
    out.print(t)
    if rest:
        out.print(f"  {rest}", markup=False)
