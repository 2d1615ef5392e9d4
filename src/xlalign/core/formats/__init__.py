"""One reader and one writer per file format the stages exchange, shared by every caller."""
