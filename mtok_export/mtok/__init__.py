"""MNN's binary `.mtok` format, in exactly one place."""

from .file import check_written, read_mtok, write_mtok
from .layout import Layout, Section

__all__ = ["Layout", "Section", "check_written", "read_mtok", "write_mtok"]
