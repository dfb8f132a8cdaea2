package io.github.dqgovernance;

import java.io.File;
import java.net.URISyntaxException;
import java.security.CodeSource;
import java.util.Collections;
import java.util.Map;
import java.util.WeakHashMap;
import org.apache.spark.SparkContext;

/**
 * Whether the executors can load this jar's classes. A governed write runs the tally and the commit protocol in
 * its tasks, and a keyed mask runs the HMAC UDF there, so with the jar on the driver's class path alone their
 * tasks fail. The session extension and the JVM HMAC step aside instead (one line, as for any internal error).
 *
 * <p>Reachable: a {@code local} master (one JVM); the jar installed beside Spark's own jars (the cluster's jars
 * directory, the same on every node); the jar on {@code spark.jars}; or {@code spark.executor.extraClassPath}
 * naming it or a directory wildcard. Only Java-friendly Spark signatures are used, so Spark 3.5 (Scala 2.12)
 * reads it as 4.0 does.
 */
public final class ExecutorReach {

  private static final Map<SparkContext, Boolean> KNOWN = Collections.synchronizedMap(new WeakHashMap<>());

  private ExecutorReach() {}

  /** Whether this application's executors load the jar this class came from (memoized per application). */
  public static boolean reachable(SparkContext context) {
    return KNOWN.computeIfAbsent(context, c -> reachable(c.master(), c.getConf().get("spark.jars", ""),
        c.getConf().get("spark.executor.extraClassPath", ""), ExecutorReach.class, SparkContext.class));
  }

  static boolean reachable(String master, String jars, String executorClassPath, Class<?> ours, Class<?> spark) {
    if (master.startsWith("local") && !master.startsWith("local-cluster")) {
      return true;
    }
    File own = jarOf(ours);
    if (own == null) {
      return true; // classes from a directory (a build tree): nothing to compare, the classic case of a test run
    }
    File sparkJar = jarOf(spark);
    if (sparkJar != null && own.getParentFile().equals(sparkJar.getParentFile())) {
      return true;
    }
    for (String entry : jars.split(",")) {
      if (names(entry.trim(), own.getName())) {
        return true;
      }
    }
    for (String entry : executorClassPath.split(File.pathSeparator)) {
      String trimmed = entry.trim();
      if (names(trimmed, own.getName()) || trimmed.endsWith("*")) {
        return true;
      }
    }
    return false;
  }

  private static boolean names(String entry, String jarName) {
    return entry.equals(jarName) || entry.endsWith("/" + jarName);
  }

  private static File jarOf(Class<?> type) {
    try {
      CodeSource source = type.getProtectionDomain().getCodeSource();
      if (source == null || source.getLocation() == null) {
        return null;
      }
      File file = new File(source.getLocation().toURI());
      return file.isFile() ? file : null;
    } catch (URISyntaxException | SecurityException | IllegalArgumentException e) {
      return null;
    }
  }
}
