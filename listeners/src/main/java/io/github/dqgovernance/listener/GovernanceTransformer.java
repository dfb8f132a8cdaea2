package io.github.dqgovernance.listener;

import io.openlineage.client.OpenLineage;
import io.openlineage.client.transports.EventTransformer;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.nio.file.Paths;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;
import java.util.function.Supplier;
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
 * A session current database that cannot be read logs one line once; an unqualified contract table then
 * matches that table in any database.
 */
public final class GovernanceTransformer implements EventTransformer {
  public static final String MANIFEST_PROPERTY = "manifest";
  private static final String PREFIX = "dq-governance listener: ";

  private final Consumer<String> warn;
  private final Consumer<String> info;
  /** The session's current {catalog, database} (null: no session); may throw. */
  private final Supplier<String[]> sessionDatabase;
  private final AtomicBoolean sessionDatabaseWarned = new AtomicBoolean();
  private volatile Enricher enricher; // null = pass-through

  /** The constructor the transform transport calls (logs through SLF4J). */
  public GovernanceTransformer() {
    this(LoggerFactory.getLogger(GovernanceTransformer.class));
  }

  private GovernanceTransformer(Logger log) {
    this(log::warn, log::info, GovernanceTransformer::sparkCurrentDatabase);
  }

  /** Outside a Spark application (tests, benchmarks): no session, so no current database. */
  GovernanceTransformer(Consumer<String> warn, Consumer<String> info) {
    this(warn, info, () -> null);
  }

  GovernanceTransformer(Consumer<String> warn, Consumer<String> info, Supplier<String[]> sessionDatabase) {
    this.warn = warn;
    this.info = info;
    this.sessionDatabase = sessionDatabase;
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
      enricher = new Enricher(manifest, this::currentDatabase);
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

  /**
   * The session's current {catalog, database} for matching an unqualified contract table; null (match it in any
   * database, as before the session's database was known) when there is no session or it cannot be read, which
   * is said once. Never throws: the event must not fail over it.
   */
  private String[] currentDatabase() {
    try {
      String[] current = sessionDatabase.get();
      if (current != null && (current.length != 2 || current[0] == null || current[1] == null)) {
        throw new IllegalStateException("not a {catalog, database} pair");
      }
      return current;
    } catch (RuntimeException | LinkageError e) {
      if (sessionDatabaseWarned.compareAndSet(false, true)) {
        warn.accept(PREFIX + "cannot read the session's current database (" + e.getClass().getSimpleName() + ": "
            + firstLine(e.getMessage()) + "); an unqualified contract table matches that table in any database");
      }
      return null;
    }
  }

  /**
   * The current catalog and database of the application's active (else default) SparkSession, read as the
   * session extension reads them ({@code EnforceWrites.current}); null without a session. By reflection, on the
   * declared types: the listener runs on Spark 3.5 (SparkSession) and 4.0 (classic.SparkSession) alike.
   */
  static String[] sparkCurrentDatabase() {
    try {
      Class<?> sessions = Class.forName("org.apache.spark.sql.SparkSession");
      Object session = orNull(sessions.getMethod("getActiveSession").invoke(null));
      if (session == null) {
        session = orNull(sessions.getMethod("getDefaultSession").invoke(null));
      }
      if (session == null) {
        return null;
      }
      Method sessionState = session.getClass().getMethod("sessionState");
      Object state = sessionState.invoke(session);
      Method catalogManager = sessionState.getReturnType().getMethod("catalogManager");
      Object catalogs = catalogManager.invoke(state);
      Method currentCatalog = catalogManager.getReturnType().getMethod("currentCatalog");
      Object plugin = currentCatalog.invoke(catalogs);
      String catalog = (String) currentCatalog.getReturnType().getMethod("name").invoke(plugin);
      String[] namespace = (String[]) catalogManager.getReturnType().getMethod("currentNamespace").invoke(catalogs);
      if (namespace.length > 0) {
        return new String[] {catalog, namespace[namespace.length - 1]};
      }
      Method sessionCatalog = sessionState.getReturnType().getMethod("catalog");
      return new String[] {catalog,
          (String) sessionCatalog.getReturnType().getMethod("getCurrentDatabase").invoke(sessionCatalog.invoke(state))};
    } catch (InvocationTargetException e) {
      throw new IllegalStateException(String.valueOf(e.getCause()), e.getCause());
    } catch (ReflectiveOperationException e) {
      throw new IllegalStateException(e.toString(), e);
    }
  }

  /** The value of a scala.Option, or null when empty. */
  private static Object orNull(Object option) throws ReflectiveOperationException {
    Class<?> options = Class.forName("scala.Option");
    return (Boolean) options.getMethod("isEmpty").invoke(option) ? null : options.getMethod("get").invoke(option);
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
