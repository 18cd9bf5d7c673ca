"""The checks `mtok doctor` runs on a deployed file without its source: the runtime it needs, the
chat template the engine will render (linted for MNN's Jinja subset), the stop ids against the
template's turn end and the folder's own llm_config, and BOS handling.  The structure was checked
before (the strict reader); each check here reads only the file and its folder."""

from __future__ import annotations

from ..chat.lint import lint_template
from ..ir import normalizers as N
from ..ir.walk import walk
from ..model_folder import ModelFolder
from ..target_type import MNN_JINJA
from ..verify.surface import TURN_END
from .finding import Finding


def template_of(tok, folder: ModelFolder | None) -> tuple[str, str, str]:
    """(template text, its EOS text, where the engine takes them from): the folder's llm_config.json
    jinja block wins over what the file embeds (spec 2.8)."""
    jinja = folder.jinja if folder is not None else None
    if jinja is not None:
        return jinja["chat_template"], str(jinja.get("eos") or ""), "llm_config.json jinja"
    return tok.chat.text, tok.chat.eos_token, "the file"


def runtime_needed(tok, legacy: bool) -> Finding:
    if legacy:
        return Finding("runtime", "info", "a legacy tokenizer.txt: every MNN release loads it (no chat template "
                       "or normalizer travels in it)")
    strip = any(isinstance(n, N.Strip) for n in walk(tok.normalizer))
    need = "3.6" if strip else "3.5"
    return Finding("runtime", "info", f"a .mtok: needs MNN >= {need}" + (" (its normalizer uses Strip)" if strip else "")
                   + "; only MNN's main branch runs its post program (appended EOS/SEP)")


def check(tok, folder: ModelFolder | None, legacy: bool) -> list[Finding]:
    """The static findings, in the order they are shown."""
    out = [runtime_needed(tok, legacy)]
    names = {t.id: t.content for t in tok.added_tokens}
    text, eos, where = template_of(tok, folder)
    if not legacy:
        out += _template(text, where)
    out += _stops(tok, names, text, eos, where)
    out += _bos(tok, names, text, folder)
    return out


def _template(text: str, where: str) -> list[Finding]:
    if not text:
        return [Finding("template", "warning", f"no chat template ({where}): the app cannot render a chat prompt "
                        "with the engine's own template")]
    found = lint_template(text, MNN_JINJA)
    if not found:
        return [Finding("template", "ok", f"the chat template ({where}, {len(text):,} chars) uses only what "
                        f"{MNN_JINJA.name} {MNN_JINJA.version.text} renders as jinja2 does")]
    return [Finding("template", "warning", f"the chat template ({where}) line {f.line}: {f.message}") for f in found[:6]] \
        + ([Finding("template", "warning", f"... {len(found) - 6} more lint findings (`mtok lint-template`)")]
           if len(found) > 6 else [])


def _stops(tok, names: dict[int, str], text: str, eos: str, where: str) -> list[Finding]:
    out = []
    by_text = {t: i for i, t in names.items()}
    stops = set(tok.stop_ids)
    if eos and eos in by_text and by_text[eos] not in stops:
        out.append(Finding("stop ids", "warning", f"the EOS {eos!r} ({where}) is id {by_text[eos]}, which is not a "
                           "stop id: generation does not end there"))
    elif eos and eos not in by_text:
        out.append(Finding("stop ids", "warning", f"the EOS {eos!r} ({where}) is no token of the file"))
    ends = [t for t in names.values() if TURN_END.search(t) and t in text]
    for t in ends:
        if by_text[t] not in stops:
            out.append(Finding("stop ids", "warning", f"the template ends turns with {t!r} (id {by_text[t]}), which is "
                               "not a stop id: the model's answer runs on past its turn"))
    if not out:
        shown = ", ".join(f"{names.get(i, '?')!r}({i})" for i in sorted(stops)) or "none"
        out.append(Finding("stop ids", "ok" if stops else "warning",
                           f"stop ids: {shown}" + ("" if stops else ": generation never stops on a token")))
    return out


def _bos(tok, names: dict[int, str], text: str, folder: ModelFolder | None) -> list[Finding]:
    prefix = [names.get(i, str(i)) for i in tok.prefix_ids]
    if not prefix:
        return [Finding("bos", "ok", "no ids put before the text")]
    bos = tok.chat.bos_token
    writes = bool(text) and ("bos_token" in text or (bos and bos in text))
    if writes and bos and bos in prefix:
        return [Finding("bos", "warning", f"the runtime puts {', '.join(map(repr, prefix))} before every text and the "
                        f"chat template writes {bos!r} too: a chat prompt encoded with the prefix starts with it twice")]
    return [Finding("bos", "ok", f"the runtime puts {', '.join(map(repr, prefix))} before every text")]
