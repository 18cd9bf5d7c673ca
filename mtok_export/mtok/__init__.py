"""MNN's binary `.mtok` format, in exactly one place."""

from .codec import Layout, Section, read_mtok, write_mtok

__all__ = ["Layout", "Section", "read_mtok", "write_mtok"]
