"""The consistency check of the Iceberg concurrency model, made executable.

Input: what an engine did (``History``: committed and aborted operations with their starting and
commit versions, and reads of table versions). Output: ``Anomaly`` records explained in plain
words. Independent of lakecert's model, so it judges histories recorded from real engines too.
"""

from conformance.history.anomalies import Anomaly, AnomalyKind
from conformance.history.checker import SerialOrder, check
from conformance.history.events import History, OpRecord, ReadRecord, ScheduleStep
from conformance.history.linearized import ColumnHistory, linearize

__all__ = [
    "Anomaly",
    "AnomalyKind",
    "ColumnHistory",
    "History",
    "OpRecord",
    "ReadRecord",
    "ScheduleStep",
    "SerialOrder",
    "check",
    "linearize",
]
