package io.github.dqgovernance.listener;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Quality results recorded by check runs in this JVM, per dataset, for the transformer to attach.
 *
 * <p>Python calls {@code spark._jvm.io.github.dqgovernance.listener.QualityRegistry.record(ns, name, json)}
 * through py4j after a check. Static because the listener's transformer and the py4j gateway reach this
 * class through the same application class loader, and share nothing else. The JSON is
 * {@code {"inputFacets": {"dataQualityAssertions": {...}, "dataQualityMetrics": {...}},
 * "contract": {...dqgov_dataContract facet...}}}, built by dq_governance.lineage.jvm_registry from the
 * same facet code as our own events (so PII-safe in the same way). The session extension's Recorder adds
 * {@code "outputFacets"}, {@code "vetoed"} and {@code "ended"} (results of a write that has ended).
 */
public final class QualityRegistry {

  /** One dataset's latest recorded result. */
  static final class Recorded {
    final Map<String, Map<String, Object>> inputFacets; // facet key -> facet JSON object
    final Map<String, Object> contract; // dqgov_dataContract JSON object, or null
    final Map<String, Map<String, Object>> outputFacets; // dataset facets for events that write it
    final boolean vetoed; // the write was stopped before its commit: its COMPLETE is reported as FAIL
    final boolean ended; // measured by a write that has ended: a later write's START must not carry it
    final long recordedAt = System.nanoTime(); // to tell whether a run's START came before this result

    Recorded(Map<String, Map<String, Object>> inputFacets, Map<String, Object> contract) {
      this(inputFacets, contract, Map.of(), false, false);
    }

    Recorded(Map<String, Map<String, Object>> inputFacets, Map<String, Object> contract,
        Map<String, Map<String, Object>> outputFacets, boolean vetoed, boolean ended) {
      this.inputFacets = Collections.unmodifiableMap(inputFacets);
      this.contract = contract == null ? null : Collections.unmodifiableMap(contract);
      this.outputFacets = Collections.unmodifiableMap(outputFacets);
      this.vetoed = vetoed;
      this.ended = ended;
    }
  }

  private static final Map<String, Recorded> RESULTS = new ConcurrentHashMap<>();

  private QualityRegistry() {}

  /**
   * Records (replaces) the latest result for a dataset, named as the listener names it.
   *
   * @throws IllegalArgumentException on malformed JSON, with a one-line message
   */
  public static void record(String namespace, String name, String json) {
    if (namespace == null || namespace.isEmpty() || name == null || name.isEmpty()) {
      throw new IllegalArgumentException("QualityRegistry.record: namespace and name are required");
    }
    RESULTS.put(Manifest.key(namespace, name), parse(json));
  }

  /** Whether a result is recorded for exactly this dataset. */
  public static boolean has(String namespace, String name) {
    return RESULTS.containsKey(Manifest.key(namespace, name));
  }

  /** How many datasets have a recorded result. */
  public static int size() {
    return RESULTS.size();
  }

  /** Forgets every recorded result. */
  public static void clear() {
    RESULTS.clear();
  }

  /**
   * The result for the dataset, else for the directory holding it (Spark reports single part files of a
   * dataset directory on some reads), else for one of its symlinks; null when none.
   */
  static Recorded lookup(String namespace, String name, List<String[]> symlinks) {
    if (RESULTS.isEmpty()) {
      return null;
    }
    String path = Glob.stripTrailingSlash(name);
    Recorded hit = RESULTS.get(Manifest.key(namespace, path));
    for (int slash = path.lastIndexOf('/'); hit == null && slash > 0; slash = path.lastIndexOf('/', slash - 1)) {
      hit = RESULTS.get(Manifest.key(namespace, path.substring(0, slash)));
    }
    for (int i = 0; hit == null && i < symlinks.size(); i++) {
      hit = RESULTS.get(Manifest.key(symlinks.get(i)[0], symlinks.get(i)[1]));
    }
    return hit;
  }

  @SuppressWarnings("unchecked")
  static Recorded parse(String json) {
    Object doc;
    try {
      doc = Json.parse(json == null ? "" : json);
    } catch (Json.SyntaxError e) {
      throw new IllegalArgumentException("QualityRegistry.record: " + e.getMessage());
    }
    if (!(doc instanceof Map)) {
      throw new IllegalArgumentException("QualityRegistry.record: expected a JSON object");
    }
    Map<String, Object> root = (Map<String, Object>) doc;
    Map<String, Map<String, Object>> facets = facets(root, "inputFacets");
    Map<String, Map<String, Object>> outputs = facets(root, "outputFacets");
    Object contract = root.get("contract");
    return new Recorded(facets, contract == null ? null : facet(contract, "contract"), outputs,
        flag(root, "vetoed"), flag(root, "ended"));
  }

  private static boolean flag(Map<String, Object> root, String key) {
    Object value = root.get(key);
    if (value != null && !(value instanceof Boolean)) {
      throw new IllegalArgumentException("QualityRegistry.record: " + key + ": expected a boolean");
    }
    return Boolean.TRUE.equals(value);
  }

  @SuppressWarnings("unchecked")
  private static Map<String, Map<String, Object>> facets(Map<String, Object> root, String key) {
    Map<String, Map<String, Object>> facets = new LinkedHashMap<>();
    Object value = root.get(key);
    if (value != null) {
      if (!(value instanceof Map)) {
        throw new IllegalArgumentException("QualityRegistry.record: " + key + ": expected an object");
      }
      for (Map.Entry<String, Object> e : ((Map<String, Object>) value).entrySet()) {
        facets.put(e.getKey(), facet(e.getValue(), key + "." + e.getKey()));
      }
    }
    return facets;
  }

  @SuppressWarnings("unchecked")
  private static Map<String, Object> facet(Object value, String at) {
    if (!(value instanceof Map)) {
      throw new IllegalArgumentException("QualityRegistry.record: " + at + ": expected an object");
    }
    Map<String, Object> facet = (Map<String, Object>) value;
    for (String required : new String[] {"_producer", "_schemaURL"}) {
      if (!(facet.get(required) instanceof String)) {
        throw new IllegalArgumentException("QualityRegistry.record: " + at + "." + required + ": expected a string");
      }
    }
    return facet;
  }
}
