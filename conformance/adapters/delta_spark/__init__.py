"""Built-in target ``delta-spark``: delta-spark on the run's SparkSession, commits held by a LogStore."""

from conformance.adapters.delta_spark.target import DeltaSparkTarget

__all__ = ["DeltaSparkTarget"]
