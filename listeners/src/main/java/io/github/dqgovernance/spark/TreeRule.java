package io.github.dqgovernance.spark;

import java.util.function.Predicate;
import java.util.function.UnaryOperator;
import scala.runtime.AbstractPartialFunction;

/** A Catalyst tree rule ({@code transform}'s partial function) from a Java test and rewrite. */
final class TreeRule<T> extends AbstractPartialFunction<T, T> {
  private final Predicate<T> applies;
  private final UnaryOperator<T> rewrite;

  private TreeRule(Predicate<T> applies, UnaryOperator<T> rewrite) {
    this.applies = applies;
    this.rewrite = rewrite;
  }

  /** The rule that rewrites each node {@code applies} accepts, and leaves the others. */
  static <T> TreeRule<T> of(Predicate<T> applies, UnaryOperator<T> rewrite) {
    return new TreeRule<>(applies, rewrite);
  }

  @Override
  public boolean isDefinedAt(T node) {
    return applies.test(node);
  }

  @Override
  public T apply(T node) {
    return rewrite.apply(node);
  }
}
