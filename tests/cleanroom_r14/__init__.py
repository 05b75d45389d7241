"""Round 14: blind faulty catalog variants of the durable clean-room baseline."""
