"""Errors a user can act on. The workflow scripts print their message as one line and exit non-zero."""


class DPCostError(Exception):
    """Base class of every error meant for the user rather than for a traceback."""


class ConfigError(DPCostError, ValueError):
    """A configuration value is out of range or cannot be interpreted."""


class DataError(DPCostError, ValueError):
    """Input data are malformed, truncated or do not match their checksum."""


class DownloadError(DPCostError):
    """No source could deliver a verified copy of a file."""


class PrivacyError(DPCostError, ValueError):
    """A privacy parameter or calibration is invalid, or used outside the range where its guarantee holds."""
