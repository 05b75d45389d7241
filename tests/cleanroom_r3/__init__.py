"""Round 3 of the clean-room faulty variants: a durable catalog, a client that survives lost answers,
and faults that only show with several tables, several clients, long histories, maintenance, restarts,
lost answers, clocks and limits (see ``variants.py``)."""
