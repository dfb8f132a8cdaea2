package io.github.dqgovernance.listener;

import static io.github.dqgovernance.listener.Support.dataset;
import static io.github.dqgovernance.listener.Support.json;
import static io.github.dqgovernance.listener.Support.list;
import static io.github.dqgovernance.listener.Support.map;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.openlineage.client.OpenLineage;
import io.openlineage.client.OpenLineageClientUtils;
import io.openlineage.client.transports.FileConfig;
import io.openlineage.client.transports.TransformConfig;
import io.openlineage.client.transports.TransformTransport;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Supplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The transformer on events the real OpenLineage Spark listener (1.53.0) emitted. */
class GovernanceTransformerTest {
  static final String SCHEMA_URL = "https://raw.githubusercontent.com/dq-governance/dq-governance/v0.1.0/"
      + "dq_governance/lineage/schemas/DataContractDatasetFacet.json#/$defs/DataContractDatasetFacet";
  static final String PRODUCER = "https://github.com/dq-governance/dq-governance/tree/v0.1.0";
  /** What the listener sets on datasets; the transformer must leave these exactly as they were. */
  static final List<String> LISTENER_FACETS = List.of("schema", "dataSource", "symlinks", "columnLineage",
      "lifecycleStateChange");
  static final List<String> OUR_FACETS = List.of("ownership", "tags", "documentation", "dqgov_dataContract");

  @AfterEach
  void forgetRecordedResults() {
    QualityRegistry.clear();
  }

  private static List<String> owners(Map<String, Object> ds) {
    List<String> out = new ArrayList<>();
    for (Object o : list(ds, "facets", "ownership", "owners")) {
      out.add((String) ((Map<?, ?>) o).get("name"));
    }
    return out;
  }

  private static Set<List<String>> tags(Map<String, Object> ds) {
    Set<List<String>> out = new java.util.LinkedHashSet<>();
    for (Object o : list(ds, "facets", "tags", "tags")) {
      Map<?, ?> t = (Map<?, ?>) o;
      out.add(java.util.Arrays.asList((String) t.get("key"), (String) t.get("value"), (String) t.get("field")));
    }
    return out;
  }

  private static void assertListenerFacetsUnchanged(Map<String, Object> before, Map<String, Object> after) {
    for (String facet : LISTENER_FACETS) {
      assertEquals(map(before, "facets").get(facet), map(after, "facets").get(facet), facet + " changed");
    }
    for (String side : List.of("inputFacets", "outputFacets")) {
      assertEquals(before.get(side), after.get(side), side + " changed");
    }
  }

  @Test
  void readOfACsvPathGetsItsContractThroughTheRealTransformTransport(@TempDir Path tmp) throws Exception {
    // The real TransformTransport: it instantiates the class by name, deep-copies the event, hands ours on.
    Path out = tmp.resolve("events.jsonl");
    TransformConfig config = new TransformConfig();
    config.setTransformerClass(GovernanceTransformer.class.getName());
    config.setTransformerProperties(Map.of("manifest", Support.resourcePath("manifests/governance.json").toString()));
    config.setTransport(new FileConfig(out.toString()));
    OpenLineage.RunEvent event = Support.event("read_csv.json");
    try (TransformTransport transport = new TransformTransport(config)) {
      transport.emit(event);
    }
    @SuppressWarnings("unchecked")
    Map<String, Object> written = (Map<String, Object>) Json.parse(
        Files.readString(out, StandardCharsets.UTF_8).trim());
    Map<String, Object> before = dataset(json(event), "inputs", "/examples/data/orders.csv");
    Map<String, Object> after = dataset(written, "inputs", "/examples/data/orders.csv");

    assertEquals(List.of("team:sales-data-team", "user:maria.silva"), owners(after));
    assertEquals(Set.of(List.of("classification", "internal"), List.of("pii", "true", "email"),
            List.of("classification", "restricted", "email")),
        Set.copyOf(tags(after).stream().map(t -> t.get(2) == null ? t.subList(0, 2) : t).toList()));
    assertEquals("Commercial orders, consolidated", map(after, "facets", "documentation").get("description"));
    Map<String, Object> contract = map(after, "facets", "dqgov_dataContract");
    Map<String, Object> expected = new LinkedHashMap<>();
    expected.put("_producer", PRODUCER);
    expected.put("_schemaURL", SCHEMA_URL);
    expected.put("name", "orders");
    expected.put("version", "1.0.0");
    expected.put("standard", "native");
    expected.put("enforcement", "blocking");
    expected.put("location", "file:///repo/contracts/orders.yaml");
    assertEquals(expected, contract);
    assertListenerFacetsUnchanged(before, after);
    // the run, the job and the event envelope are the listener's
    Map<String, Object> original = json(event);
    for (String key : List.of("run", "job", "eventType", "eventTime", "producer", "schemaURL")) {
      assertEquals(original.get(key), written.get(key), key);
    }
  }

  @Test
  void writeOfAParquetPathGetsItsOwnContractAndTheCsvInputItsOwn() {
    List<String> warnings = Support.newList();
    OpenLineage.RunEvent event = Support.event("write_parquet.json");
    Map<String, Object> before = json(event);
    Map<String, Object> after = json(Support.transformer(warnings).transform(event));
    assertEquals(List.of(), warnings);

    Map<String, Object> out = dataset(after, "outputs", "/lake/curated/orders");
    assertEquals(List.of("team:curation"), owners(out));
    assertEquals(Set.of(java.util.Arrays.asList("classification", "confidential", null)), tags(out));
    assertNull(map(out, "facets").get("documentation")); // that contract has none
    Map<String, Object> contract = map(out, "facets", "dqgov_dataContract");
    assertEquals("curated_orders", contract.get("name"));
    assertEquals("urn:dqgov:curated_orders", contract.get("id"));
    assertEquals("odcs", contract.get("standard"));
    assertListenerFacetsUnchanged(dataset(before, "outputs", "/lake/curated/orders"), out);

    Map<String, Object> in = dataset(after, "inputs", "/examples/data/orders.csv");
    assertEquals("orders", map(in, "facets", "dqgov_dataContract").get("name"));
    assertEquals(List.of("team:sales-data-team", "user:maria.silva"), owners(in));
    assertListenerFacetsUnchanged(dataset(before, "inputs", "/examples/data/orders.csv"), in);
  }

  @Test
  void tableWriteMatchesThroughItsSymlinkAndLeavesTheUnmatchedInputAlone() {
    List<String> warnings = Support.newList();
    OpenLineage.RunEvent event = Support.event("table_write.json");
    Map<String, Object> before = json(event);
    OpenLineage.RunEvent transformed = Support.transformer(warnings).transform(event);
    Map<String, Object> after = json(transformed);

    Map<String, Object> out = dataset(after, "outputs", "/warehouse/crm_customers");
    assertEquals(List.of("team:crm"), owners(out));
    assertEquals(Set.of(List.of("pii", "true", "cpf")), tags(out));
    assertEquals("CRM customers", map(out, "facets", "documentation").get("description"));
    assertEquals("customers", map(out, "facets", "dqgov_dataContract").get("name"));
    assertEquals("default.crm_customers",
        ((Map<?, ?>) list(out, "facets", "symlinks", "identifiers").get(0)).get("name"));
    assertListenerFacetsUnchanged(dataset(before, "outputs", "/warehouse/crm_customers"), out);

    // customers.csv has no contract in this manifest: byte-for-byte what the listener sent, same object
    assertEquals(dataset(before, "inputs", "/examples/data/customers.csv"),
        dataset(after, "inputs", "/examples/data/customers.csv"));
    assertSame(event.getInputs().get(0), transformed.getInputs().get(0));
    assertEquals(List.of(), warnings);
  }

  /** table_write.json (a COMPLETE writing default.crm_customers) with its output table named {@code table}. */
  private static OpenLineage.RunEvent tableWrite(String table) {
    String path = table.endsWith("default.crm_customers") ? "/tmp/dqgov-listener-fixtures/warehouse/crm_customers"
        : "/tmp/dqgov-listener-fixtures/warehouse/scratch.db/crm_customers";
    return OpenLineageClientUtils.runEventFromJson(Support.resource("events/table_write.json")
        .replace("\"name\": \"default.crm_customers\"", "\"name\": \"" + table + "\"")
        .replace("\"name\": \"/tmp/dqgov-listener-fixtures/warehouse/crm_customers\"", "\"name\": \"" + path + "\""));
  }

  @Test
  void anUnqualifiedContractTableGovernsTheSessionsCurrentDatabasesTableOnly() {
    // The manifest's `customers` contract names the unqualified table crm_customers.
    List<String> warnings = Support.newList();
    GovernanceTransformer inDefault = Support.transformer(warnings, () -> new String[] {"spark_catalog", "default"});
    for (String table : List.of("scratch.crm_customers", "spark_catalog.scratch.crm_customers",
        "other_catalog.default.crm_customers")) {
      OpenLineage.RunEvent event = tableWrite(table);
      OpenLineage.RunEvent transformed = inDefault.transform(event);
      assertSame(event, transformed, table); // no dataset governed: not one facet of `customers`
      Map<String, Object> facets = map(dataset(json(transformed), "outputs", "/crm_customers"), "facets");
      for (String facet : OUR_FACETS) {
        assertFalse(facets.containsKey(facet), table + ": " + facet);
      }
    }
    for (String table : List.of("default.crm_customers", "spark_catalog.default.crm_customers")) {
      Map<String, Object> out = dataset(json(inDefault.transform(tableWrite(table))), "outputs", "/crm_customers");
      assertEquals("customers", map(out, "facets", "dqgov_dataContract").get("name"), table);
      assertEquals(List.of("team:crm"), owners(out), table);
      assertEquals(Set.of(List.of("pii", "true", "cpf")), tags(out), table);
      assertEquals("CRM customers", map(out, "facets", "documentation").get("description"), table);
    }
    // after USE scratch, scratch's table is the one governed
    GovernanceTransformer inScratch = Support.transformer(warnings, () -> new String[] {"spark_catalog", "scratch"});
    assertEquals("customers", map(dataset(json(inScratch.transform(tableWrite("scratch.crm_customers"))),
        "outputs", "/crm_customers"), "facets", "dqgov_dataContract").get("name"));
    OpenLineage.RunEvent defaultWrite = tableWrite("default.crm_customers");
    assertSame(defaultWrite, inScratch.transform(defaultWrite));
    assertEquals(List.of(), warnings);
  }

  @Test
  void anUnreadableCurrentDatabaseMatchesTheTableInAnyDatabaseAndIsSaidOnce() {
    Map<String, Supplier<String[]>> failures = new LinkedHashMap<>();
    failures.put("IllegalStateException: no session state", () -> {
      throw new IllegalStateException("no session state\nat line two");
    });
    failures.put("NoClassDefFoundError: org/apache/spark/sql/SparkSession", () -> {
      throw new NoClassDefFoundError("org/apache/spark/sql/SparkSession");
    });
    failures.put("IllegalStateException: not a {catalog, database} pair", () -> new String[] {"spark_catalog", null});
    for (Map.Entry<String, Supplier<String[]>> failure : failures.entrySet()) {
      List<String> warnings = Support.newList();
      GovernanceTransformer t = Support.transformer(warnings, failure.getValue());
      for (String table : List.of("scratch.crm_customers", "default.crm_customers", "scratch.crm_customers")) {
        Map<String, Object> out = dataset(json(t.transform(tableWrite(table))), "outputs", "/crm_customers");
        assertEquals("customers", map(out, "facets", "dqgov_dataContract").get("name"), table);
        assertEquals(List.of("team:crm"), owners(out), table);
      }
      assertEquals(List.of("dq-governance listener: cannot read the session's current database (" + failure.getKey()
          + "); an unqualified contract table matches that table in any database"), warnings);
    }
  }

  @Test
  void anEventWithoutGovernedDatasetsIsReturnedAsTheSameInstance() {
    OpenLineage.RunEvent event = Support.event("table_write.json");
    String manifest = "{\"manifestVersion\": 1, \"contracts\": [{\"contract\": {\"name\": \"x\", \"version\": \"1.0.0\"},"
        + " \"match\": {\"globs\": [\"s3://elsewhere/**\"]}}]}";
    List<String> warnings = Support.newList();
    GovernanceTransformer t = Support.transformer(write(manifest), warnings);
    assertTrue(t.isActive());
    assertSame(event, t.transform(event));
    for (OpenLineage.OutputDataset ds : event.getOutputs()) {
      for (String facet : OUR_FACETS) {
        assertFalse(json(event).toString().contains("dqgov_dataContract"), facet);
      }
    }
  }

  @Test
  void existingOwnershipTagsAndDocumentationAreKeptAndOursAppended() {
    OpenLineage.RunEvent event = Support.event("read_csv.json");
    OpenLineage ol = new OpenLineage(java.net.URI.create("https://example.com/listener"));
    OpenLineage.InputDataset in = event.getInputs().get(0);
    OpenLineage.DatasetFacets facets = Facets.copy(in.getFacets(), Set.of())
        .ownership(ol.newOwnershipDatasetFacet(List.of(ol.newOwnershipDatasetFacetOwners("user:someone", null),
            ol.newOwnershipDatasetFacetOwners("team:sales-data-team", "TECHNICAL_OWNER"))))
        .tags(ol.newTagsDatasetFacet(List.of(ol.newTagsDatasetFacetFields("pii", "true", "CATALOG", "email"),
            ol.newTagsDatasetFacetFields("tier", "gold", "CATALOG", null))))
        .documentation(ol.newDocumentationDatasetFacet("Set by the catalog", "text/markdown"))
        .build();
    OpenLineage.RunEvent withFacets = ol.newRunEventBuilder().eventTime(event.getEventTime())
        .eventType(event.getEventType()).run(event.getRun()).job(event.getJob())
        .inputs(List.of(ol.newInputDataset(in.getNamespace(), in.getName(), facets, in.getInputFacets())))
        .outputs(List.of()).build();

    Map<String, Object> after = dataset(json(Support.transformer(Support.newList()).transform(withFacets)),
        "inputs", "orders.csv");
    assertEquals(List.of("user:someone", "team:sales-data-team", "user:maria.silva"), owners(after));
    assertEquals(List.of(List.of("pii", "true", "email"), java.util.Arrays.asList("tier", "gold", null),
            java.util.Arrays.asList("classification", "internal", null),
            List.of("classification", "restricted", "email")),
        new ArrayList<>(tags(after)));
    assertEquals("Set by the catalog", map(after, "facets", "documentation").get("description"));
    assertEquals("orders", map(after, "facets", "dqgov_dataContract").get("name"));
  }

  @Test
  void recordedResultsGoOnReadsAsInputFacetsAndTheStatusOnWrites() {
    String assertions = "{\"_producer\": \"" + PRODUCER + "\", \"_schemaURL\": \"https://openlineage.io/spec/facets/"
        + "1-1-0/DataQualityAssertionsDatasetFacet.json#/$defs/DataQualityAssertionsDatasetFacet\", \"assertions\": "
        + "[{\"assertion\": \"unique\", \"success\": false, \"column\": \"pedido_id\", \"name\": \"pedido_id_unique\","
        + " \"actual\": \"2\", \"expected\": \"0\", \"severity\": \"error\"}]}";
    String metrics = "{\"_producer\": \"" + PRODUCER + "\", \"_schemaURL\": \"https://openlineage.io/spec/facets/"
        + "1-0-3/DataQualityMetricsInputDatasetFacet.json#/$defs/DataQualityMetricsInputDatasetFacet\", "
        + "\"rowCount\": 7, \"columnMetrics\": {\"pedido_id\": {\"nullCount\": 0, \"distinctCount\": 6}}}";
    String contract = "{\"_producer\": \"" + PRODUCER + "\", \"_schemaURL\": \"" + SCHEMA_URL + "\", \"name\": \"orders\","
        + " \"version\": \"1.0.0\", \"standard\": \"native\", \"enforcement\": \"blocking\", \"status\": \"failed\","
        + " \"quality_score\": 0.14285714285714285, \"valid_rows\": 1, \"invalid_rows\": 6}";
    String csv = "/work/main/examples/data/orders.csv";
    QualityRegistry.record("file", csv, "{\"inputFacets\": {\"dataQualityAssertions\": " + assertions
        + ", \"dataQualityMetrics\": " + metrics + "}, \"contract\": " + contract + "}");
    QualityRegistry.record("file", "/tmp/dqgov-listener-fixtures/lake/curated/orders", "{\"contract\": " + contract + "}");

    OpenLineage.RunEvent event = Support.event("write_parquet.json");
    Map<String, Object> before = json(event);
    Map<String, Object> after = json(Support.transformer(Support.newList()).transform(event));
    Map<String, Object> read = dataset(after, "inputs", csv);
    Map<String, Object> inputFacets = map(read, "inputFacets");
    @SuppressWarnings("unchecked")
    Map<String, Object> assertion = (Map<String, Object>) list(read, "inputFacets", "dataQualityAssertions",
        "assertions").get(0);
    assertEquals("unique", assertion.get("assertion"));
    assertEquals("pedido_id", assertion.get("column"));
    assertEquals(Boolean.FALSE, assertion.get("success"));
    assertEquals("2", assertion.get("actual"));
    assertEquals("https://openlineage.io/spec/facets/1-1-0/DataQualityAssertionsDatasetFacet.json"
        + "#/$defs/DataQualityAssertionsDatasetFacet", map(inputFacets, "dataQualityAssertions").get("_schemaURL"));
    assertEquals(7L, map(inputFacets, "dataQualityMetrics").get("rowCount"));
    assertEquals(6L, map(inputFacets, "dataQualityMetrics", "columnMetrics", "pedido_id").get("distinctCount"));
    // the listener's own input facet stays
    assertEquals(map(dataset(before, "inputs", csv), "inputFacets", "inputStatistics"),
        map(inputFacets, "inputStatistics"));
    assertEquals("failed", map(read, "facets", "dqgov_dataContract").get("status"));

    Map<String, Object> written = dataset(after, "outputs", "/lake/curated/orders");
    Map<String, Object> status = map(written, "facets", "dqgov_dataContract");
    // identity from the manifest's contract for that path, run status from the recorded result
    assertEquals("curated_orders", status.get("name"));
    assertEquals("failed", status.get("status"));
    assertEquals(1L, status.get("valid_rows"));
    assertEquals(6L, status.get("invalid_rows"));
    assertEquals(0.14285714285714285, status.get("quality_score"));
    assertNull(written.get("inputFacets"));
    assertEquals(map(dataset(before, "outputs", "/lake/curated/orders"), "outputFacets"), map(written, "outputFacets"));
  }

  private static OpenLineage.RunEvent as(OpenLineage.RunEvent e, OpenLineage.RunEvent.EventType type,
      List<OpenLineage.OutputDataset> outputs) {
    return new OpenLineage(e.getProducer()).newRunEventBuilder().eventTime(e.getEventTime()).eventType(type)
        .run(e.getRun()).job(e.getJob()).inputs(e.getInputs()).outputs(outputs).build();
  }

  @Test
  void aTerminalEventNamingNoOutputGetsBackItsStartsGovernedOutputOnlyWithResultsRecordedSince() {
    OpenLineage.RunEvent written = Support.event("write_parquet.json");
    GovernanceTransformer transformer = Support.transformer(Support.newList());
    String target = "/tmp/dqgov-listener-fixtures/lake/curated/orders";
    String contract = "{\"_producer\": \"" + PRODUCER + "\", \"_schemaURL\": \"" + SCHEMA_URL + "\", \"name\": "
        + "\"curated_orders\", \"status\": \"passed\", \"written_rows\": 7}";
    QualityRegistry.record("file", target, "{\"contract\": " + contract + ", \"ended\": true}"); // an earlier write

    Map<String, Object> start = json(transformer.transform(as(written, OpenLineage.RunEvent.EventType.START,
        written.getOutputs())));
    Map<String, Object> labels = map(dataset(start, "outputs", "/lake/curated/orders"), "facets", "dqgov_dataContract");
    assertEquals("curated_orders", labels.get("name"));
    assertNull(labels.get("written_rows")); // a START never carries an earlier write's results
    Map<String, Object> bare = json(transformer.transform(as(written, OpenLineage.RunEvent.EventType.COMPLETE,
        List.of())));
    assertEquals(List.of(), bare.get("outputs")); // nothing recorded since its START: nothing restored

    transformer.transform(as(written, OpenLineage.RunEvent.EventType.START, written.getOutputs()));
    QualityRegistry.record("file", target, "{\"contract\": " + contract + ", \"ended\": true, \"vetoed\": true}");
    Map<String, Object> end = json(transformer.transform(as(written, OpenLineage.RunEvent.EventType.COMPLETE,
        List.of())));
    assertEquals("FAIL", end.get("eventType")); // this run's write was vetoed
    Map<String, Object> restored = map(dataset(end, "outputs", "/lake/curated/orders"), "facets", "dqgov_dataContract");
    assertEquals(7L, restored.get("written_rows"));
    assertEquals(1, ((List<?>) end.get("outputs")).size());
  }

  @Test
  void aBrokenManifestMeansPassThroughWithOneLine() {
    OpenLineage.RunEvent event = Support.event("write_parquet.json");
    Map<String, String> broken = new LinkedHashMap<>();
    broken.put("{\"manifestVersion\": 1, \"contracts\": [", "invalid JSON at line 1, column 38: unexpected end of input");
    broken.put("{\"manifestVersion\": 7, \"contracts\": []}", "manifestVersion: 7 is not supported");
    broken.put("{\"manifestVersion\": 1, \"contracts\": [{\"contract\": {\"name\": \"x\", \"version\": \"1.0.0\"},"
        + " \"match\": {}}]}", "contracts[0].match: needs at least one of datasets, tables, globs");
    broken.put("{\"manifestVersion\": 1, \"contracts\": [{\"contract\": {\"version\": \"1.0.0\"},"
        + " \"match\": {\"tables\": [\"t\"]}}]}", "contracts[0].contract.name: missing");
    broken.put("{\"manifestVersion\": 1, \"contracts\": [{\"contract\": {\"name\": \"x\", \"version\": \"1.0.0\"},"
        + " \"match\": {\"tables\": [\"t\"]}, \"owners\": [{\"type\": \"X\"}]}]}", "contracts[0].owners[0].name: missing");
    for (Map.Entry<String, String> c : broken.entrySet()) {
      List<String> warnings = Support.newList();
      String path = write(c.getKey());
      GovernanceTransformer t = Support.transformer(path, warnings);
      assertFalse(t.isActive(), c.getValue());
      assertEquals(1, warnings.size(), c.getValue());
      String line = warnings.get(0);
      assertTrue(line.startsWith("dq-governance listener: manifest " + path + ": "), line);
      assertTrue(line.contains(c.getValue()), line);
      assertTrue(line.endsWith("; passing events through unchanged"), line);
      assertFalse(line.contains("\n"), line);
      assertSame(event, t.transform(event));
    }
    List<String> missing = Support.newList();
    assertSame(event, Support.transformer("/nonexistent/manifest.json", missing).transform(event));
    assertEquals(List.of("dq-governance listener: manifest /nonexistent/manifest.json: no such file; "
        + "passing events through unchanged"), missing);
    List<String> unset = Support.newList();
    assertSame(event, Support.transformer(null, unset).transform(event));
    assertEquals(List.of("dq-governance listener: transformerProperties.manifest is not set; "
        + "passing events through unchanged"), unset);
  }

  @Test
  void anErrorOnOneEventLogsOneLineAndPassesItThrough() {
    // An input without a name (a malformed event from some other integration) makes matching fail.
    String text = Support.resource("events/read_csv.json").replace("\"name\": \"/work/main/examples/data/orders.csv\"",
        "\"nameless\": true");
    OpenLineage.RunEvent event = OpenLineageClientUtils.runEventFromJson(text);
    assertNull(event.getInputs().get(0).getName());
    List<String> warnings = Support.newList();
    GovernanceTransformer t = Support.transformer(warnings);
    assertSame(event, t.transform(event));
    assertEquals(1, warnings.size());
    assertTrue(warnings.get(0).startsWith("dq-governance listener: event " + event.getRun().getRunId()
        + " passed through unchanged: NullPointerException"), warnings.get(0));
    // and the next good event is enriched again
    assertTrue(json(t.transform(Support.event("read_csv.json"))).toString().contains("dqgov_dataContract"));
  }

  @Test
  void badRecordedJsonIsRejectedWithAOneLineMessage() {
    IllegalArgumentException e = org.junit.jupiter.api.Assertions.assertThrows(IllegalArgumentException.class,
        () -> QualityRegistry.record("file", "/x", "{\"inputFacets\": {\"dataQualityAssertions\": {\"assertions\": []}}}"));
    assertEquals("QualityRegistry.record: inputFacets.dataQualityAssertions._producer: expected a string", e.getMessage());
    assertEquals(0, QualityRegistry.size());
  }

  static String write(String text) {
    try {
      Path file = Files.createTempFile("manifest", ".json");
      file.toFile().deleteOnExit();
      Files.writeString(file, text, StandardCharsets.UTF_8);
      return file.toString();
    } catch (java.io.IOException e) {
      throw new java.io.UncheckedIOException(e);
    }
  }
}
