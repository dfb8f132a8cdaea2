package io.github.dqgovernance.spark;

import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.catalyst.expressions.Literal;
import org.apache.spark.sql.catalyst.expressions.RLike;
import org.apache.spark.sql.catalyst.expressions.objects.Invoke;
import org.apache.spark.sql.types.AbstractDataType;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StringType;
import org.apache.spark.unsafe.types.UTF8String;
import scala.collection.immutable.Seq;
import scala.jdk.javaapi.CollectionConverters;

/**
 * The analysed checks with each {@code rlike(text, 'constant')} of a supported pattern run by {@link AsciiRegex}.
 *
 * <p>The compiled rule text is unchanged (the manifest's, which the Python engine also runs); only how the JVM
 * evaluates it changes, to the same answer. Text with a collation other than UTF8_BINARY keeps Spark's rlike (its
 * pattern takes the collation's flags), and so does every pattern {@link AsciiRegex#compile} refuses.
 */
final class RegexRewrite {
  private RegexRewrite() {}

  private static final TreeRule<Expression> RULE = TreeRule.<Expression>of(e -> e instanceof RLike, e -> {
    AsciiRegex regex = automaton((RLike) e);
    if (regex == null) {
      return e;
    }
    Seq<Expression> arguments = CollectionConverters.asScala(java.util.List.of(((RLike) e).left())).toList();
    Seq<AbstractDataType> inputTypes = CollectionConverters.asScala(java.util.List.<AbstractDataType>of()).toList();
    // propagateNull: a null text is a null answer, as rlike's; find itself never returns null
    return new Invoke(Literal.fromObject(regex), "find", DataTypes.BooleanType, arguments, inputTypes, true, false,
        true);
  });

  /** {@code expression} with its supported rlike calls run by automata. */
  static Expression apply(Expression expression) {
    return expression.transformUp(RULE);
  }

  /** The automaton for a constant pattern over UTF8_BINARY text, or null: Spark's rlike then stays. */
  private static AsciiRegex automaton(RLike like) {
    if (!(like.left().dataType() instanceof StringType)
        || !((StringType) like.left().dataType()).isUTF8BinaryCollation()
        || !(like.right() instanceof Literal)
        || !(((Literal) like.right()).value() instanceof UTF8String)) {
      return null;
    }
    return AsciiRegex.compile(((Literal) like.right()).value().toString());
  }
}
