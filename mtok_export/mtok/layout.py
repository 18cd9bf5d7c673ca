"""Where everything is in a `.mtok` file: the header's size and each section's offset and size
(spec section 2.2), and the reader's warnings.  `inspect` shows it; error messages use it."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class Section:
    name: str
    offset: int
    size: int
    present: bool = True
    doc: str = ""  # the section's layout, from the schema


@dataclass
class Layout:
    """Where everything is in a file: for `inspect` and for error messages."""

    size: int = 0
    header_size: int = 0
    sections: list[Section] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    legacy_program: bool = False  # post program read as the "temporary" tail-id form
    program_pad: bool = False  # one 0x00 after the program, written to avoid spec 2.9 ambiguity
