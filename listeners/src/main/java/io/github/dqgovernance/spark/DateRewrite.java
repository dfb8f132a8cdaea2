package io.github.dqgovernance.spark;

import java.util.IdentityHashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import org.apache.spark.sql.catalyst.analysis.UnresolvedAttribute;
import org.apache.spark.sql.catalyst.expressions.And;
import org.apache.spark.sql.catalyst.expressions.Attribute;
import org.apache.spark.sql.catalyst.expressions.CaseWhen;
import org.apache.spark.sql.catalyst.expressions.Cast;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.catalyst.expressions.IsNotNull;
import org.apache.spark.sql.catalyst.expressions.IsNull;
import org.apache.spark.sql.catalyst.expressions.Not;
import org.apache.spark.sql.catalyst.expressions.Or;
import org.apache.spark.sql.catalyst.expressions.objects.StaticInvoke;
import org.apache.spark.sql.types.AbstractDataType;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StringType;
import scala.Option;
import scala.Tuple2;
import scala.jdk.javaapi.CollectionConverters;
import scala.runtime.BoxedUnit;

/**
 * The analysed checks with each ISO date parse of a written column run by {@link IsoDates} where its text is
 * plain {@code dddd-dd-dd}.
 *
 * <p>The manifest carries the engine's parse as text over one column ({@code isoDateParse}). Read over each
 * written string column that a rule casts to a date, it gives the expression to look for; a subtree semantically
 * equal to it becomes {@code CASE WHEN isPlainDay(c) THEN epochDay(c) ELSE <the parse> END}. Where the text is
 * plain, the parse is the date cast, which gives that day (IsoDatesTest); any other text, null included, gets the
 * parse itself. The compiled rule text is unchanged; a rule whose text holds no such parse is untouched.
 */
final class DateRewrite {
  private DateRewrite() {}

  /**
   * The parse read over each written string column that {@code expressions} cast to a date (the only columns it
   * can match), by {@code parseOf}; empty when there is none.
   */
  static Map<Attribute, Expression> parsesIn(List<Expression> expressions,
      Function<Attribute, Expression> parseOf) {
    Map<Attribute, Expression> parses = new LinkedHashMap<>();
    for (Expression e : expressions) {
      e.foreach(node -> {
        if (node instanceof Cast && ((Cast) node).dataType() == DataTypes.DateType
            && ((Cast) node).child() instanceof Attribute && isBinaryText(((Cast) node).child().dataType())) {
          parses.computeIfAbsent((Attribute) ((Cast) node).child(), parseOf); // null (no parse) is not kept
        }
        return BoxedUnit.UNIT;
      });
    }
    return parses;
  }

  /** {@code template} (SQL parsed, not analysed) with its one column read as {@code column}. */
  static Expression over(Expression template, Attribute column) {
    return template.transform(TreeRule.<Expression>of(e -> e instanceof UnresolvedAttribute, e -> column));
  }

  /**
   * {@code expression} with each of {@code parses} it holds run by IsoDates on plain text; where the parse is only
   * tested for null (a format rule asks whether the text parses, not to which day), plain text answers alone.
   */
  static Expression apply(Expression expression, Map<Attribute, Expression> parses) {
    if (parses.isEmpty()) {
      return expression;
    }
    Map<Expression, Attribute> rewritten = new IdentityHashMap<>(); // each CASE this produced -> its column
    return expression.transformUp(TreeRule.<Expression>of(
        e -> e instanceof CaseWhen || e instanceof IsNotNull || e instanceof IsNull, e -> {
          if (!(e instanceof CaseWhen)) {
            Attribute text = rewritten.get(e.children().head());
            if (text == null) {
              return e;
            }
            // plain text parses (IsoDatesTest): only other text runs the parse
            Expression plain = invoke("isPlainDayOrFalse", DataTypes.BooleanType, text, false);
            Expression parse = ((CaseWhen) e.children().head()).elseValue().get();
            return e instanceof IsNotNull ? new Or(plain, new IsNotNull(parse))
                : new And(new Not(plain), new IsNull(parse));
          }
          for (Map.Entry<Attribute, Expression> parse : parses.entrySet()) {
            if (e.semanticEquals(parse.getValue())) {
              Attribute text = parse.getKey();
              Expression plain = invoke("isPlainDay", DataTypes.BooleanType, text, true);
              Expression day = invoke("epochDay", DataTypes.DateType, text, true);
              Expression rewrite = new CaseWhen(
                  CollectionConverters.asScala(List.of(new Tuple2<>(plain, day))).toList(), Option.apply(e));
              rewritten.put(rewrite, text);
              return rewrite;
            }
          }
          return e;
        }));
  }

  /** {@code IsoDates.method(text)}; {@code nullIn}: a null text is a null answer without calling it. */
  private static Expression invoke(String method, DataType type, Expression text, boolean nullIn) {
    return new StaticInvoke(IsoDates.class, type, method, CollectionConverters.asScala(List.of(text)).toList(),
        CollectionConverters.asScala(List.<AbstractDataType>of()).toList(), nullIn, false, true, Option.empty());
  }

  private static boolean isBinaryText(DataType type) {
    return type instanceof StringType && ((StringType) type).isUTF8BinaryCollation();
  }
}
