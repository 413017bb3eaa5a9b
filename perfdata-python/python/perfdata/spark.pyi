from typing import Iterator, List, Optional, Tuple

import pyarrow
from pyspark.sql.datasource import DataSource, DataSourceReader, InputPartition
from pyspark.sql.types import StructType

SPARK_SCHEMA: str

def register(spark: object) -> None: ...
def jar() -> str: ...
def expand(spec: str) -> List[str]: ...
def tracepoint_schema(path: str, event: str) -> str: ...

class RecordingPartition(InputPartition):
    path: str
    stream: Optional[int]
    byte_range: Optional[Tuple[int, int]]
    def __init__(
        self,
        path: str,
        stream: Optional[int] = ...,
        byte_range: Optional[Tuple[int, int]] = ...,
    ) -> None: ...

class PerfDataSource(DataSource):
    @classmethod
    def name(cls) -> str: ...
    def schema(self) -> str: ...
    def reader(self, schema: StructType) -> PerfDataReader: ...

class PerfDataReader(DataSourceReader):
    paths: List[str]
    split_bytes: int
    def partitions(self) -> List[RecordingPartition]: ...
    def read(self, partition: RecordingPartition) -> Iterator[pyarrow.RecordBatch]: ...  # type: ignore[override]
