"""Built-in adapters for real systems under test (engines, clients) that lakecert ships."""
