package io.github.dqgovernance.listener;

import java.net.URI;
import java.util.Locale;

/**
 * The OpenLineage (namespace, name) of a written path, by the rule of {@code dq_governance.lineage.facets
 * .dataset_identity}, which names the manifest's datasets: {@code file} + the path for local files; else
 * {@code scheme://authority} + the path, with s3a and s3n named s3, and no leading slash in the name for the object
 * stores (s3, gs, abfss, wasbs). Trailing slashes are dropped (as {@code manifest.path_identity} does).
 */
public final class DatasetIdentity {
  private DatasetIdentity() {}

  /** {namespace, name} of a path URI (a URI without a scheme is a local path). */
  public static String[] of(URI uri) {
    String scheme = uri.getScheme() == null ? "file" : uri.getScheme().toLowerCase(Locale.ROOT);
    if (scheme.equals("s3a") || scheme.equals("s3n")) {
      scheme = "s3";
    }
    String path = uri.getPath() == null ? "" : uri.getPath();
    int end = path.length();
    while (end > 1 && path.charAt(end - 1) == '/') {
      end--;
    }
    path = path.substring(0, end);
    if (scheme.equals("file")) {
      return new String[] {"file", path};
    }
    if (scheme.equals("s3") || scheme.equals("gs") || scheme.equals("abfss") || scheme.equals("wasbs")) {
      int start = 0;
      while (start < path.length() && path.charAt(start) == '/') {
        start++;
      }
      path = path.substring(start);
    }
    return new String[] {scheme + "://" + (uri.getAuthority() == null ? "" : uri.getAuthority()), path};
  }
}
