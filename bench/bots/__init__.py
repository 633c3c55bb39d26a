"""`make bench-bots`: computer players' strategies against each other, in process."""
