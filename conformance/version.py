"""lakecert's version, in a module of its own so that ``--version`` and cheap commands import nothing else."""

SUITE_VERSION = "0.1.0"
