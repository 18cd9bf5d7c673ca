"""Turn the IR (and a file's layout) into data for people and machines; printing is the CLI's."""

# The static layers of a tokenizer (`layer_diff`), in pipeline order: normalize, pre-tokenize, model,
# post-process (template), decode.  Here, free of imports, so the CLI can offer them without loading the IR.
STATIC_LAYERS = ("normalizer", "tables", "pre_tokenizer", "model", "vocab", "merges", "scores", "added_tokens",
                 "specials", "post_processor", "chat_template", "decoder")
