"""The HTTPS session to one switch's NVUE REST API (stdlib http.client and ssl only).

The API (Cumulus Linux 5.9 user guide, "NVUE API"): HTTPS on port 8765 under
/nvue_v1, HTTP basic auth; GET reads (`?rev=applied|<id>`), POST /revision makes a
revision, PATCH /nvue_v1/<path>?rev=<id> stages (a `null` value unsets), DELETE
clears, PATCH /revision/<id> {"state": "apply", ...} applies.

Who answers is checked before the password is sent, as the Onyx SSH host keys are:
the switch's certificate must chain to `ca_file` (a CA, or the switch's own
self-signed certificate, which the switch makes at first boot: "Certificates") and
name the address connected to, and/or its SHA-256 must equal the pinned
`fingerprint`. Nothing given and checking on: the system CAs, which a switch's
self-signed certificate fails - the message says what to set. `verify=False` is the
explicit, unsafe opt-out (any certificate: a man in the middle gets the password).

Every answer fails closed: an unexpected status, a body that is not JSON or not
the expected kind raises TransportError naming the method and the path. The
password is only ever in the Authorization header; messages never carry it.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import http.client
import json
import re
import ssl
from dataclasses import dataclass
from urllib.parse import quote, urlencode

from ..driver import DriverError, UntrustedSwitch

ROOT = "/nvue_v1"
DEFAULT_PORT = 8765
_HEX = re.compile(r"^[0-9a-f]{64}$")


class TransportError(DriverError):
    """The switch refused a request or answered something cxfab cannot read."""

    def __init__(self, message: str, status: int | None = None):
        super().__init__(message)
        self.status = status


class Unreachable(DriverError):
    """No TCP/TLS session to the switch (down, wrong port, timeout)."""


@dataclass(frozen=True)
class Trust:
    """How the switch proves who it is (see the module docstring)."""

    ca_file: str | None = None
    fingerprint: str | None = None  # SHA-256 of the DER certificate, hex, colons allowed
    verify: bool = True

    def pin(self) -> str | None:
        if not self.fingerprint:
            return None
        pin = self.fingerprint.replace(":", "").strip().lower()
        if not _HEX.match(pin):
            raise UntrustedSwitch(
                "tls fingerprint: not a SHA-256 (64 hex digits, colons allowed); "
                "`openssl x509 -noout -fingerprint -sha256 -in cert.pem` prints one"
            )
        return pin


def _context(trust: Trust) -> ssl.SSLContext:
    if not trust.verify or (trust.fingerprint and not trust.ca_file):
        # The pin is the proof (checked after the handshake), or there is none (opt-out).
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
        context.check_hostname = False
        context.verify_mode = ssl.CERT_NONE
        return context
    try:
        return ssl.create_default_context(cafile=trust.ca_file)
    except (OSError, ssl.SSLError) as exc:
        raise UntrustedSwitch(f"tls ca file {trust.ca_file}: cannot load it ({exc})") from None


def _detail(data) -> str:
    """What an error answer says: RFC 7807 `detail`/`title`, or the text, shortened."""
    if isinstance(data, dict):
        text = data.get("detail") or data.get("title") or json.dumps(data)
    else:
        text = str(data)
    return text if len(text) <= 300 else text[:300] + " ..."


class NvueClient:
    def __init__(self, host: str, port: int, username: str, password: str, trust: Trust,
                 timeout: float = 20.0):  # fmt: skip
        self.host, self.port, self.trust, self.timeout = host, int(port), trust, timeout
        self._pin = trust.pin()
        self._context = _context(trust)
        token = base64.b64encode(f"{username}:{password}".encode()).decode("ascii")
        self._headers = {
            "Authorization": f"Basic {token}",
            "Accept": "application/json",
            "Content-Type": "application/json",
        }
        self.requests = 0  # requests sent (the record shows them)

    @property
    def where(self) -> str:
        return f"{self.host}:{self.port}"

    def _connect(self) -> http.client.HTTPSConnection:
        conn = http.client.HTTPSConnection(
            self.host, self.port, context=self._context, timeout=self.timeout
        )
        try:
            conn.connect()
        except ssl.SSLCertVerificationError as exc:
            conn.close()
            raise UntrustedSwitch(self._unproven(exc.verify_message or str(exc))) from None
        except (OSError, ssl.SSLError) as exc:
            conn.close()
            raise Unreachable(f"{self.where}: cannot open the HTTPS session: {exc}") from None
        if self._pin:
            der = conn.sock.getpeercert(binary_form=True) or b""
            seen = hashlib.sha256(der).hexdigest()
            if not hmac.compare_digest(seen, self._pin):
                conn.close()
                raise UntrustedSwitch(
                    f"{self.where}: the TLS certificate's SHA-256 is {seen}, not the pinned "
                    f"{self._pin}; stopping before the password is sent. Check the switch (a "
                    "replaced switch, a new certificate or a man in the middle), then update "
                    "cxfab_switch_tls_fingerprints"
                )
        return conn

    def _unproven(self, why: str) -> str:
        where = f"the CA file {self.trust.ca_file}" if self.trust.ca_file else "the system CAs"
        return (
            f"{self.where}: the TLS certificate is not trusted by {where} ({why}); stopping "
            "before the password is sent. Give the switch's CA or its own certificate "
            "(/etc/ssl/certs/cumulus.pem) in cxfab_switch_tls_ca, or its SHA-256 in "
            "cxfab_switch_tls_fingerprints"
        )

    def request(self, method: str, path: str | tuple, query: dict | None = None, body=None,
                expect=(200,)):  # fmt: skip
        """The JSON answer of `method ROOT/path?query`; anything else raises. `path` is a
        "/"-separated string or a tuple of segments (a revision id made by the CLI holds
        "/": `changeset/cumulus/...`, one segment, sent as %2F)."""
        segments = path if isinstance(path, tuple) else tuple(p for p in path.split("/") if p)
        url = ROOT + "/" + "/".join(quote(str(p), safe="") for p in segments)
        if query:
            url += "?" + urlencode(query)
        shown = f"{method} {url}"
        data = None if body is None else json.dumps(body)
        conn = self._connect()
        try:
            conn.request(method, url, body=data, headers=self._headers)
            self.requests += 1
            response = conn.getresponse()
            raw = response.read()
            status = response.status
        except (OSError, http.client.HTTPException) as exc:
            raise Unreachable(f"{self.where}: {shown}: no answer ({exc})") from None
        finally:
            conn.close()
        try:
            answer = json.loads(raw) if raw else None
        except ValueError:
            raise TransportError(
                f"{self.where}: {shown}: HTTP {status}, the answer is not JSON", status
            ) from None
        if status == 401:
            raise TransportError(f"{self.where}: {shown}: HTTP 401, the login was refused", 401)
        if status not in expect:
            raise TransportError(f"{self.where}: {shown}: HTTP {status}: {_detail(answer)}", status)
        return answer

    def get_object(self, path: str | tuple, rev: str | None = None) -> dict:
        query = {"rev": rev, "filled": "false"} if rev else None
        answer = self.request("GET", path, query)
        if not isinstance(answer, dict):
            shown = "/".join(path) if isinstance(path, tuple) else path
            raise TransportError(f"{self.where}: GET {ROOT}/{shown}: not a JSON object")
        return answer
