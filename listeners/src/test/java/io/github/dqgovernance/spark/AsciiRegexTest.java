package io.github.dqgovernance.spark;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.github.dqgovernance.JavaSerialization;
import java.util.List;
import java.util.Random;
import java.util.regex.Pattern;
import org.apache.spark.unsafe.types.UTF8String;
import org.junit.jupiter.api.Test;

/** AsciiRegex against java.util.regex (what Spark's rlike runs) on mutated and random text. */
class AsciiRegexTest {
  static final String LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
  static final String ALNUM = LETTERS + "0123456789";
  /** the e-mail format as the engine writes it (checks/formats.py), and spelled out (checks/regex_text.py) */
  static final String EMAIL = "^[A-Za-z0-9._%+\\-]+@[A-Za-z0-9](?:[A-Za-z0-9\\-]*[A-Za-z0-9])?"
      + "(?:\\.[A-Za-z0-9](?:[A-Za-z0-9\\-]*[A-Za-z0-9])?)*\\.[A-Za-z]{2,}$";
  static final String EMAIL_SPELLED = "^[" + ALNUM + "._%+\\-]+@[" + ALNUM + "](?:[" + ALNUM + "\\-]*[" + ALNUM
      + "])?(?:\\.[" + ALNUM + "](?:[" + ALNUM + "\\-]*[" + ALNUM + "])?)*\\.[" + LETTERS + "]{2,}$";
  static final String HEX = "[0123456789abcdefABCDEF]";
  static final String UUID = "^" + HEX + "{8}-" + HEX + "{4}-" + HEX + "{4}-" + HEX + "{4}-" + HEX + "{12}$";
  static final String OCTET = "(25[0-5]|2[0-4][0-9]|1[0-9]{2}|[1-9]?[0-9])";
  static final String IPV4 = "^" + OCTET + "\\." + OCTET + "\\." + OCTET + "\\." + OCTET + "$";
  static final String PHONE_BR =
      "^(\\+?55[\\s.\\-]?)?(\\([1-9]{2}\\)|[1-9]{2})[\\s.\\-]?(9[0-9]{4}|[2-5][0-9]{3})[\\s.\\-]?[0-9]{4}$";
  static final String CPF = "^[0-9]{3}\\.?[0-9]{3}\\.?[0-9]{3}-?[0-9]{2}$";
  static final String CNPJ = "^[0-9A-Z]{2}\\.?[0-9A-Z]{3}\\.?[0-9A-Z]{3}/?[0-9A-Z]{4}-?[0-9]{2}$";

  /** pattern, then texts it matches: the mutations of these reach both answers near the pattern's edges */
  static final List<List<String>> CASES = List.of(
      List.of(EMAIL, "ana.souza@example.com", "a@b.co", "x_y%z+w-1@sub-d.mail.example.org"),
      List.of(EMAIL_SPELLED, "ana.souza@example.com", "a@b.co", "first.last@a-b.c-d.io"),
      List.of(UUID, "123e4567-e89b-12d3-a456-426614174000", "ABCDEF01-2345-6789-abcd-ef0123456789"),
      List.of(IPV4, "192.168.0.1", "255.255.255.255", "0.0.0.0", "10.249.199.9"),
      List.of(PHONE_BR, "+55 (11) 91234-5678", "11 3456-7890", "5521987654321", "(21)2345.6789"),
      List.of(CPF, "123.456.789-09", "12345678909"),
      List.of(CNPJ, "12.ABC.345/01DE-35", "12345678000195"),
      List.of("^K[0-9]$", "K0", "K9"),
      List.of("[0-9]{6}", "123456", "x2024001-01-01", "+1234567"), // the date parser's year guard
      List.of("^[a-z]+(-[a-z]+)*$", "a", "ab-cd-ef"),
      List.of("(a|b)$", "a", "xb", "b\n"),
      List.of("(?:ab)*c", "c", "ababc", "zzabc"),
      List.of("x{2,3}y?", "xx", "xxxy", "axxxb"),
      List.of("^[^a-c]+$", "xyz", "d\r", "z\n"),
      List.of("\\d+\\.\\d*", "1.", "12.34"),
      List.of("^.$", "a", "b\n"),
      List.of("^$", "", "\n", "\r\n", "\r"),
      List.of("$", "", "abc"),
      List.of("", "", "abc"),
      List.of("a*?b", "b", "aab"),
      List.of("[a-]+!", "a-!", "-!"),
      List.of("^\\s\\S\\w\\W\\d\\D$", " a_.0x", "\tb9!5-"),
      List.of("(|x)y$", "y", "xy", "xy\r\n"),
      List.of("^[ -~]{3,5}$", "abc", "a b c", "~~~~"),
      List.of("[.]\\$#@", ".$#@", "a.$#@b"));

  /** text beyond the pattern's own: line terminators, a tab, non-ASCII (one, two, three and four bytes) */
  static final String EXTRA = "\n\r\t .-@é€😀";

  @Test
  void sameAnswerAsJavaRegex() {
    Random random = new Random(20261204);
    for (List<String> c : CASES) {
      String pattern = c.get(0);
      AsciiRegex regex = AsciiRegex.compile(pattern);
      assertNotNull(regex, pattern);
      Pattern java = Pattern.compile(pattern);
      String alphabet = alphabet(pattern, c.subList(1, c.size()));
      int matched = 0;
      int total = 0;
      for (String seed : c.subList(1, c.size())) {
        assertTrue(java.matcher(seed).find(0), pattern + " should match " + seed);
        for (int i = 0; i < 4000; i++) {
          String text = i == 0 ? seed : mutate(seed, alphabet, random);
          boolean expected = rlike(java, text);
          assertEquals(expected, regex.find(UTF8String.fromString(text)), () -> pattern + " on " + escape(text));
          matched += expected ? 1 : 0;
          total++;
        }
      }
      for (int i = 0; i < 4000; i++) {
        String text = random(alphabet, random.nextInt(12), random);
        assertEquals(rlike(java, text), regex.find(UTF8String.fromString(text)),
            () -> pattern + " on " + escape(text));
      }
      // both answers were reached often enough for the comparison to mean something
      assertTrue(matched > total / 20 && matched < total - total / 20 || pattern.isEmpty() || pattern.equals("$"),
          pattern + ": " + matched + " of " + total + " mutations matched");
    }
  }

  @Test
  void refusesWhatItCannotAnswerAlike() {
    for (String pattern : List.of("^(?i)(https?|ftp)://[^\\s/$.?#][^\\s]*$", "a++", "a*+b", "\\bword", "(?=a)b",
        "(?<n>a)", "(a)\\1", "[a-z&&[^b]]", "[[a]b]", "\\p{Alpha}", "\\x41", "\\Qa\\E", "^a|b", "a|b$", "a^b", "a$b",
        "é", "a{,3}", "a{2", "a{3,2}", "[a-z-0]", "[\\d-z]", "[\\D]", "a**", "(a", "a)", "[]a]", "]", "}", "\\",
        "\\0", "\\t\u0001")) {
      assertNull(AsciiRegex.compile(pattern), pattern);
    }
  }

  @Test
  void emailAnswers() {
    AsciiRegex email = AsciiRegex.compile(EMAIL_SPELLED);
    assertTrue(email.states() < 64, "states: " + email.states());
    assertTrue(email.find(UTF8String.fromString("ana@example.com")));
    assertFalse(email.find(UTF8String.fromString("ana@example")));
    assertTrue(email.find(UTF8String.fromString("ana@example.com\n"))); // Java's $ before a final terminator
    assertFalse(email.find(UTF8String.fromString("ana@example.com\n\n")));
    assertFalse(email.find(UTF8String.fromString("anã@example.com"))); // non-ASCII: Java's own answer
  }

  @Test
  void survivesSerialisationToExecutors() throws Exception {
    AsciiRegex regex = AsciiRegex.compile(CPF);
    AsciiRegex copy = JavaSerialization.roundTrip(regex);
    assertEquals(regex, copy);
    assertTrue(copy.find(UTF8String.fromString("123.456.789-09")));
    assertFalse(copy.find(UTF8String.fromString("123.456.789-0\u00e9"))); // the fallback Pattern, rebuilt
  }

  /** Spark's rlike: the pattern over the value's text, decoded from its UTF-8 bytes (a lone surrogate is '?'). */
  private static boolean rlike(Pattern java, String text) {
    return java.matcher(UTF8String.fromString(text).toString()).find(0);
  }

  private static String alphabet(String pattern, List<String> seeds) {
    StringBuilder out = new StringBuilder(EXTRA);
    for (String s : seeds) {
      out.append(s);
    }
    for (char c : pattern.toCharArray()) {
      if (c >= 0x20 && c < 0x7f) {
        out.append(c);
      }
    }
    return out.toString();
  }

  private static String mutate(String seed, String alphabet, Random random) {
    StringBuilder text = new StringBuilder(seed);
    int edits = 1 + random.nextInt(3);
    for (int e = 0; e < edits; e++) {
      int at = text.length() == 0 ? 0 : random.nextInt(text.length() + 1);
      String c = pick(alphabet, random);
      switch (random.nextInt(4)) {
        case 0:
          text.insert(at, c);
          break;
        case 1:
          if (at < text.length()) {
            text.deleteCharAt(at);
          }
          break;
        case 2:
          if (at < text.length()) {
            text.replace(at, at + 1, c);
          }
          break;
        default:
          text.append(random.nextBoolean() ? "\n" : random.nextBoolean() ? "\r\n" : "\r");
      }
    }
    return text.toString();
  }

  private static String random(String alphabet, int length, Random random) {
    StringBuilder text = new StringBuilder();
    for (int i = 0; i < length; i++) {
      text.append(pick(alphabet, random));
    }
    return text.toString();
  }

  /** one code point of the alphabet (so the emoji stays whole) */
  private static String pick(String alphabet, Random random) {
    int[] points = alphabet.codePoints().toArray();
    return new String(Character.toChars(points[random.nextInt(points.length)]));
  }

  private static String escape(String text) {
    StringBuilder out = new StringBuilder("\"");
    text.codePoints().forEach(c -> out.append(c >= 0x20 && c < 0x7f ? Character.toString(c)
        : String.format("\\u%04x", c)));
    return out.append('"').toString();
  }
}
