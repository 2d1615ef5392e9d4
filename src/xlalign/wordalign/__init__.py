"""Word alignment of bitext: eflomal, symmetrisation, link dictionaries, AER."""
