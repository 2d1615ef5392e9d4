"""Text: corpus sources, sampling, segmentation (UDPipe, ICU), vocabularies, bitext."""
