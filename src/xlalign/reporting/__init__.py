"""Result tables in the papers' layout."""
