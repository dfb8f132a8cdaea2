package io.github.dqgovernance.listener;

import io.openlineage.client.OpenLineage;
import java.net.URI;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Supplier;

/**
 * Adds contract facets to the datasets of one event: each dataset gets its own contract's facets only.
 *
 * <p>Existing facets are copied as they are; ownership and tags are merged (ours appended when absent),
 * documentation is added only when the dataset has none. An event with no governed dataset is returned
 * as the same instance.
 *
 * <p>An unqualified contract table ({@code orders}) names the current database's table only, as the session
 * extension and the Python engine read it: the session's current {catalog, database} is read once per event.
 */
final class Enricher {
  static final String CONTRACT_FACET = "dqgov_dataContract";
  /** Fields of a recorded dqgov_dataContract facet that describe the run, not the contract. */
  static final List<String> STATUS_FIELDS = List.of("status", "quality_score", "valid_rows", "invalid_rows",
      "row_outputs", "enforce", "vetoed", "written_rows", "dropped_rows", "quarantined_rows", "rules", "not_evaluated");
  private static final Set<String> OURS = Set.of(CONTRACT_FACET);

  private static final int STARTED_LIMIT = 1000;
  private final Manifest manifest;
  private final OpenLineage ol;
  /** The session's current {catalog, database}, or null when unknown (then such a table matches in any database). */
  private final Supplier<String[]> currentDatabase;
  /** Governed outputs of runs whose START has passed, by run id, until their COMPLETE or FAIL (bounded). */
  private final Map<String, Started> started = Collections.synchronizedMap(
      new LinkedHashMap<String, Started>(16, 0.75f, false) {
        @Override
        protected boolean removeEldestEntry(Map.Entry<String, Started> eldest) {
          return size() > STARTED_LIMIT;
        }
      });

  private static final class Started {
    final List<OpenLineage.OutputDataset> outputs;
    final long at = System.nanoTime();

    Started(List<OpenLineage.OutputDataset> outputs) {
      this.outputs = outputs;
    }
  }

  Enricher(Manifest manifest, Supplier<String[]> currentDatabase) {
    this.manifest = manifest;
    this.ol = new OpenLineage(manifest.producer);
    this.currentDatabase = currentDatabase;
  }

  OpenLineage.RunEvent enrich(OpenLineage.RunEvent event) {
    List<OpenLineage.InputDataset> inputs = event.getInputs();
    List<OpenLineage.OutputDataset> outputs = event.getOutputs();
    List<OpenLineage.OutputDataset> restored = restoredOutputs(event);
    if (restored != null) {
      outputs = restored;
    }
    boolean noDatasets = (inputs == null || inputs.isEmpty()) && (outputs == null || outputs.isEmpty());
    String[] current = noDatasets ? null : currentDatabase.get();
    rememberStart(event, current);
    List<OpenLineage.InputDataset> newInputs = null;
    List<OpenLineage.OutputDataset> newOutputs = null;
    for (int i = 0; inputs != null && i < inputs.size(); i++) {
      OpenLineage.InputDataset before = inputs.get(i);
      OpenLineage.InputDataset after = before == null ? null : input(before, current);
      if (after != before) {
        newInputs = newInputs == null ? new ArrayList<>(inputs) : newInputs;
        newInputs.set(i, after);
      }
    }
    for (int i = 0; outputs != null && i < outputs.size(); i++) {
      OpenLineage.OutputDataset before = outputs.get(i);
      OpenLineage.OutputDataset after = before == null ? null : output(before, event.getEventType(), current);
      if (after != before) {
        newOutputs = newOutputs == null ? new ArrayList<>(outputs) : newOutputs;
        newOutputs.set(i, after);
      }
    }
    OpenLineage.RunEvent.EventType type = event.getEventType();
    if (type == OpenLineage.RunEvent.EventType.COMPLETE && vetoed(outputs)) {
      type = OpenLineage.RunEvent.EventType.FAIL; // the listener reports a vetoed commit as COMPLETE
    }
    if (newInputs == null && newOutputs == null && type == event.getEventType()) {
      return event;
    }
    return new OpenLineage(event.getProducer()).newRunEventBuilder()
        .eventTime(event.getEventTime())
        .eventType(type)
        .run(event.getRun())
        .job(event.getJob())
        .inputs(newInputs != null ? newInputs : inputs)
        .outputs(newOutputs != null ? newOutputs : outputs)
        .build();
  }

  /** A START's governed outputs, kept until the run's COMPLETE or FAIL (see restoredOutputs). */
  private void rememberStart(OpenLineage.RunEvent event, String[] current) {
    if (event.getEventType() != OpenLineage.RunEvent.EventType.START || event.getRun() == null
        || event.getOutputs() == null) {
      return;
    }
    List<OpenLineage.OutputDataset> governed = new ArrayList<>();
    for (OpenLineage.OutputDataset d : event.getOutputs()) {
      if (d != null
          && manifest.match(d.getNamespace(), d.getName(), Facets.symlinks(d.getFacets()), current) != null) {
        governed.add(d);
      }
    }
    if (!governed.isEmpty()) {
      started.put(String.valueOf(event.getRun().getRunId()), new Started(governed));
    }
  }

  /**
   * The OpenLineage listener's COMPLETE of a DSv2 write by name (a Delta table's {@code AppendDataExecV1}) names
   * no output, though its START did. Such a terminal event gets back the governed outputs of its START whose
   * results were recorded after that START (so by this run's write), to carry them; otherwise null.
   */
  private List<OpenLineage.OutputDataset> restoredOutputs(OpenLineage.RunEvent event) {
    OpenLineage.RunEvent.EventType type = event.getEventType();
    if (event.getRun() == null
        || (type != OpenLineage.RunEvent.EventType.COMPLETE && type != OpenLineage.RunEvent.EventType.FAIL)) {
      return null;
    }
    Started start = started.remove(String.valueOf(event.getRun().getRunId()));
    if (start == null || (event.getOutputs() != null && !event.getOutputs().isEmpty())) {
      return null;
    }
    List<OpenLineage.OutputDataset> back = new ArrayList<>();
    for (OpenLineage.OutputDataset d : start.outputs) {
      QualityRegistry.Recorded r = QualityRegistry.lookup(d.getNamespace(), d.getName(), Facets.symlinks(d.getFacets()));
      if (r != null && r.ended && r.recordedAt > start.at) {
        back.add(d);
      }
    }
    return back.isEmpty() ? null : back;
  }

  private static boolean vetoed(List<OpenLineage.OutputDataset> outputs) {
    for (int i = 0; outputs != null && i < outputs.size(); i++) {
      OpenLineage.OutputDataset d = outputs.get(i);
      if (d == null) {
        continue;
      }
      QualityRegistry.Recorded r = QualityRegistry.lookup(d.getNamespace(), d.getName(), Facets.symlinks(d.getFacets()));
      if (r != null && r.vetoed) {
        return true;
      }
    }
    return false;
  }

  private OpenLineage.InputDataset input(OpenLineage.InputDataset dataset, String[] current) {
    List<String[]> links = Facets.symlinks(dataset.getFacets());
    Manifest.Entry entry = manifest.match(dataset.getNamespace(), dataset.getName(), links, current);
    QualityRegistry.Recorded recorded = QualityRegistry.lookup(dataset.getNamespace(), dataset.getName(), links);
    if (entry == null && recorded == null) {
      return dataset;
    }
    OpenLineage.InputDatasetInputFacets inputFacets = dataset.getInputFacets();
    if (recorded != null && !recorded.inputFacets.isEmpty()) {
      OpenLineage.InputDatasetInputFacetsBuilder builder = Facets.copy(inputFacets, recorded.inputFacets.keySet());
      for (Map.Entry<String, Map<String, Object>> e : recorded.inputFacets.entrySet()) {
        builder.put(e.getKey(), inputFacet(e.getValue()));
      }
      inputFacets = builder.build();
    }
    return ol.newInputDataset(dataset.getNamespace(), dataset.getName(),
        datasetFacets(dataset.getFacets(), entry, recorded), inputFacets);
  }

  private OpenLineage.OutputDataset output(
      OpenLineage.OutputDataset dataset, OpenLineage.RunEvent.EventType type, String[] current) {
    List<String[]> links = Facets.symlinks(dataset.getFacets());
    Manifest.Entry entry = manifest.match(dataset.getNamespace(), dataset.getName(), links, current);
    QualityRegistry.Recorded recorded = QualityRegistry.lookup(dataset.getNamespace(), dataset.getName(), links);
    if (recorded != null && recorded.ended && type != OpenLineage.RunEvent.EventType.COMPLETE
        && type != OpenLineage.RunEvent.EventType.FAIL) {
      recorded = null; // an earlier write's results: this write has not been measured yet
    }
    if (entry == null && (recorded == null || recorded.contract == null)) {
      return dataset;
    }
    return ol.newOutputDataset(dataset.getNamespace(), dataset.getName(),
        datasetFacets(dataset.getFacets(), entry, recorded, true), dataset.getOutputFacets());
  }

  private OpenLineage.DatasetFacets datasetFacets(
      OpenLineage.DatasetFacets facets, Manifest.Entry entry, QualityRegistry.Recorded recorded) {
    return datasetFacets(facets, entry, recorded, false);
  }

  private OpenLineage.DatasetFacets datasetFacets(
      OpenLineage.DatasetFacets facets, Manifest.Entry entry, QualityRegistry.Recorded recorded, boolean output) {
    java.util.Set<String> replaced = new HashSet<>(OURS);
    if (output && recorded != null) {
      replaced.addAll(recorded.outputFacets.keySet());
    }
    OpenLineage.DatasetFacetsBuilder builder = Facets.copy(facets, replaced);
    if (output && recorded != null) {
      for (Map.Entry<String, Map<String, Object>> e : recorded.outputFacets.entrySet()) {
        Map<String, Object> properties = new LinkedHashMap<>(e.getValue());
        URI producer = URI.create((String) properties.remove("_producer"));
        URI schema = URI.create((String) properties.remove("_schemaURL"));
        builder.put(e.getKey(), new Facets.MapDatasetFacet(producer, schema, properties));
      }
    }
    if (entry != null) {
      OpenLineage.OwnershipDatasetFacet ownership = ownership(facets == null ? null : facets.getOwnership(), entry);
      if (ownership != null) {
        builder.ownership(ownership);
      }
      OpenLineage.TagsDatasetFacet tags = tags(facets == null ? null : facets.getTags(), entry);
      if (tags != null) {
        builder.tags(tags);
      }
      if (entry.documentation != null && (facets == null || facets.getDocumentation() == null)) {
        builder.documentation(ol.newDocumentationDatasetFacetBuilder()
            .description(entry.documentation).contentType(entry.documentationContentType).build());
      }
    }
    Map<String, Object> contract = contract(entry, recorded);
    if (contract != null) {
      builder.put(CONTRACT_FACET, new Facets.MapDatasetFacet(manifest.producer, manifest.contractSchemaUrl, contract));
    }
    return builder.build();
  }

  /** The manifest's contract identity with the recorded run status on top; the recorded facet alone without one. */
  private static Map<String, Object> contract(Manifest.Entry entry, QualityRegistry.Recorded recorded) {
    Map<String, Object> out = new LinkedHashMap<>();
    if (entry != null) {
      out.putAll(entry.contract);
    }
    if (recorded != null && recorded.contract != null) {
      for (Map.Entry<String, Object> e : recorded.contract.entrySet()) {
        String key = e.getKey();
        if (key.startsWith("_") || e.getValue() == null) {
          continue;
        }
        if (entry == null || STATUS_FIELDS.contains(key)) {
          out.put(key, e.getValue());
        }
      }
    }
    return out.isEmpty() ? null : out;
  }

  /** Existing owners plus the contract's owners that are not there yet; null when nothing to set. */
  private OpenLineage.OwnershipDatasetFacet ownership(OpenLineage.OwnershipDatasetFacet existing, Manifest.Entry entry) {
    if (entry.owners.isEmpty()) {
      return null;
    }
    List<OpenLineage.OwnershipDatasetFacetOwners> owners = new ArrayList<>();
    Set<String> names = new HashSet<>();
    if (existing != null && existing.getOwners() != null) {
      for (OpenLineage.OwnershipDatasetFacetOwners o : existing.getOwners()) {
        owners.add(o);
        names.add(o.getName());
      }
    }
    int before = owners.size();
    for (String[] o : entry.owners) {
      if (names.add(o[0])) {
        owners.add(ol.newOwnershipDatasetFacetOwners(o[0], o[1]));
      }
    }
    if (owners.size() == before) {
      return null; // nothing new: keep the listener's facet as it was
    }
    return ol.newOwnershipDatasetFacet(owners);
  }

  /** Existing tags plus the contract's tags (by key, value and field) that are not there yet. */
  private OpenLineage.TagsDatasetFacet tags(OpenLineage.TagsDatasetFacet existing, Manifest.Entry entry) {
    if (entry.tags.isEmpty()) {
      return null;
    }
    List<OpenLineage.TagsDatasetFacetFields> tags = new ArrayList<>();
    Set<String> seen = new HashSet<>();
    if (existing != null && existing.getTags() != null) {
      for (OpenLineage.TagsDatasetFacetFields t : existing.getTags()) {
        tags.add(t);
        seen.add(t.getKey() + '\n' + t.getValue() + '\n' + t.getField());
      }
    }
    int before = tags.size();
    for (String[] t : entry.tags) {
      if (seen.add(t[0] + '\n' + t[1] + '\n' + t[3])) {
        tags.add(ol.newTagsDatasetFacetFields(t[0], t[1], t[2], t[3]));
      }
    }
    if (tags.size() == before) {
      return null;
    }
    return ol.newTagsDatasetFacet(Collections.unmodifiableList(tags));
  }

  private OpenLineage.InputDatasetFacet inputFacet(Map<String, Object> json) {
    Map<String, Object> properties = new LinkedHashMap<>(json);
    URI producer = URI.create((String) properties.remove("_producer"));
    URI schema = URI.create((String) properties.remove("_schemaURL"));
    return new Facets.MapInputFacet(producer, schema, properties);
  }
}
