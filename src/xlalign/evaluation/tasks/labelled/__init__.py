"""Gold labelled data from registry packages as zero-shot task records (one module per source)."""
