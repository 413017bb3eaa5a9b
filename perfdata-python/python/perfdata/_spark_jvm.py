"""The JVM Spark data source's jar: built from the Java sources shipped in this package
(``spark_jvm/``) with ``javac``, against the installed PySpark's own jars, on first use,
and kept in a cache directory named after the sources and PySpark's version."""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import tempfile
import zipfile
from pathlib import Path

#: The jar's file name starts so.
JAR_PREFIX = "perfdata-spark-"

_SERVICE = "META-INF/services/org.apache.spark.sql.sources.DataSourceRegister"
_SAMPLES_SCHEMA = "perfdata/spark/samples-schema.ddl"


def _cache_dir() -> Path:
    explicit = os.environ.get("PERFDATA_CACHE_DIR")
    if explicit:
        return Path(explicit)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "perfdata"


def _javac() -> str:
    home = os.environ.get("JAVA_HOME")
    if home and os.access(os.path.join(home, "bin", "javac"), os.X_OK):
        return os.path.join(home, "bin", "javac")
    found = shutil.which("javac")
    if found is None:
        raise RuntimeError(
            "perfdata: building the Spark data source's jar needs javac (a JDK 17 or later: "
            "JAVA_HOME, or javac on PATH); without it, register() gives the Python data source"
        )
    return found


def jar() -> str:
    """The path of the JVM data source's jar, for ``spark.jars`` when the session is
    built::

        spark = SparkSession.builder.config("spark.jars", perfdata.spark.jar()).getOrCreate()

    It registers the ``perfdata`` format: the same options, schema and rows as the Python
    data source, but Spark reads only the columns a query uses, in Arrow batches perfdata's
    native reader writes (``python -m perfdata._spark_feed``, run by each task with the
    ``python`` option's interpreter, else ``PYSPARK_PYTHON``, else ``python3``).
    """
    import pyspark

    sources = sorted(Path(__file__).with_name("spark_jvm").rglob("*.java"))
    if not sources:
        raise RuntimeError("perfdata: the Spark data source's Java sources are not installed")
    from ._spark_plan import SPARK_SCHEMA

    digest = hashlib.sha256(pyspark.__version__.encode())
    digest.update(SPARK_SCHEMA.encode())
    for s in sources:
        digest.update(s.name.encode())
        digest.update(s.read_bytes())
    out = _cache_dir() / f"{JAR_PREFIX}{digest.hexdigest()[:16]}.jar"
    if out.is_file():
        return str(out)
    classpath = os.path.join(os.path.dirname(pyspark.__file__), "jars", "*")
    out.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="perfdata-spark-") as tmp:
        classes = Path(tmp) / "classes"
        built = subprocess.run(
            [_javac(), "--release", "17", "-cp", classpath, "-d", str(classes)] + [str(s) for s in sources],
            capture_output=True,
            text=True,
        )
        if built.returncode != 0:
            raise RuntimeError(f"perfdata: javac failed on the Spark data source:\n{built.stderr}")
        # Written beside the cache entry and renamed into place: a reader never sees half.
        partial = Path(tempfile.mkstemp(dir=out.parent, suffix=".partial")[1])
        try:
            with zipfile.ZipFile(partial, "w", zipfile.ZIP_DEFLATED) as z:
                z.writestr(_SERVICE, "perfdata.spark.PerfDataSource\n")
                # The samples' schema, one source for both data sources.
                z.writestr(_SAMPLES_SCHEMA, SPARK_SCHEMA + "\n")
                for c in sorted(classes.rglob("*.class")):
                    z.write(c, c.relative_to(classes).as_posix())
            os.replace(partial, out)
        finally:
            partial.unlink(missing_ok=True)
    return str(out)
