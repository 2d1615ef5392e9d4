"""Error types. Every message names the file, key or language and what was expected."""

from __future__ import annotations


class XlalignError(Exception):
    """Base class for errors a user can act on (bad input, bad config, failed download)."""


class ConfigError(XlalignError):
    """The configuration is invalid; raised before any job runs."""


class InputError(XlalignError):
    """An input file is missing, empty, truncated or malformed."""


class DownloadError(XlalignError):
    """A download failed after all retries, or its checksum did not match."""


class ToolError(XlalignError):
    """A required external tool or model is unavailable for a language."""
