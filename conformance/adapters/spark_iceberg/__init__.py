"""Spark with the Iceberg runtime as the engine under test: the session, the engine, the target."""
