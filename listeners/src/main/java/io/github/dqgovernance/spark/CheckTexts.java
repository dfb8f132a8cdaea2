package io.github.dqgovernance.spark;

import java.util.Collections;
import java.util.HashMap;
import java.util.Map;
import java.util.WeakHashMap;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.catalyst.parser.ParseException;
import org.apache.spark.sql.catalyst.parser.ParserInterface;
import org.apache.spark.sql.internal.SQLConf;

/**
 * The manifest's check text parsed once per session parser, not on every governed write.
 *
 * <p>Why: parsing the checks was the largest share of planning a governed write (about 5 ms of its fixed cost).
 * The same text, through the same parser under the same settings, gives the same tree, and a parsed tree is
 * immutable: the analyzer builds new nodes from it. Any change to the session's settings (the parser reads some
 * of them) starts over; a text that does not parse is not kept, so it fails alike every time.
 */
final class CheckTexts {
  /** texts kept at most per parser; more start over (a manifest holds a few hundred) */
  private static final int MAX_TEXTS = 4096;
  /** weak keys: a session's parser, and what it parsed, go when the session does */
  private static final Map<ParserInterface, CheckTexts> BY_PARSER =
      Collections.synchronizedMap(new WeakHashMap<>());

  private final Map<String, Expression> parsed = new HashMap<>();
  private scala.collection.immutable.Map<String, String> settings;

  private CheckTexts() {}

  /** {@code text} parsed by {@code parser} under the settings in effect (SQLConf.get()). */
  static Expression parse(ParserInterface parser, String text) throws ParseException {
    return BY_PARSER.computeIfAbsent(parser, p -> new CheckTexts()).parsed(parser, text);
  }

  private synchronized Expression parsed(ParserInterface parser, String text) throws ParseException {
    scala.collection.immutable.Map<String, String> now = SQLConf.get().getAllConfs();
    if (!now.equals(settings) || parsed.size() >= MAX_TEXTS) {
      parsed.clear();
      settings = now;
    }
    Expression tree = parsed.get(text);
    if (tree == null) {
      tree = parser.parseExpression(text);
      parsed.put(text, tree);
    }
    return tree;
  }
}
