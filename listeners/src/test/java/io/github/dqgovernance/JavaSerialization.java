package io.github.dqgovernance;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.ObjectInputStream;
import java.io.ObjectOutputStream;
import java.io.Serializable;

/** What a Spark task does to the objects its code holds: Java serialization there and back. */
public final class JavaSerialization {
  private JavaSerialization() {}

  /** {@code original} after a round trip through Java serialization. */
  @SuppressWarnings("unchecked")
  public static <T extends Serializable> T roundTrip(T original) throws Exception {
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    try (ObjectOutputStream out = new ObjectOutputStream(bytes)) {
      out.writeObject(original);
    }
    try (ObjectInputStream in = new ObjectInputStream(new ByteArrayInputStream(bytes.toByteArray()))) {
      return (T) in.readObject();
    }
  }
}
