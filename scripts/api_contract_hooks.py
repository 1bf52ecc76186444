"""schemathesis hooks for scripts/api-contract-test: the one server rule no JSON Schema can state.

An expiry must lie in the future (a guest link or share that expired when it was made is refused
with 400), so a generated time in the past is moved a year on before the request is sent, in every
phase (schemathesis judges the case again after the hook). Everything else the server checks is in
the document itself.
"""
from datetime import datetime, timedelta, timezone

import schemathesis


def _future(value):
    try:
        at = datetime.fromisoformat(value.replace("Z", "+00:00").replace("z", "+00:00"))
    except (AttributeError, ValueError):
        return value  # not a time: sent as it is, and the server must say 400
    now = datetime.now(timezone.utc)
    if at.tzinfo is None or at > now + timedelta(minutes=1):
        return value
    return (now + timedelta(days=365)).strftime("%Y-%m-%dT%H:%M:%SZ")


@schemathesis.hook
def before_call(context, case, kwargs):
    body = getattr(case, "body", None)
    if isinstance(body, dict) and isinstance(body.get("expires"), str):
        body["expires"] = _future(body["expires"])


