package io.github.dqgovernance.spark;

/** A deliberate stop: block mode vetoed a governed write before its commit (the message is one line). */
public final class GovernanceVetoException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  public GovernanceVetoException(String message) {
    super(message, null, false, false);
  }
}
