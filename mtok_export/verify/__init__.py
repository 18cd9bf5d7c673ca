"""Checks of exported tokenizers, including against the real MNN runtime."""
