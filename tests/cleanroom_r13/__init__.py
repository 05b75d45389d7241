"""Round 13: blind faulty variants of the durable clean-room catalog (catalog writer)."""
