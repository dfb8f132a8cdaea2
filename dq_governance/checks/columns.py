"""Names of the columns a check adds to the rows it annotates (annotated and quarantine outputs)."""

ERRORS_COL = "_dq_errors"  # array of the error rules a row violates
WARNINGS_COL = "_dq_warnings"  # array of the warn rules it violates
