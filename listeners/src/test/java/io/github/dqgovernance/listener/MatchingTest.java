package io.github.dqgovernance.listener;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** Manifest matching rules and the JSON reader, without events. */
class MatchingTest {
  private static Manifest manifest(String contracts) throws ManifestException {
    return Manifest.parse("{\"manifestVersion\": 1, \"contracts\": [" + contracts + "]}", "m.json");
  }

  private static String contract(String name, String match) {
    return "{\"contract\": {\"name\": \"" + name + "\", \"version\": \"1.0.0\"}, \"match\": " + match + "}";
  }

  @Test
  void globs() {
    Glob g = new Glob("/data/**/orders/*.parquet");
    assertTrue(g.matches("/data/orders/part-0.parquet"));
    assertTrue(g.matches("/data/a/b/orders/part-0.parquet"));
    assertFalse(g.matches("/data/a/orders/x/part-0.parquet"));
    assertFalse(g.matches("/lake/orders/part-0.parquet"));
    assertTrue(new Glob("s3://bucket/curated/orders_v?").matches("s3://bucket/curated/orders_v2"));
    assertFalse(new Glob("s3://bucket/curated/orders_v?").matches("s3://bucket/curated/orders_v10"));
    assertTrue(new Glob("/exact/path/").matches("/exact/path"));
    assertFalse(new Glob("/exact/path").matches("/exact/path2"));
    assertTrue(new Glob("/a+b/(c)/*").matches("/a+b/(c)/x")); // regex characters are literal
  }

  @Test
  void matchOrderAndLocations() throws ManifestException {
    Manifest m = manifest(String.join(",",
        contract("exact", "{\"datasets\": [{\"namespace\": \"s3://bucket\", \"name\": \"curated/orders\"}]}"),
        contract("table", "{\"tables\": [\"sales.orders\"]}"),
        contract("glob", "{\"globs\": [\"s3://bucket/curated/**\", \"/lake/**\"]}")));
    assertEquals("exact", m.match("s3://bucket", "curated/orders", List.of()).contractName);
    assertEquals("glob", m.match("s3://bucket", "curated/customers", List.of()).contractName);
    assertEquals("glob", m.match("file", "/lake/x/y", List.of()).contractName);
    assertNull(m.match("file", "/elsewhere/x", List.of()));
    // tables: the symlink name, qualified or with a catalog prefix; another database does not match
    List<String[]> link = List.<String[]>of(new String[] {"hive://metastore", "spark_catalog.sales.orders"});
    assertEquals("table", m.match("file", "/warehouse/sales.db/orders", link).contractName);
    assertNull(m.match("file", "/warehouse/crm.db/orders",
        List.<String[]>of(new String[] {"hive://metastore", "crm.orders"})));
    // an exact symlink identity wins over a glob on the path
    assertEquals("exact", m.match("file", "/lake/orders",
        List.<String[]>of(new String[] {"s3://bucket", "curated/orders"})).contractName);
    assertEquals("s3://bucket/curated/orders", Manifest.location("s3://bucket", "curated/orders"));
    assertEquals("hdfs://nn:8020/w/x", Manifest.location("hdfs://nn:8020", "/w/x"));
  }

  @Test
  void anUnqualifiedTableNamesTheCurrentDatabasesTableOnly() throws ManifestException {
    Manifest m = manifest(String.join(",", contract("plain", "{\"tables\": [\"orders_t\"]}"),
        contract("qualified", "{\"tables\": [\"sales.orders_q\"]}")));
    String[] inDefault = {"spark_catalog", "default"};
    List<String[]> scratch = List.<String[]>of(new String[] {"table", "spark_catalog.scratch.orders_t"});
    List<String[]> dflt = List.<String[]>of(new String[] {"table", "spark_catalog.default.orders_t"});
    assertNull(m.match("file", "/w/scratch.db/orders_t", scratch, inDefault));
    assertEquals("plain", m.match("file", "/w/orders_t", dflt, inDefault).contractName);
    assertEquals("plain", m.match("file", "/w/orders_t",
        List.<String[]>of(new String[] {"table", "default.orders_t"}), inDefault).contractName);
    assertNull(m.match("file", "/w/orders_t", dflt, new String[] {"spark_catalog", "scratch"}));
    assertEquals("plain", m.match("file", "/w/scratch.db/orders_t", scratch,
        new String[] {"spark_catalog", "SCRATCH"}).contractName); // after USE scratch
    assertNull(m.match("file", "/w/orders_t",
        List.<String[]>of(new String[] {"table", "other.default.orders_t"}), inDefault)); // another catalog
    // a qualified contract table names its database whatever the current one is
    assertEquals("qualified", m.match("file", "/w/sales.db/orders_q",
        List.<String[]>of(new String[] {"table", "spark_catalog.sales.orders_q"}), inDefault).contractName);
  }

  @Test
  void aResultRecordedForADirectoryCoversItsFilesButNotItsSiblings() {
    String facet = "{\"_producer\": \"p\", \"_schemaURL\": \"s\", \"assertions\": []}";
    try {
      QualityRegistry.record("file", "/lake/orders/", "{\"inputFacets\": {\"dataQualityAssertions\": " + facet + "}}");
      QualityRegistry.record("s3://bucket", "curated/sales", "{\"inputFacets\": {}}");
      assertTrue(QualityRegistry.has("file", "/lake/orders"));
      assertEquals(List.of("dataQualityAssertions"), List.copyOf(
          QualityRegistry.lookup("file", "/lake/orders/part-00000.csv", List.of()).inputFacets.keySet()));
      assertTrue(QualityRegistry.lookup("file", "/lake/orders", List.of()) != null);
      assertNull(QualityRegistry.lookup("file", "/lake/orders2", List.of()));
      assertNull(QualityRegistry.lookup("file", "/lake", List.of()));
      assertTrue(QualityRegistry.lookup("s3://bucket", "curated/sales/date=2024-01-01/p.parquet", List.of()) != null);
      assertNull(QualityRegistry.lookup("s3://other", "curated/sales", List.of()));
      // a table checked under its symlink identity
      assertTrue(QualityRegistry.lookup("file", "/warehouse/x",
          List.<String[]>of(new String[] {"s3://bucket", "curated/sales"})) != null);
    } finally {
      QualityRegistry.clear();
    }
  }

  @Test
  void duplicateExactDatasetsAreAnError() {
    ManifestException e = assertThrows(ManifestException.class, () -> manifest(String.join(",",
        contract("a", "{\"datasets\": [{\"namespace\": \"file\", \"name\": \"/x\"}]}"),
        contract("b", "{\"datasets\": [{\"namespace\": \"file\", \"name\": \"/x/\"}]}"))));
    assertEquals("manifest m.json: contracts[1].match.datasets[0]: dataset already matched by contract a",
        e.getMessage());
  }

  @Test
  void aKeyTheFormatDoesNotHaveIsAnError() {
    // a misspelt key (globs) would otherwise leave its contract matching nothing, with no word
    ManifestException e = assertThrows(ManifestException.class, () -> manifest(
        contract("a", "{\"glob\": [\"/x/**\"], \"tables\": [\"t\"]}")));
    assertEquals("manifest m.json: contracts[0].match: unknown key `glob` (expected datasets, tables, globs)",
        e.getMessage());
    e = assertThrows(ManifestException.class, () -> Manifest.parse(
        "{\"manifestVersion\": 1, \"manifestVersio\": 2, \"contracts\": []}", "m.json"));
    assertEquals("manifest m.json: (root): unknown key `manifestVersio` (expected manifestVersion, generator, "
        + "producer, contractFacetSchemaURL, reportColumns, contracts)", e.getMessage());
    e = assertThrows(ManifestException.class, () -> manifest("{\"contract\": {\"name\": \"a\", \"version\": \"1\"}, "
        + "\"classificaton\": \"pii\", \"match\": {\"tables\": [\"t\"]}}"));
    assertEquals("manifest m.json: contracts[0]: unknown key `classificaton` (expected contract, match, owners, tags, "
        + "documentation, classification, checks)", e.getMessage());
  }

  @Test
  void jsonReader() throws Json.SyntaxError {
    @SuppressWarnings("unchecked")
    Map<String, Object> doc = (Map<String, Object>) Json.parse(
        "{\"s\": \"a\\\"b\\u00e9\\n\", \"i\": -12, \"d\": 1.5e2, \"t\": true, \"n\": null, \"l\": [1, [], {}]}");
    assertEquals("a\"b\u00e9\n", doc.get("s"));
    assertEquals(-12L, doc.get("i"));
    assertEquals(150.0, doc.get("d"));
    assertEquals(Boolean.TRUE, doc.get("t"));
    assertTrue(doc.containsKey("n") && doc.get("n") == null);
    assertEquals(List.of(1L, List.of(), Map.of()), doc.get("l"));
    Json.SyntaxError e = assertThrows(Json.SyntaxError.class, () -> Json.parse("{\n  \"a\": 1,\n  \"b\" 2\n}"));
    assertEquals("invalid JSON at line 3, column 7: expected ':'", e.getMessage());
    assertThrows(Json.SyntaxError.class, () -> Json.parse("{} x"));
    assertThrows(Json.SyntaxError.class, () -> Json.parse("[01]"));
  }
}
