"""Round 12: blind faulty catalog variants of the durable clean-room catalog."""
