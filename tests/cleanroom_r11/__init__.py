"""Round 11 (writer E): faulty catalog variants of the durable clean-room catalog."""
