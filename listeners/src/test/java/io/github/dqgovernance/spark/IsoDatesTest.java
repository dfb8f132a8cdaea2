package io.github.dqgovernance.spark;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.time.DateTimeException;
import java.time.LocalDate;
import java.util.List;
import org.apache.spark.sql.catalyst.util.DateTimeUtils;
import org.apache.spark.unsafe.types.UTF8String;
import org.junit.jupiter.api.Test;
import scala.Option;

/** IsoDates against java.time and Spark's own date cast (DateTimeUtils.stringToDate). */
class IsoDatesTest {

  @Test
  void everyYearMonthAndDayAgreesWithLocalDateAndSparksCast() {
    int days = 0;
    byte[] bytes = "0000-00-00".getBytes(StandardCharsets.US_ASCII);
    for (int year = 0; year <= 9999; year++) {
      for (int month = 0; month <= 13; month++) {
        for (int day = 0; day <= 32; day++) {
          digits(bytes, 0, 4, year);
          digits(bytes, 5, 2, month);
          digits(bytes, 8, 2, day);
          UTF8String text = UTF8String.fromBytes(bytes);
          Integer expected;
          try {
            expected = (int) LocalDate.of(year, month, day).toEpochDay();
          } catch (DateTimeException e) {
            expected = null;
          }
          assertEquals(expected != null, IsoDates.isPlainDay(text), text::toString);
          if (expected != null) {
            assertEquals(expected, IsoDates.epochDay(text), text::toString);
            days++;
          }
          if (year % 97 == 0 || year > 9990) { // Spark's cast is slower: a sample of years, the last ones all
            Option<Object> cast = DateTimeUtils.stringToDate(text);
            assertEquals(expected, cast.isDefined() ? (Integer) cast.get() : null, text::toString);
          }
        }
      }
    }
    assertEquals(3_652_425, days); // the days of years 0 to 9999
  }

  private static void digits(byte[] into, int from, int width, int value) {
    for (int i = from + width - 1; i >= from; i--, value /= 10) {
      into[i] = (byte) ('0' + value % 10);
    }
  }

  @Test
  void anythingButTenAsciiBytesDdddDdDdIsLeftToTheParse() {
    for (String text : List.of("", "2024-01-1", "2024-01-011", "2024-1-01 ", " 2024-01-1", "2024-01-01\n",
        "2024/01/01", "2024-01-0x", "+024-01-01", "-024-01-01", "2024-01-0 ", "2024-01-+1", "2024--1-01",
        "20240-1-01", "2024-01- 1", "２０２４-01-01", "2024-01-0\u0661", "2024-01-01T", "2024-01-01 00:00",
        "1/1/2024", "data-invalida")) {
      assertFalse(IsoDates.isPlainDay(UTF8String.fromString(text)), text);
      assertFalse(IsoDates.isPlainDayOrFalse(UTF8String.fromString(text)), text);
    }
    assertFalse(IsoDates.isPlainDayOrFalse(null)); // a format rule's null test: the parse decides null text
    assertTrue(IsoDates.isPlainDayOrFalse(UTF8String.fromString("2024-02-29")));
    assertFalse(IsoDates.isPlainDayOrFalse(UTF8String.fromString("2023-02-29")));
    assertTrue(IsoDates.isPlainDay(UTF8String.fromString("1970-01-01")));
    assertEquals(0, IsoDates.epochDay(UTF8String.fromString("1970-01-01")));
    assertEquals(-719_528, IsoDates.epochDay(UTF8String.fromString("0000-01-01")));
    assertEquals(2_932_896, IsoDates.epochDay(UTF8String.fromString("9999-12-31")));
  }
}
