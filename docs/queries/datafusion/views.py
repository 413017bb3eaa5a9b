# DataFusion (Python): the export's tables, `recording` read from the directory names as
# an integer (DataFusion would otherwise make it a dictionary-encoded string).
import pyarrow as pa
from datafusion import SessionContext

ctx = SessionContext()
for table in ["samples", "frames", "stacks", "stack_frames", "threads", "comms", "mmaps", "recordings"]:
    ctx.register_parquet(table, "profiles/" + table + "/", table_partition_cols=[("recording", pa.int32())])
# Each tracepoint event's table, named like its directory (raw_syscalls__sys_enter).
import os

if os.path.isdir("profiles/tracepoints"):
    for event in sorted(os.listdir("profiles/tracepoints")):
        ctx.register_parquet(
            event, "profiles/tracepoints/" + event + "/", table_partition_cols=[("recording", pa.int32())]
        )
