package io.github.dqgovernance.listener;

/** A governance manifest that cannot be used: the message is one line naming the file and the field. */
public final class ManifestException extends Exception {
  public ManifestException(String message) {
    super(message);
  }
}
