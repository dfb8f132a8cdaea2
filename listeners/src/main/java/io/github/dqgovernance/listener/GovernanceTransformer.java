package io.github.dqgovernance.listener;

import io.openlineage.client.OpenLineage;
import io.openlineage.client.transports.EventTransformer;
import java.nio.file.Paths;
import java.util.Map;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * OpenLineage {@link EventTransformer} for {@code spark.openlineage.transport.type=transform}: adds each
 * governed dataset's contract facets (ownership, tags, documentation, dqgov_dataContract) and the quality
 * results recorded in {@link QualityRegistry}, then the transport hands the event to its inner transport.
 *
 * <p>Configuration: {@code spark.openlineage.transport.transformerClass=} this class and
 * {@code spark.openlineage.transport.transformerProperties.manifest=/path/manifest.json}.
 *
 * <p>Safety: it never throws into the listener. A missing or bad manifest logs one line at start-up and
 * every event then passes through unchanged; an error on one event logs one line and passes that event.
 */
public final class GovernanceTransformer implements EventTransformer {
  public static final String MANIFEST_PROPERTY = "manifest";
  private static final String PREFIX = "dq-governance listener: ";

  private final Consumer<String> warn;
  private final Consumer<String> info;
  private volatile Enricher enricher; // null = pass-through

  /** The constructor the transform transport calls (logs through SLF4J). */
  public GovernanceTransformer() {
    this(LoggerFactory.getLogger(GovernanceTransformer.class));
  }

  private GovernanceTransformer(Logger log) {
    this(log::warn, log::info);
  }

  GovernanceTransformer(Consumer<String> warn, Consumer<String> info) {
    this.warn = warn;
    this.info = info;
  }

  @Override
  public void initialize(Map<String, String> properties) {
    enricher = null;
    try {
      String path = properties == null ? null : properties.get(MANIFEST_PROPERTY);
      if (path == null || path.isBlank()) {
        warn.accept(PREFIX + "transformerProperties." + MANIFEST_PROPERTY
            + " is not set; passing events through unchanged");
        return;
      }
      Manifest manifest = Manifest.load(Paths.get(path));
      enricher = new Enricher(manifest);
      info.accept(PREFIX + "manifest " + path + " loaded (" + manifest.entries.size() + " contracts)");
    } catch (ManifestException e) {
      warn.accept(PREFIX + e.getMessage() + "; passing events through unchanged");
    } catch (RuntimeException | LinkageError e) {
      warn.accept(PREFIX + "cannot start (" + e.getClass().getSimpleName() + ": " + firstLine(e.getMessage())
          + "); passing events through unchanged");
    }
  }

  /** Whether a manifest is loaded (false = every event passes through unchanged). */
  public boolean isActive() {
    return enricher != null;
  }

  @Override
  public OpenLineage.RunEvent transform(OpenLineage.RunEvent event) {
    Enricher current = enricher;
    if (current == null || event == null) {
      return event;
    }
    try {
      return current.enrich(event);
    } catch (RuntimeException | LinkageError e) {
      warn.accept(PREFIX + "event " + runId(event) + " passed through unchanged: " + e.getClass().getSimpleName()
          + ": " + firstLine(e.getMessage()));
      return event;
    }
  }

  @Override
  public OpenLineage.DatasetEvent transform(OpenLineage.DatasetEvent event) {
    return event; // static dataset events are not produced by the Spark listener
  }

  @Override
  public OpenLineage.JobEvent transform(OpenLineage.JobEvent event) {
    return event; // no datasets with runs to govern
  }

  private static String runId(OpenLineage.RunEvent event) {
    try {
      return String.valueOf(event.getRun().getRunId());
    } catch (RuntimeException e) {
      return "?";
    }
  }

  private static String firstLine(String message) {
    if (message == null) {
      return "";
    }
    int nl = message.indexOf('\n');
    return nl < 0 ? message : message.substring(0, nl);
  }
}
