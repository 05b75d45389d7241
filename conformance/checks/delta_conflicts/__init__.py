"""Checks of profile ``delta-row-conflicts``: concurrent row-level writes of a Delta engine under
held, ordered commits, judged by the history checker (conformance/history) on what it did."""
