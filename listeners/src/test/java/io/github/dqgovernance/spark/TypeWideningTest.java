package io.github.dqgovernance.spark;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/** Which written types the checks read cast to the contract's type: only those that keep every value. */
class TypeWideningTest {
  @Test
  void widensOnlyWhenEveryValueIsKept() {
    assertTrue(TypeWidening.lossless("int", "bigint"));
    assertTrue(TypeWidening.lossless("smallint", "int"));
    assertTrue(TypeWidening.lossless("tinyint", "bigint"));
    assertTrue(TypeWidening.lossless("float", "double"));
    assertTrue(TypeWidening.lossless("int", "double"));
    assertTrue(TypeWidening.lossless("int", "decimal(12,2)"));
    assertTrue(TypeWidening.lossless("bigint", "decimal(19,0)"));
    assertTrue(TypeWidening.lossless("decimal(10,2)", "decimal(12,2)"));
    assertTrue(TypeWidening.lossless("decimal(10,2)", "decimal(13,4)"));
    assertFalse(TypeWidening.lossless("int", "decimal(11,2)")); // 9 integer digits < 10
    assertFalse(TypeWidening.lossless("bigint", "decimal(20,2)"));
    assertFalse(TypeWidening.lossless("decimal(12,4)", "decimal(12,2)"));
    assertFalse(TypeWidening.lossless("bigint", "int"));
    assertFalse(TypeWidening.lossless("bigint", "double"));
    assertFalse(TypeWidening.lossless("int", "float"));
    assertFalse(TypeWidening.lossless("double", "decimal(12,2)"));
    assertFalse(TypeWidening.lossless("double", "float"));
    assertFalse(TypeWidening.lossless("int", "string"));
    assertFalse(TypeWidening.lossless("date", "timestamp"));
  }
}
