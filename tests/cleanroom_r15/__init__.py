"""Round 15: blind faulty catalog variants of the durable clean-room baseline."""
