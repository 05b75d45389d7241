"""Round 10 (writer C): blind faulty variants of the durable clean-room catalog."""
