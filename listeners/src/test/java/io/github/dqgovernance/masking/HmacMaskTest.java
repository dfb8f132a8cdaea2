package io.github.dqgovernance.masking;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.github.dqgovernance.JavaSerialization;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;
import org.junit.jupiter.api.Test;

class HmacMaskTest {
  static final byte[] KEY = "junit-masking-key-0123456789abcdef".getBytes(StandardCharsets.UTF_8);

  static byte[] pad(byte[] key, int xor) {
    byte[] out = new byte[64];
    for (int i = 0; i < 64; i++) {
      out[i] = (byte) ((i < key.length ? key[i] : 0) ^ xor);
    }
    return out;
  }

  static HmacMask mask(byte[] key, String normaliser, String encoding) {
    return new HmacMask(pad(key, 0x36), pad(key, 0x5c), normaliser, encoding);
  }

  static byte[] reference(String text) throws Exception {
    Mac mac = Mac.getInstance("HmacSHA256");
    mac.init(new SecretKeySpec(KEY, "HmacSHA256"));
    return mac.doFinal(text.getBytes(StandardCharsets.UTF_8));
  }

  @Test
  void equalsJavaxHmacOfTheNormalisedValue() throws Exception {
    assertEquals(HmacMask.hex(reference("52998224725")), mask(KEY, "cpf", "hex").call(" 529.982.247-25 "));
    assertEquals(HmacMask.hex(reference("ana@example.com")), mask(KEY, "email", "hex").call("  Ana@Example.COM"));
    assertEquals(HmacMask.hex(reference("12ABC34501DE35")), mask(KEY, "cnpj", "hex").call("12.abc.345/01de-35"));
    assertEquals(HmacMask.hex(reference("5511987654321")), mask(KEY, "phone", "hex").call("(011) 98765-4321"));
    assertEquals(HmacMask.hex(reference("5511987654321")), mask(KEY, "phone", "hex").call("+55 11 98765-4321"));
    assertEquals(HmacMask.hex(reference("a\tb")), mask(KEY, "text", "hex").call(" a\tb "));
    assertEquals(Base64.getEncoder().encodeToString(reference("x")), mask(KEY, "text", "base64").call("x"));
  }

  @Test
  void tokenKeepsLayoutAndClasses() throws Exception {
    byte[] digest = reference("52998224725");
    String token = mask(KEY, "cpf", "token").call(" 529.982.247-25 ");
    assertEquals(HmacMask.token("529.982.247-25", digest), token);
    assertTrue(token.matches("[0-9]{3}\\.[0-9]{3}\\.[0-9]{3}-[0-9]{2}"), token);
    char last = token.charAt(13);
    assertEquals((char) ('0' + (digest[0] & 0xff) % 10), last);  // the last digit takes byte 0
    String mixed = HmacMask.token("Ab-9", digest);
    assertEquals('A' + (digest[2] & 0xff) % 26, mixed.charAt(0));
    assertEquals('a' + (digest[1] & 0xff) % 26, mixed.charAt(1));
    assertEquals('-', mixed.charAt(2));
  }

  @Test
  void nullAndEmptyStayNull() throws Exception {
    assertNull(mask(KEY, "cpf", "hex").call(null));
    assertNull(mask(KEY, "cpf", "hex").call("..-"));
    assertNull(mask(KEY, "text", "hex").call("   "));
  }

  @Test
  void otherKeyOtherOutputAndNoKeyInToString() throws Exception {
    byte[] other = "another-masking-key-0123456789abcd".getBytes(StandardCharsets.UTF_8);
    assertNotEquals(mask(KEY, "cpf", "hex").call("52998224725"), mask(other, "cpf", "hex").call("52998224725"));
    assertEquals("HmacMask(cpf, hex)", mask(KEY, "cpf", "hex").toString());
    assertThrows(IllegalArgumentException.class, () -> new HmacMask(new byte[3], new byte[64], "cpf", "hex"));
    assertThrows(IllegalArgumentException.class, () -> mask(KEY, "cpf", "rot13"));
  }

  @Test
  void survivesJavaSerializationLikeASparkTask() throws Exception {
    HmacMask original = mask(KEY, "email", "hex");
    String before = original.call("a@b.co");
    HmacMask copy = JavaSerialization.roundTrip(original);
    assertEquals(before, copy.call("A@B.CO "));
  }
}
