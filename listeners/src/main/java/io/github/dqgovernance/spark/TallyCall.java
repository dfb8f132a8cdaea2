package io.github.dqgovernance.spark;

import java.util.ArrayList;
import java.util.List;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.catalyst.expressions.codegen.CodeBlock;
import org.apache.spark.sql.catalyst.expressions.codegen.CodegenContext;
import org.apache.spark.sql.catalyst.expressions.codegen.ExprCode;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DataTypes;
import scala.collection.immutable.IndexedSeq;
import scala.collection.immutable.Seq;
import scala.jdk.javaapi.CollectionConverters;

/**
 * Counts each row's rule flags (its children, one boolean per rule violation, rule scope and null column) into the
 * governed write's {@link RowTally}: the row, its failed rules, its nulls, whether it is valid and whether a
 * {@code drop} rule keeps it out of the write. Its value is always true.
 *
 * <p>It sits in the one aggregate ({@code count}) of the write's metrics node, a {@code CollectMetrics} that every
 * optimizer rule leaves in place. {@link TallyStrategy} plans that node as a {@link TallyExec}, which runs this call
 * as one generated predicate over the rows as they pass, uncopied; without the strategy, Spark's own metrics node
 * evaluates the count, and so this call, once per row, to the same counts.
 *
 * <p>Its generated code splits the flags into methods of their own, under Spark's subexpression elimination across
 * them (a date parse two rules read runs once), so a contract of any width stays within what the JIT compiles; each
 * flag that holds costs one array increment. That needs the row as one object: {@link TallyExec} hands it one, and
 * never generates this call inside whole-stage code, where the columns are separate variables.
 *
 * <p>Not deterministic: the optimizer must neither move it nor skip a row.
 */
public final class TallyCall extends Expression implements java.io.Serializable {
  private static final long serialVersionUID = 1L;
  private final RowTally tally;
  private final Seq<Expression> flags;
  private final int[] slots; // per flag: its counter in the tally
  private final boolean[] blocking; // per flag: a rule whose failure makes the row invalid
  private final boolean[] dropping; // per flag: a rule whose failure drops the row
  private final int validSlot;
  private final int droppedSlot; // -1: nothing drops

  TallyCall(RowTally tally, List<Expression> flags, int[] slots, boolean[] blocking, boolean[] dropping, int validSlot,
      int droppedSlot) {
    this(tally, CollectionConverters.asScala(flags).toList(), slots, blocking, dropping, validSlot, droppedSlot);
  }

  private TallyCall(RowTally tally, Seq<Expression> flags, int[] slots, boolean[] blocking, boolean[] dropping,
      int validSlot, int droppedSlot) {
    this.tally = tally;
    this.flags = flags;
    this.slots = slots;
    this.blocking = blocking;
    this.dropping = dropping;
    this.validSlot = validSlot;
    this.droppedSlot = droppedSlot;
  }

  RowTally tally() {
    return tally;
  }

  @Override
  public Seq<Expression> children() {
    return flags;
  }

  @Override
  public Expression withNewChildrenInternal(IndexedSeq<Expression> children) {
    return new TallyCall(tally, children.toList(), slots, blocking, dropping, validSlot, droppedSlot);
  }

  @Override
  public boolean deterministic() {
    return false;
  }

  /** Nullable, though it never is: count() reads only a nullable child, and this one must run on every row. */
  @Override
  public boolean nullable() {
    return true;
  }

  @Override
  public DataType dataType() {
    return DataTypes.BooleanType;
  }

  @Override
  public String prettyName() {
    return "dqgov_tally";
  }

  @Override
  public Object eval(InternalRow row) {
    long[] counts = tally.value();
    boolean blocked = false;
    boolean dropped = false;
    int f = 0;
    for (Expression flag : CollectionConverters.asJava(flags)) {
      if (Boolean.TRUE.equals(flag.eval(row))) {
        counts[slots[f]]++;
        blocked |= blocking[f];
        dropped |= dropping[f];
      }
      f++;
    }
    counts[0]++;
    if (!blocked) {
      counts[validSlot]++;
    }
    if (dropped) {
      counts[droppedSlot]++;
    }
    return true;
  }

  @Override
  public ExprCode doGenCode(CodegenContext ctx, ExprCode ev) {
    String tallyRef = ctx.addReferenceObj("dqgovTally", tally, RowTally.class.getName());
    String counts = ctx.addMutableState("long[]", "dqgovCounts", v -> v + " = " + tallyRef + ".value();", true, true);
    String blocked = ctx.addMutableState("boolean", "dqgovBlocked", v -> "", true, true);
    String dropped = ctx.addMutableState("boolean", "dqgovDropped", v -> "", true, true);
    List<String> perFlag = new ArrayList<>();
    int f = 0;
    for (Expression flag : CollectionConverters.asJava(flags)) {
      ExprCode code = flag.genCode(ctx);
      perFlag.add(code.code() + "\nif (!" + code.isNull() + " && " + code.value() + ") {\n  " + counts + "[" + slots[f]
          + "]++;" + (blocking[f] ? "\n  " + blocked + " = true;" : "") + (dropping[f] ? "\n  " + dropped + " = true;" : "")
          + "\n}");
      f++;
    }
    String evaluated = ctx.splitExpressionsWithCurrentInputs(CollectionConverters.asScala(perFlag).toList(),
        "dqgovFlags", ctx.splitExpressionsWithCurrentInputs$default$3(), "void",
        ctx.splitExpressionsWithCurrentInputs$default$5(), ctx.splitExpressionsWithCurrentInputs$default$6());
    String code = blocked + " = false;\n" + dropped + " = false;\n" + evaluated + "\n"
        + counts + "[0]++;\n"
        + "if (!" + blocked + ") {\n  " + counts + "[" + validSlot + "]++;\n}\n"
        + (droppedSlot >= 0 ? "if (" + dropped + ") {\n  " + counts + "[" + droppedSlot + "]++;\n}\n" : "")
        + "boolean " + ev.value() + " = true;";
    return ev.copy(new CodeBlock(CollectionConverters.asScala(List.of(code + "\nboolean " + ev.isNull() + " = false;"))
        .toList(), CollectionConverters.asScala(List.<org.apache.spark.sql.catalyst.expressions.codegen.JavaCode>of())
        .toList()), ev.isNull(), ev.value());
  }

  @Override
  public int productArity() {
    return 2;
  }

  @Override
  public Object productElement(int n) {
    return n == 0 ? tally : flags;
  }

  @Override
  public boolean canEqual(Object that) {
    return that instanceof TallyCall;
  }
}
