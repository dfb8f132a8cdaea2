package io.github.dqgovernance.listener;

import io.openlineage.client.dataset.partition.trimmer.DatasetNameTrimmer;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.regex.PatternSyntaxException;

/**
 * A dataset-name trimmer for {@code spark.openlineage.dataset.extraTrimmers}: it removes what the listener's own
 * {@code spark.openlineage.dataset.removePath.pattern} removes (the pattern's {@code remove} group).
 *
 * <p>Why: the listener (1.53.0) applies removePath to the datasets of an event, but builds the job-name suffix
 * (the last two path segments of the output, {@code JobNameSuffixProvider.trimPath}) from the name before it,
 * passed only through the dataset-name trimmers. dq-governance stages a write at
 * {@code <parent>/.dqgov-staging-<run id>/<name>}, so every run got a new job
 * ({@code app.adaptive_spark_plan._dqgov-staging-<run id>_quarantine}). With this trimmer the suffix is built from
 * the cleaned name, the target's ({@code orders_quarantine}), the same for every run.
 *
 * <p>The listener instantiates trimmers by reflection for each name it trims; the pattern is read from the
 * driver's SparkConf (reflectively: spark-core is not a compile dependency of this jar) and compiled once per
 * pattern text. Without a SparkEnv or a pattern, or with one that does not compile, nothing is trimmed.
 */
public final class RemovePathTrimmer implements DatasetNameTrimmer {
  public static final String PATTERN_KEY = "spark.openlineage.dataset.removePath.pattern";
  static final String GROUP = "remove";

  private static volatile Compiled cache = new Compiled(null, null);

  private final Pattern pattern; // null: nothing to remove

  /** The constructor the listener calls: the pattern of the running application's SparkConf. */
  public RemovePathTrimmer() {
    this(configuredPattern());
  }

  RemovePathTrimmer(Pattern pattern) {
    this.pattern = pattern;
  }

  @Override
  public boolean canTrim(String name) {
    return removed(name) != null;
  }

  @Override
  public String trim(String name) {
    String out = removed(name);
    return out == null ? name : out;
  }

  /** The name without the pattern's non-empty {@code remove} group (as the listener removes it), else null. */
  private String removed(String name) {
    if (pattern == null || name == null) {
      return null;
    }
    Matcher matcher = pattern.matcher(name);
    if (!matcher.find()) {
      return null;
    }
    int start;
    int end;
    try {
      start = matcher.start(GROUP);
      end = matcher.end(GROUP);
    } catch (IllegalArgumentException | IllegalStateException e) { // no such group: the listener ignores it too
      return null;
    }
    // an empty group would trim forever (withTrimmedName repeats while any trimmer can trim)
    return start < 0 || end <= start ? null : name.substring(0, start) + name.substring(end);
  }

  static Pattern compile(String text) {
    Compiled current = cache;
    if (text == null || text.isEmpty()) {
      return null;
    }
    if (!text.equals(current.text)) {
      Pattern pattern;
      try {
        pattern = Pattern.compile(text);
      } catch (PatternSyntaxException e) {
        pattern = null;
      }
      current = new Compiled(text, pattern);
      cache = current;
    }
    return current.pattern;
  }

  private static Pattern configuredPattern() {
    return compile(sparkConf(PATTERN_KEY));
  }

  private static String sparkConf(String key) {
    try {
      Object env = Class.forName("org.apache.spark.SparkEnv").getMethod("get").invoke(null);
      if (env == null) {
        return null;
      }
      Object conf = env.getClass().getMethod("conf").invoke(env);
      return (String) conf.getClass().getMethod("get", String.class, String.class).invoke(conf, key, null);
    } catch (ReflectiveOperationException | RuntimeException | LinkageError e) {
      return null; // not inside Spark: nothing to remove
    }
  }

  private static final class Compiled {
    final String text;
    final Pattern pattern;

    Compiled(String text, Pattern pattern) {
      this.text = text;
      this.pattern = pattern;
    }
  }
}
