package io.github.dqgovernance.masking;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Base64;
import java.util.Locale;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.api.java.UDF1;

/**
 * Keyed HMAC-SHA-256 of a normalised string, as a Spark UDF: the fast path of the {@code hmac} and
 * {@code tokenize} masks (the Python side falls back to Spark's {@code sha2} when this jar is absent).
 *
 * <p>Same bytes as the built-in path: the value is normalised exactly like {@code masking/methods.py}
 * (ASCII spaces trimmed; e-mail lower-cased; CPF digits only; CNPJ upper-cased letters and digits; phone
 * digits without trunk zeros, Brazil's 55 added to a bare DDD + number), an empty result is null, and the
 * HMAC is RFC 2104 over the inner and outer pads the caller derives from the key. The pads travel inside
 * this object (serialized with the task), never as plan text or conf: {@link #toString()} shows no key
 * material and Spark prints the UDF by its registered name only. The SHA-256 states after absorbing each
 * pad are computed once per instance and cloned per value, so a value costs two compressions.
 *
 * <p>Encodings: {@code hex}, {@code base64}, or {@code token} (the {@code tokenize} mask: the trimmed
 * value's letters and digits replaced from the digest bytes, digits by digits and letters by letters of
 * the same case, everything else kept; the k-th letter or digit from the right takes byte k mod 32).
 */
public final class HmacMask implements UDF1<String, String> {
  private static final long serialVersionUID = 1L;
  private static final char[] HEX = "0123456789abcdef".toCharArray();
  private static final int BLOCK = 64;

  /** How a value is normalised before hashing. */
  public enum Normaliser { TEXT, EMAIL, CPF, CNPJ, PHONE }

  private final byte[] innerPad;
  private final byte[] outerPad;
  private final Normaliser normaliser;
  private final String encoding;
  private transient volatile MessageDigest[] states;

  /**
   * @param innerPad key XOR 0x36, 64 bytes
   * @param outerPad key XOR 0x5c, 64 bytes
   * @param normaliser one of text, email, cpf, cnpj, phone (case-insensitive)
   * @param encoding hex, base64 or token
   */
  public HmacMask(byte[] innerPad, byte[] outerPad, String normaliser, String encoding) {
    if (innerPad.length != BLOCK || outerPad.length != BLOCK) {
      throw new IllegalArgumentException("HMAC-SHA-256 pads must be 64 bytes");
    }
    if (!"hex".equals(encoding) && !"base64".equals(encoding) && !"token".equals(encoding)) {
      throw new IllegalArgumentException("encoding must be hex, base64 or token, got " + encoding);
    }
    this.innerPad = innerPad.clone();
    this.outerPad = outerPad.clone();
    this.normaliser = Normaliser.valueOf(normaliser.toUpperCase(Locale.ROOT));
    this.encoding = encoding;
  }

  /**
   * A mask whose pads are the two binary columns of {@code row}: how Python hands the key over, so that the
   * pads cross py4j as a JVM object reference (a Row of a one-row DataFrame) and never as command text.
   */
  public static HmacMask fromPadRow(Row row, String normaliser, String encoding) {
    return new HmacMask((byte[]) row.get(0), (byte[]) row.get(1), normaliser, encoding);
  }

  @Override
  public String call(String value) throws Exception {
    if (value == null) {
      return null;
    }
    String text = normalise(value, normaliser);
    if (text.isEmpty()) {
      return null;
    }
    MessageDigest[] pads = states();
    MessageDigest inner = (MessageDigest) pads[0].clone();
    byte[] innerHash = inner.digest(text.getBytes(StandardCharsets.UTF_8));
    MessageDigest outer = (MessageDigest) pads[1].clone();
    byte[] digest = outer.digest(innerHash);
    switch (encoding) {
      case "base64":
        return Base64.getEncoder().encodeToString(digest);
      case "token":
        return token(trimSpaces(value), digest);
      default:
        return hex(digest);
    }
  }

  /** The format-preserving token of {@code shape} drawn from {@code digest} (see the class comment). */
  static String token(String shape, byte[] digest) {
    int remaining = 0;
    for (int i = 0; i < shape.length(); i = shape.offsetByCodePoints(i, 1)) {
      if (classed(shape.codePointAt(i))) {
        remaining++;
      }
    }
    StringBuilder out = new StringBuilder(shape.length());
    for (int i = 0; i < shape.length(); i = shape.offsetByCodePoints(i, 1)) {
      int cp = shape.codePointAt(i);
      if (!classed(cp)) {
        out.appendCodePoint(cp);
        continue;
      }
      remaining--;
      int v = digest[remaining % digest.length] & 0xff;
      if (cp >= '0' && cp <= '9') {
        out.append((char) ('0' + v % 10));
      } else if (upper(cp)) {
        out.append((char) ('A' + v % 26));
      } else {
        out.append((char) ('a' + v % 26));
      }
    }
    return out.toString();
  }

  /** Regex [\p{L}\p{N}]: any letter, or any number (decimal, letter-like or other). */
  static boolean classed(int cp) {
    if (Character.isLetter(cp)) {
      return true;
    }
    int type = Character.getType(cp);
    return type == Character.DECIMAL_DIGIT_NUMBER || type == Character.LETTER_NUMBER
        || type == Character.OTHER_NUMBER;
  }

  /** Spark's test upper(c) == c and lower(c) != c, on one character. */
  static boolean upper(int cp) {
    String c = new String(Character.toChars(cp));
    return c.equals(c.toUpperCase(Locale.ROOT)) && !c.equals(c.toLowerCase(Locale.ROOT));
  }

  private MessageDigest[] states() throws NoSuchAlgorithmException {
    MessageDigest[] current = states;
    if (current == null) {
      MessageDigest inner = MessageDigest.getInstance("SHA-256");
      inner.update(innerPad);
      MessageDigest outer = MessageDigest.getInstance("SHA-256");
      outer.update(outerPad);
      current = new MessageDigest[] {inner, outer};
      states = current;  // prototypes are only ever cloned, so sharing them between threads is safe
    }
    return current;
  }

  /** The canonical text a value is hashed as (empty when nothing is left). */
  public static String normalise(String value, Normaliser how) {
    String text = trimSpaces(value);
    switch (how) {
      case EMAIL:
        return text.toLowerCase(Locale.ROOT);
      case CPF:
        return digits(text);
      case CNPJ:
        return upperAlnum(text.toUpperCase(Locale.ROOT));
      case PHONE:
        return phone(digits(text));
      default:
        return text;
    }
  }

  /** Spark's trim(): ASCII spaces only, not tabs or other whitespace. */
  static String trimSpaces(String value) {
    int start = 0;
    int end = value.length();
    while (start < end && value.charAt(start) == ' ') {
      start++;
    }
    while (end > start && value.charAt(end - 1) == ' ') {
      end--;
    }
    return value.substring(start, end);
  }

  static String digits(String text) {
    StringBuilder out = new StringBuilder(text.length());
    for (int i = 0; i < text.length(); i++) {
      char c = text.charAt(i);
      if (c >= '0' && c <= '9') {
        out.append(c);
      }
    }
    return out.toString();
  }

  static String upperAlnum(String text) {
    StringBuilder out = new StringBuilder(text.length());
    for (int i = 0; i < text.length(); i++) {
      char c = text.charAt(i);
      if ((c >= '0' && c <= '9') || (c >= 'A' && c <= 'Z')) {
        out.append(c);
      }
    }
    return out.toString();
  }

  static String phone(String digits) {
    int start = 0;
    while (start < digits.length() && digits.charAt(start) == '0') {
      start++;
    }
    String number = digits.substring(start);
    return number.length() == 10 || number.length() == 11 ? "55" + number : number;
  }

  static String hex(byte[] bytes) {
    char[] out = new char[bytes.length * 2];
    for (int i = 0; i < bytes.length; i++) {
      out[2 * i] = HEX[(bytes[i] >> 4) & 0xf];
      out[2 * i + 1] = HEX[bytes[i] & 0xf];
    }
    return new String(out);
  }

  @Override
  public String toString() {
    return "HmacMask(" + normaliser.name().toLowerCase(Locale.ROOT) + ", " + encoding + ")";
  }
}
