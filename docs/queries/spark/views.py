# PySpark: the export's tables as temporary views (partition discovery gives the
# `recording` column, an integer). uint64 columns arrive as decimal(20,0).
from pyspark.sql import SparkSession

spark = SparkSession.builder.master("local[2]").appName("perfdata").getOrCreate()
for table in ["samples", "frames", "stacks", "stack_frames", "threads", "comms", "mmaps", "recordings"]:
    spark.read.parquet("profiles/" + table).createOrReplaceTempView(table)
# Each tracepoint event's table, as a view named like its directory (raw_syscalls__sys_enter).
import os

if os.path.isdir("profiles/tracepoints"):
    for event in sorted(os.listdir("profiles/tracepoints")):
        spark.read.parquet("profiles/tracepoints/" + event).createOrReplaceTempView(event)
