"""Round 9: faulty catalog variants of the durable clean-room target (writer A)."""
