"""Round 17 (b) faulty variants of the clean-room catalog-managed client: writers and readers."""
