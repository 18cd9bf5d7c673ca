"""Front-end readers: every input format -> one IR."""
