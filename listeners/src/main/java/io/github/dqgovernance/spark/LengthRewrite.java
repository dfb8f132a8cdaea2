package io.github.dqgovernance.spark;

import org.apache.spark.sql.catalyst.expressions.And;
import org.apache.spark.sql.catalyst.expressions.BinaryComparison;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.catalyst.expressions.GreaterThan;
import org.apache.spark.sql.catalyst.expressions.GreaterThanOrEqual;
import org.apache.spark.sql.catalyst.expressions.Length;
import org.apache.spark.sql.catalyst.expressions.LessThan;
import org.apache.spark.sql.catalyst.expressions.LessThanOrEqual;
import org.apache.spark.sql.catalyst.expressions.Literal;
import org.apache.spark.sql.catalyst.expressions.OctetLength;
import org.apache.spark.sql.catalyst.expressions.Or;
import org.apache.spark.sql.types.StringType;

/**
 * The analysed checks with each bound on a text's length first tried on its byte length.
 *
 * <p>Why: {@code length(text)} counts characters, which reads every byte ({@code UTF8String.numChars}); a length
 * rule paid that on every row. A text has at least as many bytes as characters, so {@code length(t) > k} can only
 * hold when {@code octet_length(t) > k} does, which is read from the value's header: {@code length(t) > k} becomes
 * {@code octet_length(t) > k AND length(t) > k}, and {@code length(t) < k} becomes {@code octet_length(t) < k OR
 * length(t) < k} (likewise {@code >=}, {@code <=}, and the literal on the left). Both sides are null exactly when the
 * original is, so the answer is the original's, null included; only text past the byte bound is counted.
 *
 * <p>As {@link RegexRewrite}: the compiled rule text is unchanged, only how the JVM evaluates it.
 */
final class LengthRewrite {
  private LengthRewrite() {}

  private static final TreeRule<Expression> RULE = TreeRule.<Expression>of(LengthRewrite::boundsTextLength, e -> {
    Expression bytes = e.mapChildren(c -> c instanceof Length ? new OctetLength(((Length) c).child()) : c);
    // at least (more than) k characters needs at least (more than) k bytes; at most (fewer than) k bytes is enough
    boolean atLeast = (((BinaryComparison) e).left() instanceof Length)
        == (e instanceof GreaterThan || e instanceof GreaterThanOrEqual);
    return atLeast ? new And(bytes, e) : new Or(bytes, e);
  });

  /** {@code expression} with its character-length bounds tried on byte lengths first. */
  static Expression apply(Expression expression) {
    return expression.transformUp(RULE);
  }

  /** A comparison of a text's character length with a literal: {@code <, <=, >, >=}, either side. */
  private static boolean boundsTextLength(Expression e) {
    if (!(e instanceof LessThan || e instanceof LessThanOrEqual || e instanceof GreaterThan
        || e instanceof GreaterThanOrEqual)) {
      return false;
    }
    BinaryComparison bound = (BinaryComparison) e;
    Expression length = bound.left() instanceof Length ? bound.left() : bound.right();
    Expression other = length == bound.left() ? bound.right() : bound.left();
    return length instanceof Length && ((Length) length).child().dataType() instanceof StringType
        && other instanceof Literal;
  }
}
