package io.github.dqgovernance.spark;

import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.regex.Pattern;
import org.apache.spark.unsafe.types.UTF8String;
import org.junit.jupiter.api.Test;

/**
 * What one {@code rlike} costs per value before Spark is involved: Spark's way (decode the UTF-8 value into a Java
 * string, then {@code Pattern.matcher(text).find(0)}) against {@link AsciiRegex#find} on the same bytes, in one JVM,
 * after a warm-up round, on 2,000,000 values shaped as bench_enforce.py's (1 % of them invalid).
 *
 * <p>Not a test (no assertion on time, not picked up by `mvn test`): run it with
 * {@code mvn -q -f listeners/pom.xml test -Dtest=AsciiRegexBenchmark} or benchmarks/bench_regex.py.
 * It prints one JSON line.
 */
class AsciiRegexBenchmark {
  static final int VALUES = 2_000_000;

  @Test
  void run() {
    Map<String, String[]> cases = new LinkedHashMap<>();
    cases.put("email", new String[] {AsciiRegexTest.EMAIL_SPELLED, "user%d@example.com", "user%d@example"});
    cases.put("email_as_written", new String[] {AsciiRegexTest.EMAIL, "user%d@example.com", "user%d@example"});
    cases.put("cpf", new String[] {AsciiRegexTest.CPF, "%03d.456.789-09", "%03d.456.789-0X"});
    cases.put("code", new String[] {"^K[0-9]$", "K%d", "k%d"});
    StringBuilder json = new StringBuilder("{\"benchmark\": \"ascii_regex\", \"values\": " + VALUES);
    long sink = 0;
    for (Map.Entry<String, String[]> c : cases.entrySet()) {
      String[] spec = c.getValue();
      Pattern java = Pattern.compile(spec[0]);
      AsciiRegex regex = AsciiRegex.compile(spec[0]);
      UTF8String[] values = new UTF8String[VALUES];
      for (int i = 0; i < VALUES; i++) {
        values[i] = UTF8String.fromString(String.format(Locale.ROOT, spec[i % 100 == 0 ? 2 : 1], i % 1000));
      }
      double bestSpark = Double.MAX_VALUE;
      double bestAutomaton = Double.MAX_VALUE;
      for (int round = 0; round < 4; round++) { // round 0 warms the JIT up and is not counted
        long start = System.nanoTime();
        for (UTF8String v : values) {
          sink += java.matcher(v.toString()).find(0) ? 1 : 0;
        }
        double spark = (System.nanoTime() - start) / (double) VALUES;
        start = System.nanoTime();
        for (UTF8String v : values) {
          sink += regex.find(v) ? 1 : 0;
        }
        double automaton = (System.nanoTime() - start) / (double) VALUES;
        if (round > 0) {
          bestSpark = Math.min(bestSpark, spark);
          bestAutomaton = Math.min(bestAutomaton, automaton);
        }
      }
      json.append(String.format(Locale.ROOT, ", \"%s\": {\"rlike_ns\": %.1f, \"ascii_regex_ns\": %.1f, "
          + "\"ascii_regex_vs_rlike\": %.3f, \"states\": %d}", c.getKey(), bestSpark, bestAutomaton,
          bestAutomaton / bestSpark, regex.states()));
    }
    System.out.println(json.append(", \"sink\": ").append(sink).append("}"));
  }
}
