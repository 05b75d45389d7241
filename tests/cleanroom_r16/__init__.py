"""Round 16: blind faulty variants of the durable clean-room catalog (catalog writer)."""
