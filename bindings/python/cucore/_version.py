"""The binding's version (read by the build backend too; keep __version__ a single literal assignment)."""
__version__ = "0.1.0"
