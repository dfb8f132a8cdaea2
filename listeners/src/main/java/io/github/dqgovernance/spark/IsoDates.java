package io.github.dqgovernance.spark;

import org.apache.spark.unsafe.types.UTF8String;

/**
 * {@code yyyy-MM-dd} text read from its bytes: whether it is exactly {@code dddd-dd-dd} naming a real day, and
 * that day.
 *
 * <p>Why: the engine's ISO date parse (formats.parse_date, carried by the manifest as {@code isoDateParse}) is
 * Spark's date cast guarded by shape tests, which on a governed write cost about half of a plain parquet write.
 * For text of exactly ten ASCII bytes {@code dddd-dd-dd}, that parse is the cast, and the cast is
 * {@code LocalDate.of(year, month, day)} (null when that day does not exist, in the proleptic Gregorian calendar
 * Spark uses). {@link DateRewrite} runs these methods on such text and leaves every other value to the
 * parse itself. IsoDatesTest compares both methods with {@code LocalDate} on every year, month and day.
 */
public final class IsoDates {
  private IsoDates() {}

  /** days from 0000-01-01 to 1970-01-01 (java.time's DAYS_0000_TO_1970) */
  private static final int DAYS_0000_TO_1970 = 719_528;

  /** Whether {@code text} is exactly {@code dddd-dd-dd} in ASCII and names a day that exists. */
  public static boolean isPlainDay(UTF8String text) {
    if (text.numBytes() != 10 || text.getByte(4) != '-' || text.getByte(7) != '-') {
      return false;
    }
    for (int i = 0; i < 10; i++) {
      if (i != 4 && i != 7 && (text.getByte(i) < '0' || text.getByte(i) > '9')) {
        return false;
      }
    }
    int year = number(text, 0, 4);
    int month = number(text, 5, 2);
    int day = number(text, 8, 2);
    return month >= 1 && month <= 12 && day >= 1 && day <= lengthOfMonth(year, month);
  }

  /** {@link #isPlainDay}, false for null text. */
  public static boolean isPlainDayOrFalse(UTF8String text) {
    return text != null && isPlainDay(text);
  }

  /** The day of text that {@link #isPlainDay} accepts, in days since 1970-01-01 (Spark's date value). */
  public static int epochDay(UTF8String text) {
    int year = number(text, 0, 4);
    int month = number(text, 5, 2);
    int day = number(text, 8, 2);
    // java.time.LocalDate.toEpochDay, for years 0 to 9999
    int total = 365 * year + (year + 3) / 4 - (year + 99) / 100 + (year + 399) / 400 + (367 * month - 362) / 12
        + day - 1;
    if (month > 2) {
      total -= isLeap(year) ? 1 : 2;
    }
    return total - DAYS_0000_TO_1970;
  }

  private static int number(UTF8String text, int from, int digits) {
    int n = 0;
    for (int i = from; i < from + digits; i++) {
      n = n * 10 + (text.getByte(i) - '0');
    }
    return n;
  }

  private static boolean isLeap(int year) {
    return year % 4 == 0 && (year % 100 != 0 || year % 400 == 0);
  }

  private static int lengthOfMonth(int year, int month) {
    switch (month) {
      case 2:
        return isLeap(year) ? 29 : 28;
      case 4:
      case 6:
      case 9:
      case 11:
        return 30;
      default:
        return 31;
    }
  }
}
