"""Project Nessie as a built-in third-party target: its server started and stopped by lakecert."""

from conformance.adapters.nessie.target import NessieTarget

__all__ = ["NessieTarget"]
