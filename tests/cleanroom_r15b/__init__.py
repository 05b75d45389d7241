"""Round 15 (b) faulty variants of the clean-room catalog-managed client."""
