"""Round 16 (b): faulty writing and reading clients for the blind evaluation of the catalog-managed suite."""
