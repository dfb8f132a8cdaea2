package io.github.dqgovernance.masking;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.Locale;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;
import org.junit.jupiter.api.Test;

/**
 * What a keyed mask costs per value before Spark is involved: {@link HmacMask#call} (normalise, HMAC,
 * hex) against one unkeyed SHA-256 of the same text (the floor of any SHA-256-based mask) and
 * {@code javax.crypto.Mac}, in one JVM, after a warm-up, on 3,000,000 CPF-like values.
 *
 * <p>Not a test (no assertion on time, not picked up by `mvn test`): run it with
 * {@code mvn -q -f listeners/pom.xml test -Dtest=HmacCostBenchmark} or benchmarks/bench_hmac_cost.py.
 * It prints one JSON line.
 */
class HmacCostBenchmark {
  static final int VALUES = 3_000_000;
  static final int DISTINCT = 4096;

  @Test
  void run() throws Exception {
    byte[] key = "benchmark-key-0123456789abcdef0123456789".getBytes(StandardCharsets.UTF_8);
    byte[] ipad = new byte[64];
    byte[] opad = new byte[64];
    for (int i = 0; i < 64; i++) {
      byte k = i < key.length ? key[i] : 0;
      ipad[i] = (byte) (k ^ 0x36);
      opad[i] = (byte) (k ^ 0x5c);
    }
    String[] values = new String[DISTINCT];
    for (int i = 0; i < DISTINCT; i++) {
      values[i] = String.format(Locale.ROOT, "%03d.%03d.%03d-%02d", i % 1000, (i * 7) % 1000, (i * 13) % 1000, i % 100);
    }
    HmacMask mask = new HmacMask(ipad, opad, "cpf", "hex");
    MessageDigest sha = MessageDigest.getInstance("SHA-256");
    Mac mac = Mac.getInstance("HmacSHA256");
    mac.init(new SecretKeySpec(key, "HmacSHA256"));
    double[] best = {Double.MAX_VALUE, Double.MAX_VALUE, Double.MAX_VALUE};
    long sink = 0;
    for (int round = 0; round < 4; round++) {  // round 0 warms the JIT up and is not counted
      long start = System.nanoTime();
      for (int i = 0; i < VALUES; i++) {
        sink += sha.digest(HmacMask.digits(values[i % DISTINCT]).getBytes(StandardCharsets.UTF_8))[0];
      }
      double unkeyed = (System.nanoTime() - start) / (double) VALUES;
      start = System.nanoTime();
      for (int i = 0; i < VALUES; i++) {
        sink += mac.doFinal(HmacMask.digits(values[i % DISTINCT]).getBytes(StandardCharsets.UTF_8))[0];
      }
      double javax = (System.nanoTime() - start) / (double) VALUES;
      start = System.nanoTime();
      for (int i = 0; i < VALUES; i++) {
        sink += mask.call(values[i % DISTINCT]).charAt(0);
      }
      double udf = (System.nanoTime() - start) / (double) VALUES;
      if (round > 0) {
        best[0] = Math.min(best[0], unkeyed);
        best[1] = Math.min(best[1], javax);
        best[2] = Math.min(best[2], udf);
      }
    }
    System.out.println(String.format(Locale.ROOT,
        "{\"benchmark\": \"hmac_cost\", \"values\": %d, \"unkeyed_sha256_ns\": %.1f, \"javax_mac_ns\": %.1f, "
            + "\"hmac_mask_ns\": %.1f, \"hmac_mask_vs_unkeyed\": %.3f, \"sink\": %d}",
        VALUES, best[0], best[1], best[2], best[2] / best[0], sink));
  }
}
