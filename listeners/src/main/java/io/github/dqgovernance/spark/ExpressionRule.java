package io.github.dqgovernance.spark;

import java.util.function.Predicate;
import java.util.function.UnaryOperator;
import org.apache.spark.sql.catalyst.expressions.Expression;
import scala.runtime.AbstractPartialFunction;

/** A Catalyst tree rule ({@code transform}'s partial function) from a Java test and rewrite. */
final class ExpressionRule extends AbstractPartialFunction<Expression, Expression> {
  private final Predicate<Expression> applies;
  private final UnaryOperator<Expression> rewrite;

  private ExpressionRule(Predicate<Expression> applies, UnaryOperator<Expression> rewrite) {
    this.applies = applies;
    this.rewrite = rewrite;
  }

  /** The rule that rewrites each expression {@code applies} accepts, and leaves the others. */
  static ExpressionRule of(Predicate<Expression> applies, UnaryOperator<Expression> rewrite) {
    return new ExpressionRule(applies, rewrite);
  }

  @Override
  public boolean isDefinedAt(Expression e) {
    return applies.test(e);
  }

  @Override
  public Expression apply(Expression e) {
    return rewrite.apply(e);
  }
}
