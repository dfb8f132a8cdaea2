package io.github.dqgovernance.listener;

import io.openlineage.client.OpenLineage;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.net.URI;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Facet plumbing: copy an immutable facets container into a builder (every typed facet and every
 * additional one), and facets whose JSON we already hold as a map.
 *
 * <p>The copy is reflective over the builder's typed setters, so a client version with more typed facets
 * than the one compiled against still keeps them all: the extension never drops what the listener set.
 */
final class Facets {
  private Facets() {}

  /** A dataset facet serialised as the given properties, with its own _schemaURL (e.g. dqgov_dataContract). */
  static final class MapDatasetFacet extends OpenLineage.DefaultDatasetFacet {
    private final URI schemaUrl;

    MapDatasetFacet(URI producer, URI schemaUrl, Map<String, Object> properties) {
      super(producer, null);
      this.schemaUrl = schemaUrl;
      getAdditionalProperties().putAll(properties);
    }

    @Override
    public URI get_schemaURL() {
      return schemaUrl;
    }
  }

  /** An input-dataset facet serialised as the given properties (recorded dataQuality* facets). */
  static final class MapInputFacet extends OpenLineage.DefaultInputDatasetFacet {
    private final URI schemaUrl;

    MapInputFacet(URI producer, URI schemaUrl, Map<String, Object> properties) {
      super(producer);
      this.schemaUrl = schemaUrl;
      getAdditionalProperties().putAll(properties);
    }

    @Override
    public URI get_schemaURL() {
      return schemaUrl;
    }
  }

  /** A builder setter paired with the matching getter of the built class. */
  private static final class Accessor {
    final String name;
    final Method getter;
    final Method setter;

    Accessor(String name, Method getter, Method setter) {
      this.name = name;
      this.getter = getter;
      this.setter = setter;
    }
  }

  private static final List<Accessor> DATASET =
      accessors(OpenLineage.DatasetFacets.class, OpenLineage.DatasetFacetsBuilder.class);
  private static final List<Accessor> INPUT =
      accessors(OpenLineage.InputDatasetInputFacets.class, OpenLineage.InputDatasetInputFacetsBuilder.class);

  private static List<Accessor> accessors(Class<?> built, Class<?> builder) {
    List<Accessor> out = new ArrayList<>();
    for (Method setter : builder.getMethods()) {
      if (setter.getParameterCount() != 1 || setter.getReturnType() != builder || setter.getName().equals("put")) {
        continue;
      }
      String name = setter.getName();
      try {
        Method getter = built.getMethod("get" + Character.toUpperCase(name.charAt(0)) + name.substring(1));
        out.add(new Accessor(name, getter, setter));
      } catch (NoSuchMethodException e) {
        throw new IllegalStateException("OpenLineage client: " + built.getSimpleName() + " has no getter for " + name);
      }
    }
    return Collections.unmodifiableList(out);
  }

  /** A builder holding every facet of {@code facets} (null = none) except those named in {@code skip}. */
  static OpenLineage.DatasetFacetsBuilder copy(OpenLineage.DatasetFacets facets, Set<String> skip) {
    OpenLineage.DatasetFacetsBuilder builder = new OpenLineage.DatasetFacetsBuilder();
    if (facets == null) {
      return builder;
    }
    copyTyped(DATASET, facets, builder, skip);
    for (Map.Entry<String, OpenLineage.DatasetFacet> e : facets.getAdditionalProperties().entrySet()) {
      if (!skip.contains(e.getKey())) {
        builder.put(e.getKey(), e.getValue());
      }
    }
    return builder;
  }

  /** Same as {@link #copy(OpenLineage.DatasetFacets, Set)} for input facets. */
  static OpenLineage.InputDatasetInputFacetsBuilder copy(OpenLineage.InputDatasetInputFacets facets, Set<String> skip) {
    OpenLineage.InputDatasetInputFacetsBuilder builder = new OpenLineage.InputDatasetInputFacetsBuilder();
    if (facets == null) {
      return builder;
    }
    copyTyped(INPUT, facets, builder, skip);
    for (Map.Entry<String, OpenLineage.InputDatasetFacet> e : facets.getAdditionalProperties().entrySet()) {
      if (!skip.contains(e.getKey())) {
        builder.put(e.getKey(), e.getValue());
      }
    }
    return builder;
  }

  private static void copyTyped(List<Accessor> accessors, Object from, Object to, Set<String> skip) {
    try {
      for (Accessor a : accessors) {
        if (skip.contains(a.name)) {
          continue;
        }
        Object value = a.getter.invoke(from);
        if (value != null) {
          a.setter.invoke(to, value);
        }
      }
    } catch (IllegalAccessException | InvocationTargetException e) {
      throw new IllegalStateException("copying facets failed: " + e.getClass().getSimpleName());
    }
  }

  /** The {namespace, name} pairs of a dataset's symlinks facet (empty when none). */
  static List<String[]> symlinks(OpenLineage.DatasetFacets facets) {
    if (facets == null || facets.getSymlinks() == null || facets.getSymlinks().getIdentifiers() == null) {
      return Collections.emptyList();
    }
    List<String[]> out = new ArrayList<>();
    for (OpenLineage.SymlinksDatasetFacetIdentifiers id : facets.getSymlinks().getIdentifiers()) {
      if (id != null && id.getNamespace() != null && id.getName() != null) {
        out.add(new String[] {id.getNamespace(), id.getName()});
      }
    }
    return out;
  }
}
