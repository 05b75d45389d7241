"""Round 11 (writer F): blind faulty client variants of the resilient clean-room client."""
