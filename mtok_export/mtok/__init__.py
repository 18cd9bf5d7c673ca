"""MNN's binary `.mtok` format, in exactly one place."""

from .codec import Layout, Section, check_written, read_mtok, write_mtok

__all__ = ["Layout", "Section", "check_written", "read_mtok", "write_mtok"]
