package io.github.dqgovernance.spark;

import io.github.dqgovernance.listener.Manifest;
import io.github.dqgovernance.listener.ManifestException;
import java.nio.file.Paths;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.spark.sql.internal.SQLConf;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The extension's settings ({@code spark.dqgov.*}), read from the session's SQL conf at each write.
 *
 * <p>The manifest is loaded once per path; a missing or broken one logs one line, once, and every write
 * then proceeds ungoverned.
 */
final class EnforceSettings {
  static final String MANIFEST = "spark.dqgov.manifest";
  /** The listener transformer's own setting, used when {@link #MANIFEST} is not set. */
  static final String TRANSFORMER_MANIFEST = "spark.openlineage.transport.transformerProperties.manifest";
  static final String ENFORCE = "spark.dqgov.enforce";
  static final String PIPELINE = "spark.dqgov.pipeline";
  static final String HISTORY = "spark.dqgov.history";
  static final String COMMIT_PROTOCOL = "spark.sql.sources.commitProtocolClass";
  static final String DELEGATE_COMMIT_PROTOCOL = "spark.dqgov.commitProtocolClass.delegate";
  static final String DEFAULT_COMMIT_PROTOCOL =
      "org.apache.spark.sql.execution.datasources.SQLHadoopMapReduceCommitProtocol";
  static final String PREFIX = "dq-governance extension: ";
  static final Logger LOG = LoggerFactory.getLogger("io.github.dqgovernance.spark.GovernanceExtensions");

  private static final Map<String, Object> MANIFESTS = new ConcurrentHashMap<>(); // path -> Manifest or reason
  private static final Map<String, Boolean> WARNED = new ConcurrentHashMap<>();

  final boolean block;
  final String pipeline;
  final String history;
  private final String manifestPath;

  private EnforceSettings(boolean block, String pipeline, String history, String manifestPath) {
    this.block = block;
    this.pipeline = pipeline;
    this.history = history;
    this.manifestPath = manifestPath;
  }

  /** Every spark.dqgov.* key the extension reads; any other one is refused with a warning (never silent). */
  static final java.util.Set<String> KEYS = java.util.Set.of(MANIFEST, ENFORCE, PIPELINE, HISTORY,
      DELEGATE_COMMIT_PROTOCOL);

  static EnforceSettings read(SQLConf conf, String appName) {
    for (String key : scala.jdk.javaapi.CollectionConverters.asJava(conf.getAllConfs()).keySet()) {
      // Spark's keys are case-sensitive: spark.DQGOV.enforce is not ours, but it was meant to be
      if (key.toLowerCase(Locale.ROOT).startsWith("spark.dqgov.") && !KEYS.contains(key)) {
        warnOnce(key + " is not a setting of this extension (" + String.join(", ", new java.util.TreeSet<>(KEYS))
            + "); it is ignored");
      }
    }
    String mode = conf.getConfString(ENFORCE, "observe").trim().toLowerCase(Locale.ROOT);
    if (!mode.equals("observe") && !mode.equals("block")) {
      warnOnce(ENFORCE + "=" + mode + " is not observe or block; observing");
      mode = "observe";
    }
    String manifest = conf.getConfString(MANIFEST, conf.getConfString(TRANSFORMER_MANIFEST, ""));
    String history = conf.getConfString(HISTORY, "").trim();
    if (history.isEmpty() && conf.contains(HISTORY)) {
      warnOnce(HISTORY + " is blank; no report history is written");
    }
    String pipeline = conf.getConfString(PIPELINE, appName).trim();
    if (pipeline.isEmpty()) {
      warnOnce(PIPELINE + " is blank; reports go under the application's name, " + appName);
      pipeline = appName;
    }
    return new EnforceSettings(mode.equals("block"), pipeline, history.isEmpty() ? null : history, manifest.trim());
  }

  /** The loaded manifest, or null (not configured, or broken: one warning per path). */
  Manifest manifest() {
    if (manifestPath.isEmpty()) {
      warnOnce("no manifest is set (" + MANIFEST + "): writes proceed ungoverned"
          + (block ? ", although " + ENFORCE + "=block" : ""));
      return null;
    }
    Object loaded = MANIFESTS.computeIfAbsent(manifestPath, path -> {
      try {
        return Manifest.load(Paths.get(path));
      } catch (ManifestException e) {
        return e.getMessage();
      } catch (RuntimeException e) {
        return "manifest " + path + ": " + e.getClass().getSimpleName() + ": " + firstLine(e.getMessage());
      }
    });
    if (loaded instanceof Manifest) {
      return (Manifest) loaded;
    }
    warnOnce(loaded + "; writes proceed ungoverned");
    return null;
  }

  static void warnOnce(String message) {
    if (WARNED.putIfAbsent(message, Boolean.TRUE) == null) {
      LOG.warn(PREFIX + message);
    }
  }

  static String firstLine(String message) {
    if (message == null) {
      return "";
    }
    int nl = message.indexOf('\n');
    return nl < 0 ? message : message.substring(0, nl);
  }
}
