package io.github.dqgovernance.listener;

import io.openlineage.client.OpenLineage;
import io.openlineage.client.OpenLineageClientUtils;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * Overhead of the transformer per event with a manifest of 1,000 contracts: a timed loop over 10,000
 * recorded listener events, against the serialisation every transport does anyway, in the same JVM.
 *
 * <p>Not a test (no assertion on time, not picked up by `mvn test`): run it with
 * {@code mvn -q -f listeners/pom.xml test -Dtest=OverheadBenchmark} or benchmarks/bench_listener_transform.py.
 * It prints one JSON line.
 *
 * <p>Worst case by construction: the fixtures' three contracts come after 1,000 others (a third exact
 * datasets, a third table names, a third path globs), so every dataset scans every glob before it
 * matches, and one dataset per table-write event matches nothing at all.
 */
class OverheadBenchmark {
  static final int CONTRACTS = 1000;
  static final int EVENTS = 10_000;

  static String manifest(int extra) {
    StringBuilder contracts = new StringBuilder();
    for (int i = 0; i < extra; i++) {
      String match;
      switch (i % 3) {
        case 0:
          match = "{\"datasets\": [{\"namespace\": \"s3://bucket-" + i + "\", \"name\": \"curated/t" + i + "\"}]}";
          break;
        case 1:
          match = "{\"tables\": [\"db" + i + ".table" + i + "\"]}";
          break;
        default:
          match = "{\"globs\": [\"/lake/domain_" + i + "/**/*.parquet\"]}";
      }
      contracts.append("{\"contract\": {\"name\": \"c").append(i).append("\", \"version\": \"1.0.0\"}, \"match\": ")
          .append(match).append(", \"owners\": [{\"name\": \"team:t").append(i)
          .append("\"}], \"tags\": [{\"key\": \"pii\", \"value\": \"true\", \"field\": \"email\"}]},\n");
    }
    String fixtures = Support.resource("manifests/governance.json");
    String tail = fixtures.substring(fixtures.indexOf("\"contracts\": [") + "\"contracts\": [".length());
    return "{\"manifestVersion\": 1, \"contracts\": [" + contracts + tail;
  }

  private static GovernanceTransformer transformer(int extra) throws Exception {
    Path file = Files.createTempFile("bench-manifest", ".json");
    file.toFile().deleteOnExit();
    Files.writeString(file, manifest(extra), StandardCharsets.UTF_8);
    GovernanceTransformer transformer = new GovernanceTransformer(line -> {
      throw new IllegalStateException(line);
    }, line -> {});
    transformer.initialize(Map.of(GovernanceTransformer.MANIFEST_PROPERTY, file.toString()));
    return transformer;
  }

  @Test
  void overheadPerEvent() throws Exception {
    GovernanceTransformer largeManifest = transformer(CONTRACTS);
    GovernanceTransformer smallManifest = transformer(0);
    QualityRegistry.record("file", Support.event("read_csv.json").getInputs().get(0).getName(),
        "{\"inputFacets\": {\"dataQualityAssertions\": {\"_producer\": \"p\", \"_schemaURL\": \"s\", "
            + "\"assertions\": [{\"assertion\": \"unique\", \"success\": false, \"column\": \"pedido_id\"}]}}}");
    List<OpenLineage.RunEvent> events = new ArrayList<>();
    for (String name : List.of("read_csv.json", "write_parquet.json", "table_write.json")) {
      events.add(Support.event(name));
    }
    try {
      // warm-up: JIT every loop once
      run(largeManifest, events);
      run(smallManifest, events);
      serialise(events);
      long[] large = run(largeManifest, events);
      long[] small = run(smallManifest, events);
      long[] baseline = serialise(events);
      System.out.println(String.format(Locale.ROOT,
          "{\"benchmark\": \"listener_transform\", \"contracts\": %d, \"events\": %d, "
              + "\"transform_us_per_event\": %.2f, \"transform_ms_per_event\": %.4f, "
              + "\"transform_cpu_us_per_event\": %.2f, \"transform_us_per_event_3_contracts\": %.2f, "
              + "\"baseline\": \"OpenLineageClientUtils.toJson per event (what every transport does)\", "
              + "\"baseline_us_per_event\": %.2f, \"baseline_cpu_us_per_event\": %.2f, "
              + "\"ratio\": %.3f, \"cpu_ratio\": %.3f}",
          CONTRACTS + 3, EVENTS, us(large[0]), us(large[0]) / 1000.0, us(large[1]), us(small[0]),
          us(baseline[0]), us(baseline[1]), (double) large[0] / baseline[0], (double) large[1] / baseline[1]));
    } finally {
      QualityRegistry.clear();
    }
  }

  private static double us(long nanos) {
    return nanos / 1000.0 / EVENTS;
  }

  private static final ThreadMXBean THREADS = ManagementFactory.getThreadMXBean();

  /** {wall ns, thread CPU ns} of transforming EVENTS events. */
  private static long[] run(GovernanceTransformer transformer, List<OpenLineage.RunEvent> events) {
    long sink = 0;
    long cpu = THREADS.getCurrentThreadCpuTime();
    long start = System.nanoTime();
    for (int i = 0; i < EVENTS; i++) {
      sink += transformer.transform(events.get(i % events.size())).getInputs().size();
    }
    long[] elapsed = {System.nanoTime() - start, THREADS.getCurrentThreadCpuTime() - cpu};
    if (sink < 0) {
      throw new IllegalStateException();
    }
    return elapsed;
  }

  /** {wall ns, thread CPU ns} of serialising EVENTS events to JSON. */
  private static long[] serialise(List<OpenLineage.RunEvent> events) {
    long sink = 0;
    long cpu = THREADS.getCurrentThreadCpuTime();
    long start = System.nanoTime();
    for (int i = 0; i < EVENTS; i++) {
      sink += OpenLineageClientUtils.toJson(events.get(i % events.size())).length();
    }
    long[] elapsed = {System.nanoTime() - start, THREADS.getCurrentThreadCpuTime() - cpu};
    if (sink < 0) {
      throw new IllegalStateException();
    }
    return elapsed;
  }
}
