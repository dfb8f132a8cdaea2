package io.github.dqgovernance.listener;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.URI;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * A written path's identity against the manifest {@code dqgov manifest} compiles: the fixture
 * manifests/object_stores.json is {@code dqgov manifest manifests/object_stores/*.yaml
 * --match 'os_daily=s3a://lake/daily/**'} (tests/test_enforce_trust.py recompiles it and compares the match keys).
 */
class DatasetIdentityTest {
  private static String contractFor(Manifest m, String path) {
    String[] id = DatasetIdentity.of(URI.create(path));
    Manifest.Entry e = m.match(id[0], id[1], List.of());
    return e == null ? null : e.contractName;
  }

  @Test
  void namesAPathAsFacetsDatasetIdentityDoes() {
    assertArrayEquals(new String[] {"s3://lake", "orders"}, DatasetIdentity.of(URI.create("s3a://lake/orders")));
    assertArrayEquals(new String[] {"s3://lake", "orders"}, DatasetIdentity.of(URI.create("s3n://lake/orders/")));
    assertArrayEquals(new String[] {"s3://lake", "a/b"}, DatasetIdentity.of(URI.create("S3://lake/a/b")));
    assertArrayEquals(new String[] {"gs://bkt", "events"}, DatasetIdentity.of(URI.create("gs://bkt/events")));
    assertArrayEquals(new String[] {"abfss://ct@acct.dfs.core.windows.net", "cust"},
        DatasetIdentity.of(URI.create("abfss://ct@acct.dfs.core.windows.net/cust")));
    assertArrayEquals(new String[] {"wasbs://ct@acct.blob.core.windows.net", "w/x"},
        DatasetIdentity.of(URI.create("wasbs://ct@acct.blob.core.windows.net/w/x")));
    assertArrayEquals(new String[] {"hdfs://nn:8020", "/lake/h"}, DatasetIdentity.of(URI.create("hdfs://nn:8020/lake/h/")));
    assertArrayEquals(new String[] {"file", "/data/t"}, DatasetIdentity.of(URI.create("file:/data/t")));
    assertArrayEquals(new String[] {"file", "/data/t"}, DatasetIdentity.of(URI.create("/data/t//")));
    assertArrayEquals(new String[] {"abfs://c@a.dfs.core.windows.net", "/keep"},
        DatasetIdentity.of(URI.create("abfs://c@a.dfs.core.windows.net/keep"))); // other schemes keep the slash
  }

  @Test
  void eachObjectStoreWriteFindsItsContractInADqgovManifest() throws ManifestException {
    Manifest m = Manifest.load(Support.resourcePath("manifests/object_stores.json"));
    assertEquals("os_s3a", contractFor(m, "s3a://lake/orders"));
    assertEquals("os_s3a", contractFor(m, "s3://lake/orders/"));
    assertEquals("os_s3a", contractFor(m, "s3a://lake/orders/date=2026-01-01"));
    assertEquals("os_s3", contractFor(m, "s3a://lake/sales"));
    assertEquals("os_s3", contractFor(m, "s3://lake/sales"));
    assertEquals("os_s3n", contractFor(m, "s3a://old/legacy"));
    assertEquals("os_gs", contractFor(m, "gs://bkt/events"));
    assertEquals("os_abfss", contractFor(m, "abfss://ct@acct.dfs.core.windows.net/cust"));
    assertEquals("os_wasbs", contractFor(m, "wasbs://ct@acct.blob.core.windows.net/w/x"));
    assertEquals("os_hdfs", contractFor(m, "hdfs://nn:8020/lake/h"));
    assertEquals("os_local", contractFor(m, "file:/data/local/t"));
    // --match os_daily=s3a://lake/daily/**: the directory itself and what is under it
    assertEquals("os_daily", contractFor(m, "s3a://lake/daily"));
    assertEquals("os_daily", contractFor(m, "s3://lake/daily/day=1"));
    assertNull(contractFor(m, "s3://lake/daily2"));
    assertNull(contractFor(m, "s3://lake/ordersx"));
    assertNull(contractFor(m, "gs://lake/orders")); // another store, another namespace
    assertNull(contractFor(m, "abfss://other@acct.dfs.core.windows.net/cust"));
  }

  @Test
  void aDirectoryMatchesItsOwnDoubleStarGlob() {
    assertTrue(new Glob("s3://lake/orders/**").matches("s3://lake/orders"));
    assertTrue(new Glob("s3://lake/orders/**").matches("s3://lake/orders/a/b"));
    assertFalse(new Glob("s3://lake/orders/**").matches("s3://lake/ordersx"));
    assertTrue(new Glob("/data/*/orders/**").matches("/data/x/orders"));
    assertFalse(new Glob("/data/*/orders/**").matches("/data/x/y/orders"));
    assertTrue(new Glob("/**").matches("/anything/at/all"));
  }
}
