"""Chat-template support for MNN targets.

MNN renders the chat template embedded in a ``.mtok`` file (spec section 2.8) with its own
small Jinja engine, whose subset is described in spec section 8 and listed in
:mod:`mtok_export.chat.runtime_subset`. :mod:`mtok_export.chat.lint` checks a template statically
against that subset (:mod:`~mtok_export.chat.source_map` locates AST nodes in the text,
:mod:`~mtok_export.chat.walker` walks the AST, :mod:`~mtok_export.chat.rules` holds one check per
rule), :mod:`mtok_export.chat.lowering` rewrites what has an equivalent inside it (printing
expressions with :mod:`mtok_export.chat.jinja_emit`), and :mod:`mtok_export.verify.chat_parity`
proves the result by rendering conversations with transformers and with the runtime.
"""
