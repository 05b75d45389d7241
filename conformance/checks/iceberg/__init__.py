"""Checks of profile ``iceberg-row-delta``: concurrent row-level writes of an engine under held,
ordered commits, judged by the history checker (conformance/history) on what the engine did."""
