package io.github.dqgovernance.listener;

import java.util.regex.Pattern;

/**
 * A dataset location glob: {@code **} crosses '/', {@code *} and {@code ?} do not. A glob ending in {@code /**}
 * also matches the directory itself ({@code s3://lake/orders/**} governs a write to {@code s3://lake/orders}).
 *
 * <p>The literal prefix (everything before the first wildcard) is checked with startsWith first, so a
 * manifest of many globs costs a few string comparisons per dataset, not a regex each.
 */
final class Glob {
  final String text;
  private final String prefix;
  private final Pattern pattern; // null when the glob has no wildcard: then it is an exact location

  Glob(String text) {
    this.text = stripTrailingSlash(text);
    int wildcard = firstWildcard(this.text);
    // a final "/**" matches the directory itself too: the prefix stops before its slash
    int literal = wildcard == this.text.length() - 2 && this.text.endsWith("/**") ? wildcard - 1 : wildcard;
    this.prefix = wildcard < 0 ? this.text : this.text.substring(0, literal);
    this.pattern = wildcard < 0 ? null : Pattern.compile(toRegex(this.text));
  }

  boolean matches(String location) {
    if (!location.startsWith(prefix)) {
      return false;
    }
    return pattern == null ? location.length() == prefix.length() : pattern.matcher(location).matches();
  }

  static String stripTrailingSlash(String text) {
    return text.length() > 1 && text.endsWith("/") ? text.substring(0, text.length() - 1) : text;
  }

  private static int firstWildcard(String text) {
    for (int i = 0; i < text.length(); i++) {
      char c = text.charAt(i);
      if (c == '*' || c == '?') {
        return i;
      }
    }
    return -1;
  }

  private static String toRegex(String glob) {
    StringBuilder out = new StringBuilder();
    int i = 0;
    while (i < glob.length()) {
      char c = glob.charAt(i);
      if (c == '/' && i > 0 && glob.substring(i).equals("/**")) {
        out.append("(?:/.*)?"); // the directory itself, or anything under it
        break;
      }
      if (c == '*') {
        if (i + 1 < glob.length() && glob.charAt(i + 1) == '*') {
          // `**/` also matches zero directories: a/**/b matches a/b
          boolean slash = i + 2 < glob.length() && glob.charAt(i + 2) == '/';
          out.append(slash ? "(?:.*/)?" : ".*");
          i += slash ? 3 : 2;
          continue;
        }
        out.append("[^/]*");
      } else if (c == '?') {
        out.append("[^/]");
      } else {
        out.append(Pattern.quote(String.valueOf(c)));
      }
      i++;
    }
    return out.toString();
  }
}
