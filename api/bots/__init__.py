"""The computer players' runner: `python -m api.bots` plays every seated bot (docs/bots.md)."""
