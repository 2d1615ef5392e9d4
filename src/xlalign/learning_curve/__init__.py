"""The learning curve of X2S-M against aggregation by corpus size (a stage of its own:
it trains, maps and scores, so it sits above static, mapping and evaluation)."""
