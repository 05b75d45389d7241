"""One concurrency explorer for both table formats (issue 15): the model's plan of a real engine's
held schedules (``plan``), the runner that runs them on the engine once per class (``runner``), the
judging of a check's schedules (``harness``) and the ordering of the checks at collection
(``collection``). A format provides its scenarios, its model engine and its presets
(``checks/iceberg/plan.py``, ``checks/delta_conflicts/plan.py``)."""
