"""Chat templates this tool ships for prompt formats that a model repository ships only as Python
code (DESIGN 5.1): one Jinja port per encoder version, written for MNN's Jinja subset and proved
against the encoder itself (`tests/chat/test_ports.py`).

An encoder is recognized by its file name and sha256, like a tiktoken table: the file is read and
hashed, never imported or run.  An encoder file with a known name and an unknown hash is another
version, which no port here renders: the source then names it (`chat.sources`)."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from importlib import resources
from pathlib import Path


@dataclass(frozen=True)
class Port:
    family: str
    encoder: str  # the encoder's file name in a model repository
    sha256: str  # of the encoder version the port renders
    template: str  # the port's file in this package

    @property
    def text(self) -> str:
        return resources.files(__name__).joinpath(self.template).read_text(encoding="utf-8")


class Ports(tuple):
    def by_encoder(self, data: bytes) -> Port | None:
        digest = hashlib.sha256(data).hexdigest()
        return next((p for p in self if p.sha256 == digest), None)

    def encoder_files(self, directory: Path) -> list[Path]:
        """The encoder files of a model folder, at its top or in `encoding/` (as repositories ship
        them), sorted."""
        names = {p.encoder for p in self}
        return sorted(f for d in (directory, directory / "encoding") if d.is_dir()
                      for f in d.iterdir() if f.name in names and f.is_file())


PORTS = Ports((
    # DeepSeek-V4 (Pro and Flash ship the same encoder): thinking modes, DSML tool calls, tasks
    Port("DeepSeek-V4", "encoding_dsv4.py", "bdbd57c132a1b3725042323d02b98b9d1df28e5f388f134399555d041f5055e0",
         "deepseek_v4.jinja"),
))
