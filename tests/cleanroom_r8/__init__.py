"""Round 8 faulty variants of the clean-room catalog-managed catalog and client."""
