"""`speechannotator view OUT`: a local review page to see, hear and correct annotations."""
