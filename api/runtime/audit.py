"""`python -m api.runtime.audit`: check every invariant of the ledger over the store.

Reads the whole store (a scan over every wallet and every table's ledger: an
operator's tool, not a request path), prints the totals and each discrepancy, one a
line, and exits 1 if there is any. The same report is `GET /v1/operator/audit`.
The settings are the gateway's (`REDIS_URL`, `REDIS_CLUSTER`, ...).
"""

from __future__ import annotations

import json
import sys


def main() -> int:
    """Run the audit; 0 when the ledger is clean."""
    from api.bootstrap import bootstrap
    from api.settings import Settings

    services = bootstrap(Settings.from_env(), players=False)
    report = services.wallets.audit()
    print(json.dumps({"clean": report.clean, "totals": report.totals}))
    for line in report.discrepancies:
        print(line)
    services.close()
    return 0 if report.clean else 1


if __name__ == "__main__":
    sys.exit(main())
