"""Imported once by the fork server that the tests' CLI runs start from (``tests.helpers.lakecert``):
what every ``lakecert run`` imports, so that each forked run starts with it."""

from conformance.run import warm_run_imports

warm_run_imports()
