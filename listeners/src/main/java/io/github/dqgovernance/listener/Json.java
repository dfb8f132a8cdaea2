package io.github.dqgovernance.listener;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A small strict JSON reader (RFC 8259) producing Map / List / String / Long / Double / Boolean / null.
 *
 * <p>Why not Jackson: inside the openlineage-spark jar Jackson is relocated, while the plain client jar
 * uses it un-relocated, so no single Jackson class name works in both. The manifest and the recorded
 * results are small documents; this keeps the extension free of classpath assumptions.
 */
final class Json {

  /** A syntax error with its 1-based line and column. */
  static final class SyntaxError extends Exception {
    final int line;
    final int column;

    SyntaxError(String message, int line, int column) {
      super("invalid JSON at line " + line + ", column " + column + ": " + message);
      this.line = line;
      this.column = column;
    }
  }

  private final String text;
  private int pos;

  private Json(String text) {
    this.text = text;
  }

  /** Parses one JSON document; trailing content other than whitespace is an error. */
  static Object parse(String text) throws SyntaxError {
    Json reader = new Json(text);
    reader.skipWhitespace();
    Object value = reader.readValue();
    reader.skipWhitespace();
    if (reader.pos < text.length()) {
      throw reader.error("unexpected content after the document");
    }
    return value;
  }

  private Object readValue() throws SyntaxError {
    if (pos >= text.length()) {
      throw error("unexpected end of input");
    }
    char c = text.charAt(pos);
    switch (c) {
      case '{':
        return readObject();
      case '[':
        return readArray();
      case '"':
        return readString();
      case 't':
        return readLiteral("true", Boolean.TRUE);
      case 'f':
        return readLiteral("false", Boolean.FALSE);
      case 'n':
        return readLiteral("null", null);
      default:
        if (c == '-' || (c >= '0' && c <= '9')) {
          return readNumber();
        }
        throw error("unexpected character '" + c + "'");
    }
  }

  private Map<String, Object> readObject() throws SyntaxError {
    Map<String, Object> out = new LinkedHashMap<>();
    pos++; // {
    skipWhitespace();
    if (peek() == '}') {
      pos++;
      return out;
    }
    while (true) {
      skipWhitespace();
      if (peek() != '"') {
        throw error("expected a string key");
      }
      String key = readString();
      skipWhitespace();
      expect(':');
      skipWhitespace();
      out.put(key, readValue());
      skipWhitespace();
      char c = peek();
      pos++;
      if (c == '}') {
        return out;
      }
      if (c != ',') {
        pos--;
        throw error("expected ',' or '}'");
      }
    }
  }

  private List<Object> readArray() throws SyntaxError {
    List<Object> out = new ArrayList<>();
    pos++; // [
    skipWhitespace();
    if (peek() == ']') {
      pos++;
      return out;
    }
    while (true) {
      skipWhitespace();
      out.add(readValue());
      skipWhitespace();
      char c = peek();
      pos++;
      if (c == ']') {
        return out;
      }
      if (c != ',') {
        pos--;
        throw error("expected ',' or ']'");
      }
    }
  }

  private String readString() throws SyntaxError {
    pos++; // opening quote
    StringBuilder out = null;
    int start = pos;
    while (true) {
      if (pos >= text.length()) {
        throw error("unterminated string");
      }
      char c = text.charAt(pos);
      if (c == '"') {
        String value = out == null ? text.substring(start, pos) : out.append(text, start, pos).toString();
        pos++;
        return value;
      }
      if (c < 0x20) {
        throw error("control character in string");
      }
      if (c == '\\') {
        if (out == null) {
          out = new StringBuilder();
        }
        out.append(text, start, pos);
        pos++;
        if (pos >= text.length()) {
          throw error("unterminated escape");
        }
        char e = text.charAt(pos);
        switch (e) {
          case '"': out.append('"'); break;
          case '\\': out.append('\\'); break;
          case '/': out.append('/'); break;
          case 'b': out.append('\b'); break;
          case 'f': out.append('\f'); break;
          case 'n': out.append('\n'); break;
          case 'r': out.append('\r'); break;
          case 't': out.append('\t'); break;
          case 'u':
            if (pos + 4 >= text.length()) {
              throw error("truncated \\u escape");
            }
            try {
              out.append((char) Integer.parseInt(text.substring(pos + 1, pos + 5), 16));
            } catch (NumberFormatException ex) {
              throw error("invalid \\u escape");
            }
            pos += 4;
            break;
          default:
            throw error("invalid escape '\\" + e + "'");
        }
        pos++;
        start = pos;
        continue;
      }
      pos++;
    }
  }

  private Object readNumber() throws SyntaxError {
    int start = pos;
    if (peek() == '-') {
      pos++;
    }
    boolean integral = true;
    int first = pos;
    int digits = skipDigits();
    if (digits == 0 || (digits > 1 && text.charAt(first) == '0')) {
      throw error("invalid number");
    }
    if (pos < text.length() && text.charAt(pos) == '.') {
      integral = false;
      pos++;
      if (skipDigits() == 0) {
        throw error("invalid number");
      }
    }
    if (pos < text.length() && (text.charAt(pos) == 'e' || text.charAt(pos) == 'E')) {
      integral = false;
      pos++;
      if (pos < text.length() && (text.charAt(pos) == '+' || text.charAt(pos) == '-')) {
        pos++;
      }
      if (skipDigits() == 0) {
        throw error("invalid number");
      }
    }
    String number = text.substring(start, pos);
    if (integral) {
      try {
        return Long.parseLong(number);
      } catch (NumberFormatException tooLong) {
        return Double.parseDouble(number);
      }
    }
    return Double.parseDouble(number);
  }

  private int skipDigits() {
    int start = pos;
    while (pos < text.length() && text.charAt(pos) >= '0' && text.charAt(pos) <= '9') {
      pos++;
    }
    return pos - start;
  }

  private Object readLiteral(String literal, Object value) throws SyntaxError {
    if (!text.startsWith(literal, pos)) {
      throw error("unexpected token");
    }
    pos += literal.length();
    return value;
  }

  private void expect(char c) throws SyntaxError {
    if (peek() != c) {
      throw error("expected '" + c + "'");
    }
    pos++;
  }

  private char peek() throws SyntaxError {
    if (pos >= text.length()) {
      throw error("unexpected end of input");
    }
    return text.charAt(pos);
  }

  private void skipWhitespace() {
    while (pos < text.length()) {
      char c = text.charAt(pos);
      if (c != ' ' && c != '\n' && c != '\r' && c != '\t') {
        return;
      }
      pos++;
    }
  }

  private SyntaxError error(String message) {
    int line = 1;
    int column = 1;
    for (int i = 0; i < Math.min(pos, text.length()); i++) {
      if (text.charAt(i) == '\n') {
        line++;
        column = 1;
      } else {
        column++;
      }
    }
    return new SyntaxError(message, line, column);
  }
}
