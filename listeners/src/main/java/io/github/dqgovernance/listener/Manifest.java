package io.github.dqgovernance.listener;

import java.io.IOException;
import java.net.URI;
import java.net.URISyntaxException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * The governance manifest compiled by {@code dqgov manifest}: per contract, how to recognise its dataset
 * in a listener event and which facets to add. Loading validates everything once, at listener start-up,
 * so matching an event never meets a malformed entry.
 *
 * <p>Match order for one dataset: exact namespace+name (the dataset or one of its symlinks), then a table
 * name (against symlink names and the dataset name), then path globs in manifest order.
 */
public final class Manifest {
  /** Version 2 adds each contract's same-pass checks ({@code checks}) for the session extension. */
  static final int SUPPORTED_VERSION = 2;
  static final int OLDEST_SUPPORTED_VERSION = 1;
  static final String DEFAULT_PRODUCER = "https://github.com/dq-governance/dq-governance";
  static final String DEFAULT_CONTRACT_SCHEMA_URL =
      "https://raw.githubusercontent.com/dq-governance/dq-governance/v0.1.0/dq_governance/lineage/schemas/"
          + "DataContractDatasetFacet.json#/$defs/DataContractDatasetFacet";

  /** One contract: its facets, ready to attach. */
  public static final class Entry {
    public final String contractName;
    final Map<String, Object> contract; // identity fields of dqgov_dataContract, in order
    final List<String[]> owners; // {name, type or null}
    final List<String[]> tags; // {key, value, source or null, field or null}
    final String documentation; // null when the contract has none
    final String documentationContentType;
    final String classification;
    /** The same-pass checks compiled by {@code dqgov manifest} (JSON object), or null in a version 1 manifest. */
    public final Map<String, Object> checks;

    /** The contract identity fields of dqgov_dataContract (name, version, standard, enforcement, location). */
    public Map<String, Object> contract() {
      return contract;
    }

    Entry(String contractName, Map<String, Object> contract, List<String[]> owners, List<String[]> tags,
        String documentation, String documentationContentType, String classification, Map<String, Object> checks) {
      this.checks = checks == null ? null : Collections.unmodifiableMap(checks);
      this.contractName = contractName;
      this.contract = Collections.unmodifiableMap(contract);
      this.owners = Collections.unmodifiableList(owners);
      this.tags = Collections.unmodifiableList(tags);
      this.documentation = documentation;
      this.documentationContentType = documentationContentType;
      this.classification = classification;
    }
  }

  private static final class TableMatcher {
    final String table; // lower case, possibly qualified: db.table
    final Entry entry;

    TableMatcher(String table, Entry entry) {
      this.table = table;
      this.entry = entry;
    }
  }

  private static final class GlobMatcher {
    final Glob glob;
    final Entry entry;

    GlobMatcher(Glob glob, Entry entry) {
      this.glob = glob;
      this.entry = entry;
    }
  }

  final String source;
  final URI producer;
  final URI contractSchemaUrl;
  public final List<Entry> entries;
  /** The report history's columns and their Spark SQL types, in order (version 2), else empty. */
  public final Map<String, String> reportColumns = new LinkedHashMap<>();
  private final Map<String, Entry> exact = new HashMap<>();
  private final Map<String, List<TableMatcher>> tables = new HashMap<>();
  private final List<GlobMatcher> globs = new ArrayList<>();

  private Manifest(String source, URI producer, URI contractSchemaUrl, List<Entry> entries) {
    this.source = source;
    this.producer = producer;
    this.contractSchemaUrl = contractSchemaUrl;
    this.entries = Collections.unmodifiableList(entries);
  }

  /** The producer URI of our facets. */
  public URI producer() {
    return producer;
  }

  /** The schema URL of the dqgov_dataContract facet. */
  public URI contractSchemaUrl() {
    return contractSchemaUrl;
  }

  /** Reads and validates the manifest file. */
  public static Manifest load(Path path) throws ManifestException {
    String text;
    try {
      text = new String(Files.readAllBytes(path), StandardCharsets.UTF_8);
    } catch (NoSuchFileException e) {
      throw new ManifestException("manifest " + path + ": no such file");
    } catch (IOException e) {
      throw new ManifestException("manifest " + path + ": cannot read: " + e.getClass().getSimpleName());
    }
    return parse(text, path.toString());
  }

  /** Validates a manifest document; {@code source} names it in error messages. */
  static Manifest parse(String text, String source) throws ManifestException {
    Object doc;
    try {
      doc = Json.parse(text);
    } catch (Json.SyntaxError e) {
      throw new ManifestException("manifest " + source + ": " + e.getMessage());
    }
    Reader r = new Reader(source);
    Map<String, Object> root = r.object(doc, "(root)");
    r.known(root, "(root)", "manifestVersion", "generator", "producer", "contractFacetSchemaURL", "reportColumns",
        "contracts");
    Object version = root.get("manifestVersion");
    if (!(version instanceof Long)) {
      throw r.error("manifestVersion", "missing or not an integer (expected " + SUPPORTED_VERSION + ")");
    }
    if ((Long) version > SUPPORTED_VERSION || (Long) version < OLDEST_SUPPORTED_VERSION) {
      throw r.error("manifestVersion", version + " is not supported by this listener extension (supports "
          + OLDEST_SUPPORTED_VERSION + " to " + SUPPORTED_VERSION + "); compile the manifest with the matching dqgov release");
    }
    URI producer = r.uri(r.optionalString(root, "producer", "producer"), "producer", DEFAULT_PRODUCER);
    URI schema = r.uri(r.optionalString(root, "contractFacetSchemaURL", "contractFacetSchemaURL"),
        "contractFacetSchemaURL", DEFAULT_CONTRACT_SCHEMA_URL);
    List<Object> contracts = r.list(root.get("contracts"), "contracts", true);
    List<Entry> entries = new ArrayList<>();
    Manifest manifest = new Manifest(source, producer, schema, entries);
    if (root.get("reportColumns") != null) {
      Map<String, Object> columns = r.object(root.get("reportColumns"), "reportColumns");
      for (Map.Entry<String, Object> e : columns.entrySet()) {
        manifest.reportColumns.put(e.getKey(), r.nonEmpty(e.getValue(), "reportColumns." + e.getKey()));
      }
    }
    for (int i = 0; i < contracts.size(); i++) {
      String at = "contracts[" + i + "]";
      Map<String, Object> item = r.object(contracts.get(i), at);
      r.known(item, at, "contract", "match", "owners", "tags", "documentation", "classification", "checks");
      Entry entry = r.entry(item, at);
      entries.add(entry);
      manifest.index(r, r.object(item.get("match"), at + ".match"), entry, at + ".match");
    }
    return manifest;
  }

  private void index(Reader r, Map<String, Object> match, Entry entry, String at) throws ManifestException {
    int count = 0;
    r.known(match, at, "datasets", "tables", "globs");
    List<Object> datasets = r.list(match.get("datasets"), at + ".datasets", false);
    for (int i = 0; i < datasets.size(); i++) {
      String where = at + ".datasets[" + i + "]";
      Map<String, Object> ds = r.object(datasets.get(i), where);
      r.known(ds, where, "namespace", "name");
      String key = key(r.string(ds, "namespace", where + ".namespace"), r.string(ds, "name", where + ".name"));
      Entry previous = exact.putIfAbsent(key, entry);
      if (previous != null && previous != entry) {
        throw r.error(where, "dataset already matched by contract " + previous.contractName);
      }
      count++;
    }
    List<Object> tableList = r.list(match.get("tables"), at + ".tables", false);
    for (int i = 0; i < tableList.size(); i++) {
      String table = r.nonEmpty(tableList.get(i), at + ".tables[" + i + "]").toLowerCase(Locale.ROOT);
      tables.computeIfAbsent(lastSegment(table), k -> new ArrayList<>()).add(new TableMatcher(table, entry));
      count++;
    }
    List<Object> globList = r.list(match.get("globs"), at + ".globs", false);
    for (int i = 0; i < globList.size(); i++) {
      globs.add(new GlobMatcher(new Glob(r.nonEmpty(globList.get(i), at + ".globs[" + i + "]")), entry));
      count++;
    }
    if (count == 0) {
      throw r.error(at, "needs at least one of datasets, tables, globs");
    }
  }

  /** The contract governing a dataset, or null. {@code symlinks} holds {namespace, name} pairs. */
  public Entry match(String namespace, String name, List<String[]> symlinks) {
    return match(namespace, name, symlinks, null);
  }

  /**
   * The contract governing a dataset written in a session whose current catalog and database are {@code current}
   * ({catalog, database}, lower or any case; null: unknown). An unqualified contract table ({@code orders}) then
   * names the current database's table only, as the Python engine reads it: {@code scratch.orders} is not it.
   */
  public Entry match(String namespace, String name, List<String[]> symlinks, String[] current) {
    Entry hit = exact.get(key(namespace, name));
    if (hit != null) {
      return hit;
    }
    for (String[] link : symlinks) {
      hit = exact.get(key(link[0], link[1]));
      if (hit != null) {
        return hit;
      }
    }
    if (!tables.isEmpty()) {
      for (String[] link : symlinks) {
        hit = table(link[1], current);
        if (hit != null) {
          return hit;
        }
      }
      hit = table(name, current);
      if (hit != null) {
        return hit;
      }
    }
    if (!globs.isEmpty()) {
      String location = location(namespace, name);
      for (GlobMatcher g : globs) {
        if (g.glob.matches(location)) {
          return g.entry;
        }
      }
    }
    return null;
  }

  private Entry table(String name, String[] current) {
    String lower = name.toLowerCase(Locale.ROOT);
    List<TableMatcher> candidates = tables.get(lastSegment(lower));
    if (candidates == null) {
      return null;
    }
    for (TableMatcher t : candidates) {
      // `orders` matches default.orders and spark_catalog.default.orders; `sales.orders` not crm.orders
      if (lower.equals(t.table)) {
        return t.entry;
      }
      if (lower.endsWith("." + t.table) && (t.table.indexOf('.') >= 0 || inCurrentDatabase(lower, current))) {
        return t.entry;
      }
    }
    return null;
  }

  /** Whether a qualified table name ({@code db.t} or {@code catalog.db.t}) is in the current database (if known). */
  private static boolean inCurrentDatabase(String table, String[] current) {
    if (current == null) {
      return true;
    }
    String[] parts = table.split("\\.");
    String database = parts[parts.length - 2];
    if (!database.equals(current[1].toLowerCase(Locale.ROOT))) {
      return false;
    }
    return parts.length < 3 || parts[parts.length - 3].equals(current[0].toLowerCase(Locale.ROOT));
  }

  /** The path form a glob is matched against: the path for `file`, else namespace + "/" + name. */
  static String location(String namespace, String name) {
    String path = Glob.stripTrailingSlash(name);
    if ("file".equals(namespace)) {
      return path;
    }
    return path.startsWith("/") ? namespace + path : namespace + "/" + path;
  }

  public static String key(String namespace, String name) {
    return namespace + '\n' + Glob.stripTrailingSlash(name);
  }

  private static String lastSegment(String table) {
    int dot = table.lastIndexOf('.');
    return dot < 0 ? table : table.substring(dot + 1);
  }

  /** The first key of {@code map} that is not one of {@code allowed}, or null: the format's keys, no others. */
  public static String unknownKey(Map<String, Object> map, List<String> allowed) {
    for (String key : map.keySet()) {
      if (!allowed.contains(key)) {
        return key;
      }
    }
    return null;
  }

  /** Typed access to the parsed document; every failure names the file and the field path. */
  private static final class Reader {
    private final String source;

    Reader(String source) {
      this.source = source;
    }

    ManifestException error(String at, String message) {
      return new ManifestException("manifest " + source + ": " + at + ": " + message);
    }

    /** Refuses a key the manifest format does not have: a misspelt one would otherwise be ignored in silence. */
    void known(Map<String, Object> map, String at, String... keys) throws ManifestException {
      String unknown = unknownKey(map, List.of(keys));
      if (unknown != null) {
        throw error(at, "unknown key `" + unknown + "` (expected " + String.join(", ", keys) + ")");
      }
    }

    @SuppressWarnings("unchecked")
    Map<String, Object> object(Object value, String at) throws ManifestException {
      if (!(value instanceof Map)) {
        throw error(at, value == null ? "missing (expected an object)" : "expected an object");
      }
      return (Map<String, Object>) value;
    }

    @SuppressWarnings("unchecked")
    List<Object> list(Object value, String at, boolean required) throws ManifestException {
      if (value == null && !required) {
        return Collections.emptyList();
      }
      if (!(value instanceof List)) {
        throw error(at, value == null ? "missing (expected an array)" : "expected an array");
      }
      return (List<Object>) value;
    }

    String nonEmpty(Object value, String at) throws ManifestException {
      if (!(value instanceof String) || ((String) value).isEmpty()) {
        throw error(at, value == null ? "missing (expected a non-empty string)" : "expected a non-empty string");
      }
      return (String) value;
    }

    String string(Map<String, Object> map, String key, String at) throws ManifestException {
      return nonEmpty(map.get(key), at);
    }

    String optionalString(Map<String, Object> map, String key, String at) throws ManifestException {
      Object value = map.get(key);
      if (value == null) {
        return null;
      }
      if (!(value instanceof String)) {
        throw error(at, "expected a string");
      }
      return (String) value;
    }

    URI uri(String value, String at, String fallback) throws ManifestException {
      try {
        return new URI(value == null ? fallback : value);
      } catch (URISyntaxException e) {
        throw error(at, "not a URI");
      }
    }

    Entry entry(Map<String, Object> item, String at) throws ManifestException {
      Map<String, Object> contract = object(item.get("contract"), at + ".contract");
      String name = string(contract, "name", at + ".contract.name");
      string(contract, "version", at + ".contract.version");
      Map<String, Object> identity = new LinkedHashMap<>();
      for (Map.Entry<String, Object> e : contract.entrySet()) {
        Object v = e.getValue();
        if (v == null) {
          continue;
        }
        if (!(v instanceof String)) {
          throw error(at + ".contract." + e.getKey(), "expected a string");
        }
        identity.put(e.getKey(), v);
      }
      List<String[]> owners = new ArrayList<>();
      List<Object> ownerList = list(item.get("owners"), at + ".owners", false);
      for (int i = 0; i < ownerList.size(); i++) {
        String where = at + ".owners[" + i + "]";
        Map<String, Object> o = object(ownerList.get(i), where);
        known(o, where, "name", "type");
        owners.add(new String[] {string(o, "name", where + ".name"), optionalString(o, "type", where + ".type")});
      }
      List<String[]> tags = new ArrayList<>();
      List<Object> tagList = list(item.get("tags"), at + ".tags", false);
      for (int i = 0; i < tagList.size(); i++) {
        String where = at + ".tags[" + i + "]";
        Map<String, Object> t = object(tagList.get(i), where);
        known(t, where, "key", "value", "source", "field");
        tags.add(new String[] {string(t, "key", where + ".key"), string(t, "value", where + ".value"),
            optionalString(t, "source", where + ".source"), optionalString(t, "field", where + ".field")});
      }
      String doc = null;
      String contentType = null;
      if (item.get("documentation") != null) {
        Map<String, Object> d = object(item.get("documentation"), at + ".documentation");
        known(d, at + ".documentation", "description", "contentType");
        doc = string(d, "description", at + ".documentation.description");
        contentType = optionalString(d, "contentType", at + ".documentation.contentType");
      }
      String classification = optionalString(item, "classification", at + ".classification");
      Map<String, Object> checks = item.get("checks") == null ? null : object(item.get("checks"), at + ".checks");
      return new Entry(name, identity, owners, tags, doc, contentType, classification, checks);
    }
  }
}
