"""Result tables in the papers' layout, and comparisons of two result trees."""
