"""speechannotator: context-aware multi-agent annotation of long speech recordings, and SA-Eval."""

__version__ = "0.1.0"
