package io.github.dqgovernance.spark;

import java.util.List;
import org.apache.spark.rdd.RDD;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.expressions.Attribute;
import org.apache.spark.sql.catalyst.expressions.AttributeSet;
import org.apache.spark.sql.catalyst.expressions.AttributeSet$;
import org.apache.spark.sql.catalyst.expressions.BasePredicate;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.catalyst.expressions.SortOrder;
import org.apache.spark.sql.catalyst.expressions.codegen.CodegenContext;
import org.apache.spark.sql.catalyst.expressions.codegen.ExprCode;
import org.apache.spark.sql.catalyst.plans.physical.Partitioning;
import org.apache.spark.sql.execution.CodegenSupport;
import org.apache.spark.sql.execution.SparkPlan;
import scala.collection.immutable.IndexedSeq;
import scala.collection.immutable.Seq;
import scala.jdk.javaapi.CollectionConverters;

/**
 * A governed write's metrics node as Spark runs it: each row, as it passes, goes through one generated predicate
 * whose {@link TallyCall} counts its flags; every row goes on, uncopied.
 *
 * <p>Inside whole-stage code the node takes the row as one object: the one the stage builds anyway for the write
 * (its child's row, or the stage's projection of the child's columns), handed on to the next operator, so it is
 * built once. The predicate is generated per task from the same call, as {@code FilterExec} would build it, so
 * the call's flags keep their split methods and Spark's subexpression elimination. What the node saves over a
 * {@code FilterExec} on the call (which {@code CodegenFallback} kept out of the stage) is a row iterator between
 * the stage and the write, and its calls on every row. Outside whole-stage code (disabled, a stage that did not
 * compile, or a child that has none) each row goes through the same predicate in a plain iterator.
 */
public final class TallyExec extends SparkPlan implements CodegenSupport {
  private static final long serialVersionUID = 1L;
  private final Expression call;
  private final SparkPlan child;
  private CodegenSupport parent;

  /** Public: Spark copies plan nodes through their constructor. */
  public TallyExec(Expression call, SparkPlan child) {
    this.call = call;
    this.child = child;
    CodegenSupport.$init$(this);
  }

  public SparkPlan child() {
    return child;
  }

  @Override
  public Seq<Attribute> output() {
    return child.output();
  }

  @Override
  public Seq<SparkPlan> children() {
    return CollectionConverters.asScala(List.of(child)).toList();
  }

  @Override
  public SparkPlan withNewChildrenInternal(IndexedSeq<SparkPlan> children) {
    return new TallyExec(call, children.head());
  }

  /** The rows pass as they come: a partitioned write needs no sort of ours. */
  @Override
  public Partitioning outputPartitioning() {
    return child.outputPartitioning();
  }

  @Override
  public Seq<SortOrder> outputOrdering() {
    return child.outputOrdering();
  }

  @Override
  public RDD<InternalRow> doExecute() {
    return child.execute().mapPartitionsWithIndexInternal(new CountEach(new TallyRows(call, child.output())), true,
        false, scala.reflect.ClassTag$.MODULE$.apply(InternalRow.class));
  }

  /**
   * In a stage of its own (a child outside whole-stage code, such as a cached relation's rows), an iterator costs
   * less per row than a stage's row buffer.
   */
  @Override
  public boolean supportCodegen() {
    return child instanceof CodegenSupport && ((CodegenSupport) child).supportCodegen();
  }

  @Override
  public CodegenSupport parent() {
    return parent;
  }

  @Override
  public void parent_$eq(CodegenSupport parent) {
    this.parent = parent;
  }

  @Override
  public Seq<RDD<InternalRow>> inputRDDs() {
    return ((CodegenSupport) child).inputRDDs();
  }

  @Override
  public String doProduce(CodegenContext ctx) {
    return ((CodegenSupport) child).produce(ctx, this);
  }

  /** None: the node reads the row object, whose code evaluates the columns (as {@code SortExec} does). */
  @Override
  public AttributeSet usedInputs() {
    return AttributeSet$.MODULE$.empty();
  }

  @Override
  public String doConsume(CodegenContext ctx, Seq<ExprCode> input, ExprCode row) {
    String rows = ctx.addReferenceObj("dqgovTallyRows", new TallyRows(call, child.output()),
        TallyRows.class.getName());
    String predicate = ctx.addMutableState(BasePredicate.class.getName(), "dqgovTallyPredicate", v -> "", true, true);
    ctx.addPartitionInitializationStatement(predicate + " = " + rows + ".predicate(partitionIndex);");
    String value = row.value().toString();
    return row.code() + "\n" + predicate + ".eval(" + value + ");\n" + consume(ctx, null, value);
  }

  @Override
  public int productArity() {
    return 2;
  }

  @Override
  public Object productElement(int n) {
    return n == 0 ? call : child;
  }

  @Override
  public boolean canEqual(Object that) {
    return that instanceof TallyExec;
  }

  /** Outside whole-stage code: each row of a partition counted as it passes, then handed on. */
  private static final class CountEach
      extends scala.runtime.AbstractFunction2<Object, scala.collection.Iterator<InternalRow>,
          scala.collection.Iterator<InternalRow>> implements java.io.Serializable {
    private static final long serialVersionUID = 1L;
    private final TallyRows rows;

    CountEach(TallyRows rows) {
      this.rows = rows;
    }

    @Override
    public scala.collection.Iterator<InternalRow> apply(Object partitionIndex,
        scala.collection.Iterator<InternalRow> partition) {
      BasePredicate predicate = rows.predicate((Integer) partitionIndex);
      return partition.map(row -> {
        predicate.eval(row);
        return row;
      });
    }
  }

  /** What a task needs to build the node's predicate: the call and the columns it is bound to. */
  public static final class TallyRows implements java.io.Serializable {
    private static final long serialVersionUID = 1L;
    private final Expression call;
    private final Seq<Attribute> columns;

    TallyRows(Expression call, Seq<Attribute> columns) {
      this.call = call;
      this.columns = columns;
    }

    /** The call's predicate over the columns, for one partition of a task. */
    public BasePredicate predicate(int partitionIndex) {
      BasePredicate predicate = org.apache.spark.sql.catalyst.expressions.Predicate$.MODULE$.create(call, columns);
      predicate.initialize(partitionIndex);
      return predicate;
    }
  }
}
