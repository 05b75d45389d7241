"""Real engines lakecert drives (Spark with Iceberg), started once per run."""
