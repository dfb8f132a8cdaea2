package io.github.dqgovernance.spark;

import java.io.IOException;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.apache.parquet.example.data.Group;
import org.apache.parquet.example.data.simple.SimpleGroupFactory;
import org.apache.parquet.hadoop.ParquetWriter;
import org.apache.parquet.hadoop.example.ExampleParquetWriter;
import org.apache.parquet.hadoop.util.HadoopOutputFile;
import org.apache.parquet.schema.LogicalTypeAnnotation;
import org.apache.parquet.schema.MessageType;
import org.apache.parquet.schema.PrimitiveType.PrimitiveTypeName;
import org.apache.parquet.schema.Types;
import org.apache.spark.SparkContext;
import org.apache.spark.sql.catalyst.catalog.ExternalCatalogUtils;

/**
 * Appends one governed write's report rows to the report history that {@code dqgov report} reads:
 * {@code <history>/pipeline=<p>/run_id=<id>/part-00000-<id>.parquet}, the columns of
 * dq_governance.checks.report_rows (the manifest carries them), written on the driver with Parquet's own
 * writer, so recording a verdict starts no Spark job inside the user's write.
 */
final class ReportHistory {
  static final List<String> PARTITION_COLUMNS = List.of("pipeline", "run_id");

  private ReportHistory() {}

  static void append(String history, Map<String, String> columns, List<Map<String, Object>> rows, String pipeline,
      String runId) {
    if (columns.isEmpty() || rows.isEmpty()) {
      return;
    }
    Types.MessageTypeBuilder builder = Types.buildMessage();
    for (Map.Entry<String, String> c : columns.entrySet()) {
      if (PARTITION_COLUMNS.contains(c.getKey())) {
        continue;
      }
      switch (c.getValue()) {
        case "string":
          builder.optional(PrimitiveTypeName.BINARY).as(LogicalTypeAnnotation.stringType()).named(c.getKey());
          break;
        case "bigint":
          builder.optional(PrimitiveTypeName.INT64).named(c.getKey());
          break;
        case "double":
          builder.optional(PrimitiveTypeName.DOUBLE).named(c.getKey());
          break;
        case "boolean":
          builder.optional(PrimitiveTypeName.BOOLEAN).named(c.getKey());
          break;
        case "timestamp":
          builder.optional(PrimitiveTypeName.INT64)
              .as(LogicalTypeAnnotation.timestampType(true, LogicalTypeAnnotation.TimeUnit.MICROS)).named(c.getKey());
          break;
        default:
          throw new IllegalArgumentException("report column " + c.getKey() + ": unsupported type " + c.getValue());
      }
    }
    MessageType schema = builder.named("spark_schema");
    scala.Option<SparkContext> sc = org.apache.spark.SparkContext$.MODULE$.getActive(); // never getOrCreate: that could start a context
    if (sc.isEmpty()) {
      throw new IllegalStateException("the Spark application has stopped; report rows not written to " + history);
    }
    Configuration conf = sc.get().hadoopConfiguration();
    Path dir = new Path(new Path(history, "pipeline=" + ExternalCatalogUtils.escapePathName(pipeline)),
        "run_id=" + ExternalCatalogUtils.escapePathName(runId));
    Path file = new Path(dir, "part-00000-" + runId + ".parquet");
    // written under a hidden name, then renamed: a reader (or a crash) never meets a half-written file there
    Path inProgress = new Path(dir, "." + file.getName() + ".inprogress");
    SimpleGroupFactory groups = new SimpleGroupFactory(schema);
    try {
      FileSystem fs = dir.getFileSystem(conf);
      fs.mkdirs(dir);
      try (ParquetWriter<Group> writer = ExampleParquetWriter.builder(HadoopOutputFile.fromPath(inProgress, conf))
          .withType(schema).withConf(conf).build()) {
        for (Map<String, Object> row : rows) {
          Group g = groups.newGroup();
          for (Map.Entry<String, String> c : columns.entrySet()) {
            Object v = row.get(c.getKey());
            if (v == null || PARTITION_COLUMNS.contains(c.getKey())) {
              continue;
            }
            switch (c.getValue()) {
              case "string":
                g.add(c.getKey(), String.valueOf(v));
                break;
              case "bigint":
                g.add(c.getKey(), ((Number) v).longValue());
                break;
              case "double":
                g.add(c.getKey(), ((Number) v).doubleValue());
                break;
              case "boolean":
                g.add(c.getKey(), (Boolean) v);
                break;
              default: // timestamp
                Instant at = (Instant) v;
                g.add(c.getKey(), at.getEpochSecond() * 1_000_000L + at.getNano() / 1_000);
            }
          }
          writer.write(g);
        }
      }
      if (!fs.rename(inProgress, file)) {
        fs.delete(inProgress, false);
        throw new IOException("rename refused");
      }
    } catch (IOException e) {
      throw new IllegalStateException("cannot append to the report history " + history + ": "
          + e.getClass().getSimpleName());
    }
  }
}
