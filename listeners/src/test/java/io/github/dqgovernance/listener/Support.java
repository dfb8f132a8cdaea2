package io.github.dqgovernance.listener;

import io.openlineage.client.OpenLineage;
import io.openlineage.client.OpenLineageClientUtils;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.URISyntaxException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;

/** Test helpers: recorded listener events, the test manifest, and events as plain JSON maps. */
final class Support {
  private Support() {}

  static String resource(String name) {
    try (InputStream in = Support.class.getResourceAsStream("/" + name)) {
      if (in == null) {
        throw new IllegalStateException("missing test resource " + name);
      }
      return new String(in.readAllBytes(), StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  static Path resourcePath(String name) {
    try {
      return Paths.get(Support.class.getResource("/" + name).toURI());
    } catch (URISyntaxException e) {
      throw new IllegalStateException(e);
    }
  }

  /** A listener event recorded by listeners/tools/record_listener_events.py. */
  static OpenLineage.RunEvent event(String name) {
    return OpenLineageClientUtils.runEventFromJson(resource("events/" + name));
  }

  /** The event as the transport would serialise it, read back as maps and lists. */
  @SuppressWarnings("unchecked")
  static Map<String, Object> json(Object event) {
    try {
      return (Map<String, Object>) Json.parse(OpenLineageClientUtils.toJson(event));
    } catch (Json.SyntaxError e) {
      throw new AssertionError(e);
    }
  }

  @SuppressWarnings("unchecked")
  static Map<String, Object> dataset(Map<String, Object> event, String side, String nameSuffix) {
    for (Object d : (List<Object>) event.get(side)) {
      Map<String, Object> ds = (Map<String, Object>) d;
      if (((String) ds.get("name")).endsWith(nameSuffix)) {
        return ds;
      }
    }
    throw new AssertionError("no " + side + " dataset ending with " + nameSuffix);
  }

  @SuppressWarnings("unchecked")
  static Map<String, Object> map(Object value, String... path) {
    Object current = value;
    for (String key : path) {
      current = ((Map<String, Object>) current).get(key);
    }
    return (Map<String, Object>) current;
  }

  @SuppressWarnings("unchecked")
  static List<Object> list(Map<String, Object> value, String... path) {
    Object current = value;
    for (int i = 0; i < path.length - 1; i++) {
      current = ((Map<String, Object>) current).get(path[i]);
    }
    return (List<Object>) ((Map<String, Object>) current).get(path[path.length - 1]);
  }

  /** A transformer initialised with a manifest; warnings and info lines land in the given lists. */
  static GovernanceTransformer transformer(String manifest, List<String> warnings) {
    return initialized(new GovernanceTransformer(warnings::add, line -> {}), manifest);
  }

  static GovernanceTransformer transformer(List<String> warnings) {
    return transformer(resourcePath("manifests/governance.json").toString(), warnings);
  }

  /** A transformer on the test manifest whose session's current {catalog, database} is {@code currentDatabase}. */
  static GovernanceTransformer transformer(List<String> warnings, Supplier<String[]> currentDatabase) {
    return initialized(new GovernanceTransformer(warnings::add, line -> {}, currentDatabase),
        resourcePath("manifests/governance.json").toString());
  }

  private static GovernanceTransformer initialized(GovernanceTransformer t, String manifest) {
    t.initialize(manifest == null ? Map.of() : Map.of(GovernanceTransformer.MANIFEST_PROPERTY, manifest));
    return t;
  }

  static List<String> newList() {
    return new ArrayList<>();
  }
}
