"""Profile delta-cm-interop: the client under test through a catalog that is not lakecert's reference."""
