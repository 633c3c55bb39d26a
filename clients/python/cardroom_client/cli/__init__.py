"""`cardroom`, the terminal client: sign up, the lobby, tables, seats, deals played in a
terminal user interface, hand histories with their fairness proofs, the wallet's ledger.

It needs the distribution's `cli` extra (``pip install 'cardroom-client[cli]'``: Click,
Textual, Rich and platformdirs); ``import cardroom_client`` never imports it, so the SDK
stays httpx-only. The guide is docs/cli.md.
"""
