"""Static word embeddings from an encoder: teacher cache, X2Static, aggregation, vector files."""
