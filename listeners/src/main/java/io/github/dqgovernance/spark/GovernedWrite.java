package io.github.dqgovernance.spark;

import io.github.dqgovernance.listener.Manifest;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.spark.sql.catalyst.analysis.UnresolvedAlias;
import org.apache.spark.sql.catalyst.expressions.Alias;
import org.apache.spark.sql.catalyst.expressions.Attribute;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.catalyst.expressions.NamedExpression;
import org.apache.spark.sql.catalyst.expressions.Not;
import org.apache.spark.sql.catalyst.expressions.Or;
import org.apache.spark.sql.catalyst.expressions.aggregate.Count;
import org.apache.spark.sql.catalyst.parser.ParserInterface;
import org.apache.spark.sql.catalyst.plans.logical.CollectMetrics;
import org.apache.spark.sql.catalyst.plans.logical.Filter;
import org.apache.spark.sql.catalyst.plans.logical.LocalRelation;
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan;
import org.apache.spark.sql.catalyst.plans.logical.Project;
import org.apache.spark.sql.classic.SparkSession;
import org.apache.spark.sql.internal.SQLConf;
import org.apache.spark.sql.types.StringType;
import scala.Option;
import scala.jdk.javaapi.CollectionConverters;

/**
 * One governed write: the contract's same-pass checks resolved against the written columns and counted in the
 * write's own job, by a metrics node over the written query whose {@link TallyCall} counts each row's rule flags
 * into a {@link RowTally}, plus a filter for {@code drop} rules.
 */
final class GovernedWrite {
  static final String NAME_PREFIX = "dqgov:";
  private static final AtomicLong COUNTER = new AtomicLong();

  /** A write the extension leaves ungoverned, with the one-line reason. */
  static final class Skip extends Exception {
    Skip(String message) {
      super(message);
    }
  }

  final String name; // unique per write
  final Manifest.Entry entry;
  final CompiledChecks checks;
  final String namespace;
  final String datasetName;
  final String target; // the path or table, for messages
  final EnforceSettings settings;
  final java.net.URI manifestProducer;
  final java.net.URI contractSchemaUrl;
  final Map<String, String> reportColumns;
  final List<String> metricNames = new ArrayList<>();
  final Map<Integer, Integer> violationMetric = new LinkedHashMap<>(); // rule index -> metric position
  final Map<Integer, Integer> scopeMetric = new LinkedHashMap<>();
  final List<Integer> nullMetric = new ArrayList<>(); // per field
  final boolean drops;
  /** Block mode: rows failing a quarantine rule are left out of the write (and counted), as drop does. */
  final boolean quarantines;
  final List<String> variants = new ArrayList<>(); // per rule
  private final List<String> flagTexts = new ArrayList<>(); // per metric: its row condition, or null
  private final List<CompiledChecks.Rule> flagRules = new ArrayList<>(); // per metric: the rule it fails, or null
  private final List<String[]> failRules = new ArrayList<>(); // {name, violation text} of fail-action rules
  /** Written columns of a narrower type than the contract's (lower-case name -> declared type): read cast. */
  private final Map<String, org.apache.spark.sql.types.DataType> widened = new LinkedHashMap<>();

  GovernedWrite(Manifest manifest, Manifest.Entry entry, CompiledChecks checks, String namespace, String datasetName, String target,
      EnforceSettings settings, List<Attribute> output) throws Skip {
    this.name = NAME_PREFIX + entry.contractName + ":" + COUNTER.incrementAndGet();
    this.entry = entry;
    this.checks = checks;
    this.namespace = namespace;
    this.datasetName = datasetName;
    this.target = target;
    this.settings = settings;
    this.manifestProducer = manifest.producer();
    this.contractSchemaUrl = manifest.contractSchemaUrl();
    this.reportColumns = manifest.reportColumns;
    Map<String, Attribute> written = new LinkedHashMap<>();
    for (Attribute a : output) {
      written.put(a.name().toLowerCase(java.util.Locale.ROOT), a);
    }
    Map<String, Boolean> typed = new LinkedHashMap<>();
    Map<String, Boolean> text = new LinkedHashMap<>();
    for (CompiledChecks.Field f : checks.fields) {
      Attribute a = written.get(f.name.toLowerCase(java.util.Locale.ROOT));
      if (a == null) {
        throw new Skip("the write has no column " + f.name + " of the contract");
      }
      boolean isTyped = a.dataType().simpleString().equals(f.type);
      boolean isText = a.dataType() instanceof StringType;
      if (!isTyped && !isText) {
        org.apache.spark.sql.types.DataType declared = TypeWidening.lossless(a.dataType().simpleString(), f.type)
            ? declaredType(f.type) : null;
        if (declared != null) {
          widened.put(a.name().toLowerCase(java.util.Locale.ROOT), declared);
          isTyped = true;
        }
      }
      if (!isTyped && !isText) {
        throw new Skip("column " + f.name + " is written as " + a.dataType().simpleString() + ", the contract declares "
            + f.type);
      }
      typed.put(f.name, isTyped);
      text.put(f.name, isText);
    }
    add("total", null, null);
    boolean dropping = false;
    List<String> quarantineTexts = new ArrayList<>();
    List<String> dropTexts = new ArrayList<>();
    for (int i = 0; i < checks.rules.size(); i++) {
      CompiledChecks.Rule rule = checks.rules.get(i);
      List<String> involved = rule.type.equals("expression") || rule.scope("typed") != null
          ? fieldNames() : rule.columns;
      String variant;
      if (all(typed, involved)) {
        variant = "typed";
      } else if (all(text, involved)) {
        variant = "text";
      } else {
        throw new Skip("rule " + rule.name + " reads columns written both typed and as text");
      }
      variants.add(variant);
      String violation = rule.violation(variant);
      if (violation != null) {
        violationMetric.put(i, metricNames.size());
        add("v" + i, violation, rule);
        dropping |= "drop".equals(rule.action);
        if ("drop".equals(rule.action)) {
          dropTexts.add("coalesce((" + violation + "), false)");
        } else if (quarantinesRowsOf(rule)) {
          quarantineTexts.add("coalesce((" + violation + "), false)");
        }
        if ("fail".equals(rule.action)) {
          failRules.add(new String[] {rule.name, violation});
        }
      }
      String scope = rule.scope(variant);
      if (scope != null) {
        scopeMetric.put(i, metricNames.size());
        add("s" + i, scope, null);
      }
    }
    for (int j = 0; j < checks.fields.size(); j++) {
      nullMetric.add(metricNames.size());
      Attribute a = written.get(checks.fields.get(j).name.toLowerCase(java.util.Locale.ROOT));
      add("n" + j, quote(a.name()) + " IS NULL", null);
    }
    quarantines = !quarantineTexts.isEmpty();
    if (quarantines) {
      // rows a quarantine rule leaves out and no drop rule drops: each row left out is counted once
      add("quarantined", "(" + String.join(" OR ", quarantineTexts) + ")"
          + (dropTexts.isEmpty() ? "" : " AND NOT (" + String.join(" OR ", dropTexts) + ")"), null);
    }
    add("valid", null, null); // the tally's: rows no blocking rule fails
    drops = dropping;
    if (drops) {
      add("dropped", null, null); // rows a drop rule fails
    }
  }

  /**
   * Whether block mode leaves this rule's failing rows out of the write: a row rule whose failure makes the row
   * invalid, with {@code action: quarantine}, or with no action where the contract's policy routes its rows rather
   * than blocking on them (Python: publish/policy.py DEFAULT_ACTION and checks/gate.py). The extension keeps no copy
   * of those rows (the source still has them); observe mode only counts them.
   */
  boolean quarantinesRowsOf(CompiledChecks.Rule rule) {
    return settings.block && rule.blocks && "row".equals(rule.level) && rule.metric == null
        && ("quarantine".equals(rule.action) || (rule.action == null && policyRoutesRows()));
  }

  /**
   * {@code on_failure: quarantine} routes a failing row; so do {@code fail} and {@code block_publication} when the
   * gate is {@code minimum_valid_ratio} (without it any failing row blocks the write, so there is nothing to route).
   */
  private boolean policyRoutesRows() {
    return "quarantine".equals(checks.onFailure)
        || (Judgement.BLOCKING_POLICIES.contains(checks.onFailure) && checks.minimumValidRatio != null);
  }

  /** Whether a failing row of this rule is kept out of the written rows (drop, or quarantine in block mode). */
  boolean leavesOut(CompiledChecks.Rule rule) {
    return rule != null && ("drop".equals(rule.action) || quarantinesRowsOf(rule));
  }

  /** The contract's declared type, or null when it does not parse. */
  private static org.apache.spark.sql.types.DataType declaredType(String type) {
    try {
      return org.apache.spark.sql.types.DataType.fromDDL(type);
    } catch (RuntimeException e) {
      return null;
    }
  }

  /**
   * A metric: the rows where {@code condition} holds (null: one the tally derives, such as the row count);
   * {@code failed}: the rule whose violation it counts, or null.
   */
  private void add(String metric, String condition, CompiledChecks.Rule failed) {
    flagTexts.add(condition);
    flagRules.add(failed);
    metricNames.add(metric);
  }

  private List<String> fieldNames() {
    List<String> out = new ArrayList<>();
    for (CompiledChecks.Field f : checks.fields) {
      out.add(f.name);
    }
    return out;
  }

  private static boolean all(Map<String, Boolean> flags, List<String> names) {
    for (String n : names) {
      if (!Boolean.TRUE.equals(flags.get(n))) {
        return false;
      }
    }
    return true;
  }

  static String quote(String name) {
    return "`" + name.replace("`", "``") + "`";
  }

  /**
   * The written query with the metrics node (and the drop filter) on top; analysed here against its output.
   * {@code abortOnFail}: a row failing a {@code fail} rule aborts the write's tasks (for writes with no veto
   * before their commit: Delta).
   */
  LogicalPlan wrap(SparkSession session, LogicalPlan query, boolean abortOnFail) throws Skip {
    // Parsed and analysed with ANSI mode off: an expression rule that would raise on a row under ANSI (a bad
    // cast, a division by zero) gets the non-ANSI answer (null: a row the rule does not count) instead of failing
    // the user's write. Expressions take the mode when they are built, so the setting holds only while they are.
    SQLConf lenient = session.sessionState().conf().clone();
    lenient.setConfString(SQLConf.ANSI_ENABLED().key(), "false");
    Skip[] skipped = new Skip[1];
    LogicalPlan wrapped = SQLConf.withExistingConf(lenient, () -> {
      try {
        return wrapAnalysed(session, query, abortOnFail);
      } catch (Skip e) {
        skipped[0] = e;
        return null;
      }
    });
    if (skipped[0] != null) {
      throw skipped[0];
    }
    return wrapped;
  }

  private LogicalPlan wrapAnalysed(SparkSession session, LogicalPlan query, boolean abortOnFail) throws Skip {
    ParserInterface parser = session.sessionState().sqlParser();
    // ours is built over the written columns' empty relation, finished, then put over the written query
    LocalRelation relation = new LocalRelation(query.output(), CollectionConverters.asScala(
        new ArrayList<org.apache.spark.sql.catalyst.InternalRow>()).toList(), false, Option.empty());
    List<Integer> flagged = new ArrayList<>(); // the metrics a row flag counts, in flag order
    List<Expression> parsed = new ArrayList<>();
    for (int m = 0; m < flagTexts.size(); m++) {
      if (flagTexts.get(m) != null) {
        flagged.add(m);
        parsed.add(parse(parser, "coalesce((" + flagTexts.get(m) + "), false)"));
      }
    }
    List<Expression> flags = checked(session, relation, parsed);
    if (flags == null) {
      throw new Skip("the checks do not resolve against the written columns");
    }
    Expression abort = abortOnFail && !failRules.isEmpty() ? abort(session, parser, relation) : null;
    List<Expression> conditions = new ArrayList<>(flags);
    if (abort != null) {
      conditions.add(abort);
    }
    Map<Attribute, Expression> dates = DateRewrite.parsesIn(conditions, column -> isoDateParse(session, relation, column));
    List<Expression> fastFlags = new ArrayList<>();
    for (Expression flag : flags) {
      fastFlags.add(fast(flag, dates));
    }
    int[] slots = new int[flagged.size()];
    boolean[] blocking = new boolean[flagged.size()];
    boolean[] dropping = new boolean[flagged.size()];
    List<Expression> drops = new ArrayList<>();
    for (int f = 0; f < flagged.size(); f++) {
      slots[f] = flagged.get(f);
      CompiledChecks.Rule rule = flagRules.get(slots[f]);
      blocking[f] = rule != null && rule.blocks;
      dropping[f] = rule != null && "drop".equals(rule.action);
      if (leavesOut(rule)) {
        drops.add(fastFlags.get(f));
      }
    }
    RowTally tally = new RowTally(name, metricNames.size());
    session.sparkContext().register(tally);
    TallyCall call = new TallyCall(tally, fastFlags, slots, blocking, dropping, metricNames.indexOf("valid"),
        metricNames.indexOf("dropped"));
    // A fail rule's row stops the tasks before the tally sees it: the job fails, and nothing is committed.
    LogicalPlan below = abort == null ? relation : new Filter(fast(abort, dates), relation);
    LogicalPlan wrapped = metricsNode(session, parser, relation, call, below);
    if (!drops.isEmpty()) {
      Expression any = drops.get(0);
      for (Expression d : drops.subList(1, drops.size())) {
        any = new Or(any, d);
      }
      wrapped = new Filter(new Not(any), wrapped); // each flag is coalesced already: never null
    }
    LogicalPlan ours = evaluable(optimized(session, wrapped));
    return ours.transformUp(TreeRule.<LogicalPlan>of(p -> p == relation, p -> query));
  }

  /** The condition that raises, naming the rule, on a row that fails a {@code fail} rule (else true). */
  private Expression abort(SparkSession session, ParserInterface parser, LocalRelation relation) throws Skip {
    List<String> cases = new ArrayList<>();
    for (String[] rule : failRules) {
      String message = "dq-governance: write to " + target + " blocked by contract " + entry.contractName
          + " (rule " + rule[0] + " failed with action fail); nothing was committed";
      cases.add("WHEN coalesce((" + rule[1] + "), false) THEN raise_error('" + message.replace("\\", "\\\\")
          .replace("'", "\\'") + "')");
    }
    List<Expression> abort = checked(session, relation,
        List.of(parse(parser, "CASE " + String.join(" ", cases) + " ELSE true END")));
    if (abort == null) {
      throw new Skip("the fail rules do not resolve against the written columns");
    }
    return abort.get(0);
  }

  /**
   * The write's metrics node over {@code below}: Spark's own {@code CollectMetrics}, which every optimizer rule
   * leaves in place (a filter over inline rows would be evaluated while the plan is optimized, and one over no rows
   * dropped), with one aggregate, {@code count(call)}: Spark's node evaluates the call once per row, and
   * {@link TallyStrategy} plans the node as a {@link TallyExec} on it.
   */
  private LogicalPlan metricsNode(SparkSession session, ParserInterface parser, LocalRelation relation, TallyCall call,
      LogicalPlan below) throws Skip {
    long id = COUNTER.get();
    LogicalPlan metrics = finish(session.sessionState().analyzer().execute(new CollectMetrics(name,
        CollectionConverters.asScala(List.of((NamedExpression) parse(parser, "count(true) AS `calls`"))).toList(),
        relation, id)));
    if (!(metrics instanceof CollectMetrics) || !metrics.resolved()) {
      throw new Skip("the metrics node does not resolve");
    }
    NamedExpression counted = (NamedExpression) ((Expression) ((CollectMetrics) metrics).metrics().head()).transformUp(
        TreeRule.<Expression>of(e -> e instanceof Count, e -> e.withNewChildren(
            CollectionConverters.asScala(List.<Expression>of(call)).toList())));
    return new CollectMetrics(name, CollectionConverters.asScala(List.of(counted)).toList(), below, id);
  }

  /**
   * {@code parsed} analysed over the written columns as the checks read them: a widened column (int written,
   * bigint declared) is resolved at the declared type, then read as a lossless cast of the written column, so the
   * typed rules compare as the contract says while the written rows stay as they are. Null when any does not resolve.
   */
  private List<Expression> checked(SparkSession session, LocalRelation relation, List<Expression> parsed) {
    if (widened.isEmpty()) {
      return analysed(session, relation, parsed);
    }
    List<Attribute> declared = new ArrayList<>();
    Map<org.apache.spark.sql.catalyst.expressions.ExprId, Expression> casts = new java.util.HashMap<>();
    for (Attribute a : CollectionConverters.asJava(relation.output())) {
      org.apache.spark.sql.types.DataType type = widened.get(a.name().toLowerCase(java.util.Locale.ROOT));
      if (type == null) {
        declared.add(a);
        continue;
      }
      Attribute as = a.withDataType(type).newInstance();
      declared.add(as);
      casts.put(as.exprId(), new org.apache.spark.sql.catalyst.expressions.Cast(a, type, Option.empty(),
          org.apache.spark.sql.catalyst.expressions.EvalMode.LEGACY()));
    }
    LocalRelation typed = new LocalRelation(CollectionConverters.asScala(declared).toSeq(), CollectionConverters.asScala(
        new ArrayList<org.apache.spark.sql.catalyst.InternalRow>()).toList(), false, Option.empty());
    List<Expression> out = analysed(session, typed, parsed);
    if (out == null) {
      return null;
    }
    List<Expression> cast = new ArrayList<>();
    for (Expression e : out) {
      cast.add(e.transformUp(TreeRule.<Expression>of(
          x -> x instanceof Attribute && casts.containsKey(((Attribute) x).exprId()),
          x -> casts.get(((Attribute) x).exprId()))));
    }
    return cast;
  }

  /** {@code parsed} analysed and finished over the written columns, in one pass; null when any does not resolve. */
  private static List<Expression> analysed(SparkSession session, LocalRelation relation, List<Expression> parsed) {
    List<Expression> out = new ArrayList<>();
    if (parsed.isEmpty()) {
      return out;
    }
    List<NamedExpression> named = new ArrayList<>();
    for (Expression e : parsed) {
      named.add(new UnresolvedAlias(e, Option.empty()));
    }
    LogicalPlan project = finish(session.sessionState().analyzer().execute(
        new Project(CollectionConverters.asScala(named).toList(), relation)));
    if (!project.resolved() || !(project instanceof Project) || hasCommonExpressions(project)) {
      return null;
    }
    for (NamedExpression e : CollectionConverters.asJava(((Project) project).projectList())) {
      out.add(((Alias) e).child());
    }
    return out;
  }

  /**
   * Our nodes (over the empty relation, without the user's query) through the optimizer rules they need and join
   * too late for, as Spark runs them on every query:
   * <ul>
   *   <li>{@code current_date()}, {@code current_timestamp()}, {@code current_user()} and the like, and special
   *       date text ({@code 'today'}), become their values, once for all our nodes: those expressions cannot run
   *       in a task (a rule {@code day <= current_date()} failed the user's write);</li>
   *   <li>constant folding, then {@code IN} with more than a few constants becomes a hash set lookup
   *       ({@code INSET}): an allowed_values rule of 27 values no longer compares each row 27 times.</li>
   * </ul>
   */
  private static LogicalPlan optimized(SparkSession session, LogicalPlan ours) {
    LogicalPlan timed = org.apache.spark.sql.catalyst.optimizer.ComputeCurrentTime$.MODULE$.apply(ours);
    LogicalPlan named = new org.apache.spark.sql.catalyst.optimizer.ReplaceCurrentLike(
        session.sessionState().catalogManager()).apply(timed);
    LogicalPlan dated = org.apache.spark.sql.catalyst.optimizer.SpecialDatetimeValues$.MODULE$.apply(named);
    LogicalPlan folded = org.apache.spark.sql.catalyst.optimizer.ConstantFolding$.MODULE$.apply(dated);
    return org.apache.spark.sql.catalyst.optimizer.OptimizeIn$.MODULE$.apply(folded);
  }

  /**
   * {@code wrapped} when every expression of ours in it can run in a task; a write whose checks hold anything
   * else (an expression only the optimizer or the planner would have replaced) is left ungoverned, never failed.
   */
  private static LogicalPlan evaluable(LogicalPlan wrapped) throws Skip {
    for (LogicalPlan node = wrapped; !node.children().isEmpty(); node = node.children().head()) {
      for (Expression e : CollectionConverters.asJava(node.expressions())) {
        // attributes, aggregates and subqueries are bound, run or planned when the plan executes
        scala.Option<Expression> stuck = e.find(x -> x instanceof org.apache.spark.sql.catalyst.expressions.Unevaluable
            && !(x instanceof Attribute)
            && !(x instanceof org.apache.spark.sql.catalyst.expressions.aggregate.AggregateExpression)
            && !(x instanceof org.apache.spark.sql.catalyst.expressions.aggregate.AggregateFunction)
            && !(x instanceof org.apache.spark.sql.catalyst.expressions.PlanExpression));
        if (stuck.isDefined()) {
          throw new Skip("the checks hold " + stuck.get().prettyName() + "(), which a write's own pass cannot evaluate");
        }
      }
    }
    return wrapped;
  }

  /**
   * The analysed {@code check} with its ISO date parses and plain patterns run by our byte readers, and its text
   * length bounds tried on byte lengths first.
   */
  private static Expression fast(Expression check, Map<Attribute, Expression> dates) {
    return LengthRewrite.apply(RegexRewrite.apply(DateRewrite.apply(check, dates)));
  }

  /**
   * The manifest's ISO date parse read over {@code column}, analysed as the checks are; null when the manifest
   * has none or it does not resolve (the rules then run their own text, as written).
   */
  private Expression isoDateParse(SparkSession session, LocalRelation relation, Attribute column) {
    if (checks.isoDateParse == null) {
      return null;
    }
    try {
      List<Expression> parse = analysed(session, relation, List.of(DateRewrite.over(
          CheckTexts.parse(session.sessionState().sqlParser(), checks.isoDateParse), column)));
      return parse == null ? null : parse.get(0);
    } catch (org.apache.spark.sql.catalyst.parser.ParseException | RuntimeException e) {
      return null;
    }
  }

  /**
   * What the optimizer's first batch does to every plan, which ours joins after it: runtime-replaceable
   * expressions (count_if, to_date, try_to_timestamp, …) become the expressions they stand for.
   */
  private static LogicalPlan finish(LogicalPlan analyzed) {
    return org.apache.spark.sql.catalyst.optimizer.ReplaceExpressions$.MODULE$.apply(analyzed);
  }

  /** Expressions (BETWEEN, NULLIF, …) whose 4.0 form needs an optimizer batch that runs before ours. */
  private static boolean hasCommonExpressions(LogicalPlan plan) {
    for (Expression e : CollectionConverters.asJava(plan.expressions())) {
      if (e.find(x -> x instanceof org.apache.spark.sql.catalyst.expressions.With).isDefined()) {
        return true;
      }
    }
    return false;
  }

  private Expression parse(ParserInterface parser, String text) throws Skip {
    try {
      return CheckTexts.parse(parser, text);
    } catch (org.apache.spark.sql.catalyst.parser.ParseException e) {
      throw new Skip("a compiled check does not parse (" + EnforceSettings.firstLine(e.getMessage()) + ")");
    }
  }

  /** Whether a query is already wrapped by this extension (the optimizer may see a plan twice). */
  static boolean isWrapped(LogicalPlan query) {
    LogicalPlan p = query instanceof Filter ? ((Filter) query).child() : query;
    return p instanceof CollectMetrics && ((CollectMetrics) p).name().startsWith(NAME_PREFIX);
  }

  /** The tally a (physical or logical) expression counts its rows into, or null. */
  static RowTally tallyIn(Expression expression) {
    scala.Option<Expression> call = expression.find(e -> e instanceof TallyCall);
    return call.isDefined() ? ((TallyCall) call.get()).tally() : null;
  }
}
