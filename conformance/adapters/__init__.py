"""Built-in adapters for real systems under test (catalogs, clients, engines)."""
