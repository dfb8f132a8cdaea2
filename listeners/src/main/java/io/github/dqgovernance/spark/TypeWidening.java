package io.github.dqgovernance.spark;

import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Which written column types convert to the contract's type without changing any value, so the checks can read
 * the written column cast to the declared type (the written data itself is unchanged): a narrower integer to a
 * wider one, float to double, tinyint, smallint and int to double, an integer to a decimal with room for all its
 * digits, and a decimal to one with as many integer digits and as many fraction digits or more. Anything else
 * (long or double to decimal, double to float, text to a number) is not a widening. Types are Spark's simple
 * strings ({@code int}, {@code bigint}, {@code decimal(12,2)}), as the manifest declares them.
 */
final class TypeWidening {
  private static final List<String> INTEGERS = List.of("tinyint", "smallint", "int", "bigint");
  private static final int[] DIGITS = {3, 5, 10, 19}; // decimal digits of each integer type's widest value
  private static final Pattern DECIMAL = Pattern.compile("decimal\\((\\d+),(\\d+)\\)");

  private TypeWidening() {}

  /** Whether every {@code written} value is exactly a {@code declared} value. */
  static boolean lossless(String written, String declared) {
    int from = INTEGERS.indexOf(written);
    int[] to = decimal(declared);
    if (from >= 0) {
      int wider = INTEGERS.indexOf(declared);
      if (wider >= 0) {
        return wider > from;
      }
      if (declared.equals("double")) {
        return from <= 2; // at most 32 bits, within double's 53
      }
      return to != null && to[0] - to[1] >= DIGITS[from];
    }
    if (written.equals("float")) {
      return declared.equals("double");
    }
    int[] source = decimal(written);
    return source != null && to != null && to[1] >= source[1] && to[0] - to[1] >= source[0] - source[1];
  }

  /** {precision, scale} of a decimal type, else null. */
  private static int[] decimal(String type) {
    Matcher m = DECIMAL.matcher(type);
    return m.matches() ? new int[] {Integer.parseInt(m.group(1)), Integer.parseInt(m.group(2))} : null;
  }
}
