-- The export's tables as views (`profiles/` is the export directory: `perfdata export
-- … -o profiles/`). hive_partitioning gives each row its `recording` (an integer).
CREATE VIEW samples      AS SELECT * FROM read_parquet('profiles/samples/*/*.parquet', hive_partitioning = true);
CREATE VIEW frames       AS SELECT * FROM read_parquet('profiles/frames/*/*.parquet', hive_partitioning = true);
CREATE VIEW stacks       AS SELECT * FROM read_parquet('profiles/stacks/*/*.parquet', hive_partitioning = true);
CREATE VIEW stack_frames AS SELECT * FROM read_parquet('profiles/stack_frames/*/*.parquet', hive_partitioning = true);
CREATE VIEW threads      AS SELECT * FROM read_parquet('profiles/threads/*/*.parquet', hive_partitioning = true);
CREATE VIEW comms        AS SELECT * FROM read_parquet('profiles/comms/*/*.parquet', hive_partitioning = true);
CREATE VIEW mmaps        AS SELECT * FROM read_parquet('profiles/mmaps/*/*.parquet', hive_partitioning = true);
CREATE VIEW recordings   AS SELECT * FROM read_parquet('profiles/recordings/*/*.parquet', hive_partitioning = true);
