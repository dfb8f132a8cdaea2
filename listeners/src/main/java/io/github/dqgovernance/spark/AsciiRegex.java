package io.github.dqgovernance.spark;

import java.io.Serializable;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.BitSet;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;
import org.apache.spark.unsafe.types.UTF8String;

/**
 * {@code rlike(text, pattern)} with Spark's answer, as a deterministic automaton over the text's bytes.
 *
 * <p>Why: Spark's {@code rlike} decodes each value into a Java string and runs {@code Pattern.find}, which
 * backtracks through every group and quantifier. On a governed write that was the largest single cost (the e-mail
 * format rule: about half of a plain parquet write). An automaton reads each byte once.
 *
 * <p>Same answer by construction, where it is used at all:
 * <ul>
 *   <li>{@link #compile} accepts only a plain subset of Java's syntax (literals, bracket classes, {@code . \d \w
 *       \s}, groups, alternation, greedy or lazy quantifiers, {@code ^} first and {@code $} last) and gives null
 *       for anything else (flags, back references, look-around, possessive quantifiers, {@code \b}, non-ASCII
 *       pattern text): the caller then keeps Spark's own {@code rlike}. For whether a match exists, greedy and
 *       lazy quantifiers agree, and so do a backtracking matcher and an automaton;</li>
 *   <li>only ASCII text runs through the automaton: a byte at or above 0x80 hands that value to Java's own
 *       {@code Pattern}, exactly as Spark runs it;</li>
 *   <li>{@code $} follows {@code java.util.regex}: the end of the text, or before a line terminator that ends it
 *       ({@code \n}, {@code \r}, {@code \r\n}; never between {@code \r} and {@code \n}).</li>
 * </ul>
 * AsciiRegexTest compares both on random text for every pattern the engine writes.
 */
public final class AsciiRegex implements Serializable {
  private static final long serialVersionUID = 1L;
  /** automaton states at most; a pattern that needs more keeps Spark's rlike */
  private static final int MAX_STATES = 2048;
  private static final int NFA_LIMIT = 4096;

  private final String pattern;
  private final int[] next; // state << 7 | byte -> state
  private final boolean[] accepting;
  private final int dead; // -1 when no state is dead (an unanchored search never dies)
  private final boolean endAnchored;
  private transient Pattern javaRegex;

  private AsciiRegex(String pattern, int[] next, boolean[] accepting, int dead, boolean endAnchored) {
    this.pattern = pattern;
    this.next = next;
    this.accepting = accepting;
    this.dead = dead;
    this.endAnchored = endAnchored;
  }

  /** The automaton for {@code pattern}, or null when its syntax is outside the supported subset. */
  public static AsciiRegex compile(String pattern) {
    try {
      Parser parser = new Parser(pattern);
      Node body = parser.parse();
      Pattern.compile(pattern); // what Java refuses is not ours to accept
      return Builder.build(pattern, body, parser.beginAnchored, parser.endAnchored);
    } catch (Unsupported | java.util.regex.PatternSyntaxException e) {
      return null;
    } catch (RuntimeException | StackOverflowError e) {
      return null; // a fault of ours: the rule keeps Spark's rlike, with the same answer
    }
  }

  /** Whether {@code text} contains a match: Spark's {@code rlike}, i.e. {@code Pattern.matcher(text).find(0)}. */
  public boolean find(UTF8String text) {
    try {
      return run(text);
    } catch (RuntimeException e) {
      return javaPattern().matcher(text.toString()).find(0); // a fault of ours never fails the user's write
    }
  }

  private boolean run(UTF8String text) {
    int n = text.numBytes();
    int state = 0; // the start state is the first subset
    if (!endAnchored && accepting[state]) {
      return true;
    }
    for (int i = 0; i < n; i++) {
      byte b = text.getByte(i);
      if (b < 0) {
        return javaPattern().matcher(text.toString()).find(0);
      }
      int to = next[state << 7 | b];
      if (to == state) {
        // Why a branch, not an assignment: most bytes keep the state (a run of [a-z0-9]+), and a predicted
        // branch lets the next byte's lookup start before this one's ends, where "state = to" chains them all.
        continue;
      }
      state = to;
      if (!endAnchored) {
        if (accepting[state]) {
          return true;
        }
        if (state == dead) {
          return false; // anchored at the start, and no longer prefix can match
        }
      } else if (state == dead && i < n - 2) {
        return false; // no state from here on accepts, and neither do those before the last two bytes
      }
    }
    if (!endAnchored) {
      return false;
    }
    return accepting[state] || endsBeforeTerminator(text, n);
  }

  /** {@code $} before a final line terminator: the text less its {@code \n}, {@code \r} or {@code \r\n} matches. */
  private boolean endsBeforeTerminator(UTF8String text, int n) {
    byte lastByte = n >= 1 ? text.getByte(n - 1) : 0;
    if (lastByte == '\r' || lastByte == '\n') {
      if (n >= 2 && text.getByte(n - 2) == '\r' && lastByte == '\n') {
        return accepting[stateAfter(text, n - 2)]; // never between \r and \n
      }
      return accepting[stateAfter(text, n - 1)];
    }
    return false;
  }

  /** The state after the first {@code bytes} bytes (all ASCII: run has read them). */
  private int stateAfter(UTF8String text, int bytes) {
    int state = 0;
    for (int i = 0; i < bytes; i++) {
      state = next[state << 7 | text.getByte(i)];
    }
    return state;
  }

  private Pattern javaPattern() {
    Pattern p = javaRegex;
    if (p == null) {
      p = Pattern.compile(pattern);
      javaRegex = p;
    }
    return p;
  }

  int states() {
    return accepting.length;
  }

  @Override
  public String toString() {
    return "ascii_regex(" + pattern + ")";
  }

  @Override
  public boolean equals(Object other) {
    return other instanceof AsciiRegex && ((AsciiRegex) other).pattern.equals(pattern);
  }

  @Override
  public int hashCode() {
    return pattern.hashCode();
  }

  /** The set holding {@code member} alone (a character, or an automaton state). */
  private static BitSet single(int member) {
    BitSet set = new BitSet();
    set.set(member);
    return set;
  }

  private static BitSet range(int low, int high) {
    BitSet set = new BitSet();
    set.set(low, high + 1);
    return set;
  }

  private static final class Unsupported extends Exception {
    Unsupported() {
      super(null, null, false, false);
    }
  }

  // ---- syntax: the pattern as a tree of character sets, sequences, alternatives and repeats

  private abstract static class Node {}

  private static final class Chars extends Node {
    final BitSet set; // over bytes 0..127

    Chars(BitSet set) {
      this.set = set;
    }
  }

  private static final class Seq extends Node {
    final List<Node> items;

    Seq(List<Node> items) {
      this.items = items;
    }
  }

  private static final class Alt extends Node {
    final List<Node> options;

    Alt(List<Node> options) {
      this.options = options;
    }
  }

  private static final class Repeat extends Node {
    final Node body;
    final int min;
    final int max; // -1: unbounded

    Repeat(Node body, int min, int max) {
      this.body = body;
      this.min = min;
      this.max = max;
    }
  }

  private static final class Parser {
    private static final String LITERAL_PUNCTUATION = "@%'\"!#&,-/:;<=>_~` ";
    private final String text;
    private int pos;
    boolean beginAnchored;
    boolean endAnchored;

    Parser(String text) {
      this.text = text;
    }

    Node parse() throws Unsupported {
      for (int i = 0; i < text.length(); i++) {
        char c = text.charAt(i);
        if (c < 0x20 || c >= 0x7f) {
          throw new Unsupported();
        }
      }
      if (text.startsWith("^")) {
        beginAnchored = true;
        pos = 1;
      }
      String body = text;
      if (text.endsWith("$") && !escapedAt(text.length() - 1) && text.length() > pos) {
        endAnchored = true;
        body = text.substring(0, text.length() - 1);
      }
      Parser inner = new Parser(body);
      inner.pos = pos;
      Node node = inner.alternation();
      if (inner.pos != body.length()) {
        throw new Unsupported(); // a stray ')', or an anchor inside the pattern
      }
      if ((beginAnchored || endAnchored) && node instanceof Alt) {
        throw new Unsupported(); // ^a|b: the anchor belongs to one alternative only
      }
      return node;
    }

    /** Whether the character at {@code index} is escaped by an odd run of backslashes. */
    private boolean escapedAt(int index) {
      int slashes = 0;
      for (int i = index - 1; i >= 0 && text.charAt(i) == '\\'; i--) {
        slashes++;
      }
      return slashes % 2 == 1;
    }

    private boolean more() {
      return pos < text.length();
    }

    private char peek() {
      return text.charAt(pos);
    }

    private Node alternation() throws Unsupported {
      List<Node> options = new ArrayList<>();
      options.add(sequence());
      while (more() && peek() == '|') {
        pos++;
        options.add(sequence());
      }
      return options.size() == 1 ? options.get(0) : new Alt(options);
    }

    private Node sequence() throws Unsupported {
      List<Node> items = new ArrayList<>();
      while (more() && peek() != '|' && peek() != ')') {
        items.add(quantified(atom()));
      }
      return new Seq(items);
    }

    private Node quantified(Node atom) throws Unsupported {
      if (!more()) {
        return atom;
      }
      int min;
      int max;
      char c = peek();
      if (c == '*') {
        min = 0;
        max = -1;
        pos++;
      } else if (c == '+') {
        min = 1;
        max = -1;
        pos++;
      } else if (c == '?') {
        min = 0;
        max = 1;
        pos++;
      } else if (c == '{') {
        int close = text.indexOf('}', pos);
        if (close < 0) {
          throw new Unsupported();
        }
        String[] bounds = text.substring(pos + 1, close).split(",", -1);
        if (bounds.length > 2 || !bounds[0].matches("[0-9]{1,4}")
            || (bounds.length == 2 && !bounds[1].matches("[0-9]{0,4}"))) {
          throw new Unsupported();
        }
        min = Integer.parseInt(bounds[0]);
        max = bounds.length == 1 ? min : bounds[1].isEmpty() ? -1 : Integer.parseInt(bounds[1]);
        if (max != -1 && max < min) {
          throw new Unsupported();
        }
        pos = close + 1;
      } else {
        return atom;
      }
      if (more() && peek() == '?') {
        pos++; // lazy: the same set of texts with a match
      }
      if (more() && (peek() == '+' || peek() == '*' || peek() == '?' || peek() == '{')) {
        throw new Unsupported(); // possessive, or a quantifier Java reads otherwise
      }
      return new Repeat(atom, min, max);
    }

    private Node atom() throws Unsupported {
      char c = text.charAt(pos++);
      switch (c) {
        case '(':
          if (more() && peek() == '?') {
            if (pos + 1 < text.length() && text.charAt(pos + 1) == ':') {
              pos += 2;
            } else {
              throw new Unsupported(); // flags, look-around, named or atomic groups
            }
          }
          Node inner = alternation();
          if (!more() || peek() != ')') {
            throw new Unsupported();
          }
          pos++;
          return inner;
        case '[':
          return new Chars(bracket());
        case '.':
          BitSet any = range(0, 127);
          any.clear('\n');
          any.clear('\r');
          return new Chars(any);
        case '\\':
          return new Chars(escape(false));
        default:
          if (Character.isLetterOrDigit(c) || LITERAL_PUNCTUATION.indexOf(c) >= 0) {
            return new Chars(single(c));
          }
          throw new Unsupported(); // ^ $ inside, a stray quantifier, ] } or anything Java reads otherwise
      }
    }

    /** A bracket class after its '['. */
    private BitSet bracket() throws Unsupported {
      boolean negated = more() && peek() == '^';
      if (negated) {
        pos++;
      }
      BitSet set = new BitSet(128);
      boolean first = true;
      while (true) {
        if (!more()) {
          throw new Unsupported();
        }
        char c = text.charAt(pos++);
        if (c == ']' && !first) {
          break;
        }
        if (c == '[' || c == ']' || (c == '&' && more() && peek() == '&')) {
          throw new Unsupported(); // nested classes and intersections
        }
        first = false;
        if (c == '\\') {
          set.or(escape(true));
          continue;
        }
        if (c == '-' && !(more() && peek() == ']') && !set.isEmpty()) {
          throw new Unsupported(); // a '-' after a range or an escape: Java's reading is subtle
        }
        if (more() && peek() == '-' && pos + 1 < text.length() && text.charAt(pos + 1) != ']') {
          char high = text.charAt(pos + 1);
          if (high == '\\' || high == '[' || high < c) {
            throw new Unsupported();
          }
          pos += 2;
          set.or(range(c, high));
          if (more() && peek() == '-' && pos + 1 < text.length() && text.charAt(pos + 1) != ']') {
            throw new Unsupported();
          }
        } else {
          set.set(c);
        }
      }
      if (negated) {
        set.flip(0, 128);
      }
      return set;
    }

    /** The set an escape after its '\' stands for; inside a class, only the positive shorthands. */
    private BitSet escape(boolean inClass) throws Unsupported {
      if (!more()) {
        throw new Unsupported();
      }
      char c = text.charAt(pos++);
      switch (c) {
        case 'd':
        case 'w':
        case 's':
          return shorthand(c);
        case 'D':
        case 'W':
        case 'S': {
          if (inClass) {
            throw new Unsupported();
          }
          BitSet complement = shorthand(Character.toLowerCase(c));
          complement.flip(0, 128);
          return complement;
        }
        case 't':
          return single('\t');
        case 'n':
          return single('\n');
        case 'r':
          return single('\r');
        case 'f':
          return single('\f');
        default:
          if (Character.isLetterOrDigit(c)) {
            throw new Unsupported(); // \b \A \z \Q \x \p \1 \0 ...: constructs of their own
          }
          return single(c); // escaped punctuation is the character itself
      }
    }

    /** {@code \d}, {@code \w} and {@code \s} as Java reads them without flags: ASCII only. */
    private static BitSet shorthand(char c) {
      if (c == 'd') {
        return range('0', '9');
      }
      if (c == 'w') {
        BitSet w = range('a', 'z');
        w.or(range('A', 'Z'));
        w.or(range('0', '9'));
        w.set('_');
        return w;
      }
      BitSet s = range('\t', '\r'); // \t \n \x0B \f \r
      s.set(' ');
      return s;
    }
  }

  // ---- automaton: Thompson's construction, then subsets

  private static final class Builder {
    private final List<int[]> epsilons = new ArrayList<>(); // per state: targets without input
    private final List<BitSet> sets = new ArrayList<>(); // per state: the set its one edge reads, or null
    private final List<Integer> targets = new ArrayList<>();

    private int state() throws Unsupported {
      if (sets.size() >= NFA_LIMIT) {
        throw new Unsupported();
      }
      epsilons.add(new int[0]);
      sets.add(null);
      targets.add(-1);
      return sets.size() - 1;
    }

    private void epsilon(int from, int to) {
      int[] old = epsilons.get(from);
      int[] grown = Arrays.copyOf(old, old.length + 1);
      grown[old.length] = to;
      epsilons.set(from, grown);
    }

    /** The fragment for {@code node}: its entry state; it ends by an epsilon into {@code exit}. */
    private int fragment(Node node, int exit) throws Unsupported {
      if (node instanceof Chars) {
        int s = state();
        sets.set(s, ((Chars) node).set);
        targets.set(s, exit);
        return s;
      }
      if (node instanceof Seq) {
        int entry = exit;
        List<Node> items = ((Seq) node).items;
        for (int i = items.size() - 1; i >= 0; i--) {
          entry = fragment(items.get(i), entry);
        }
        return entry;
      }
      if (node instanceof Alt) {
        int s = state();
        for (Node option : ((Alt) node).options) {
          epsilon(s, fragment(option, exit));
        }
        return s;
      }
      Repeat r = (Repeat) node;
      int entry = exit;
      if (r.max == -1) {
        int loop = state(); // loop: body back to loop, or leave
        epsilon(loop, exit);
        epsilon(loop, fragment(r.body, loop));
        entry = loop;
      } else {
        for (int i = r.min; i < r.max; i++) { // max - min optional copies, after the min required ones
          int optional = state(); // skip the copy, or read it
          epsilon(optional, entry);
          epsilon(optional, fragment(r.body, entry));
          entry = optional;
        }
      }
      for (int i = 0; i < r.min; i++) {
        entry = fragment(r.body, entry);
      }
      return entry;
    }

    private BitSet closure(BitSet states) {
      BitSet out = (BitSet) states.clone();
      ArrayDeque<Integer> work = new ArrayDeque<>();
      states.stream().forEach(work::push);
      while (!work.isEmpty()) {
        for (int t : epsilons.get(work.pop())) {
          if (!out.get(t)) {
            out.set(t);
            work.push(t);
          }
        }
      }
      return out;
    }

    static AsciiRegex build(String pattern, Node body, boolean beginAnchored, boolean endAnchored)
        throws Unsupported {
      Builder b = new Builder();
      int accept = b.state();
      int entry = b.fragment(body, accept);
      if (!beginAnchored) { // a search: any text may come before the match
        int scan = b.state();
        b.sets.set(scan, range(0, 127));
        b.targets.set(scan, scan);
        b.epsilon(scan, entry);
        entry = scan;
      }
      Map<BitSet, Integer> index = new HashMap<>();
      List<BitSet> subsets = new ArrayList<>();
      BitSet first = b.closure(single(entry));
      index.put(first, 0);
      subsets.add(first);
      List<int[]> rows = new ArrayList<>();
      for (int d = 0; d < subsets.size(); d++) {
        BitSet current = subsets.get(d);
        int[] row = new int[128];
        for (int c = 0; c < 128; c++) {
          BitSet moved = new BitSet();
          for (int s = current.nextSetBit(0); s >= 0; s = current.nextSetBit(s + 1)) {
            BitSet set = b.sets.get(s);
            if (set != null && set.get(c)) {
              moved.set(b.targets.get(s));
            }
          }
          BitSet closed = b.closure(moved);
          Integer known = index.get(closed);
          if (known == null) {
            if (subsets.size() >= MAX_STATES) {
              throw new Unsupported();
            }
            known = subsets.size();
            index.put(closed, known);
            subsets.add(closed);
          }
          row[c] = known;
        }
        rows.add(row);
      }
      int[] next = new int[subsets.size() * 128];
      boolean[] accepting = new boolean[subsets.size()];
      int dead = -1;
      for (int d = 0; d < subsets.size(); d++) {
        System.arraycopy(rows.get(d), 0, next, d * 128, 128);
        accepting[d] = subsets.get(d).get(accept);
        if (subsets.get(d).isEmpty()) {
          dead = d;
        }
      }
      return new AsciiRegex(pattern, next, accepting, dead, endAnchored);
    }
  }
}
