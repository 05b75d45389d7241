"""Round 17 (catalog writer): faulty variants of the durable clean-room catalog."""
