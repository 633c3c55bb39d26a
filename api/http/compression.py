"""Compression of answers, as the client's Accept-Encoding asks (br or gzip).

`CompressionStep` is one step of the request pipeline, so it covers the moves' endpoint
below Flask and Flask's routes alike. From its `after` it registers a body filter
(`api.http.pipeline`) for an answer worth compressing: a compressible type (JSON,
problem+json, HTML, CSS, JavaScript, YAML), a known Content-Length of at least
`min_bytes`, no Content-Encoding of its own, and a coding the client accepts. An event
stream has no Content-Length and a type of its own: it is never held, never compressed,
each event goes out as it is written.

A compressed answer's strong ETag carries the coding as a suffix (`"7"` becomes
`"7-br"`), so no two representations share a strong tag. The step takes those suffixes
off the tags of If-Match and If-None-Match before any endpoint reads them, so a tag read
in any coding still names the table's version; a 304 answers with the tag in the coding
the client holds.
"""

from __future__ import annotations

import re
import zlib
from collections.abc import Callable

import brotli

from api.http.pipeline import Exchange, Headers

# the codings this gateway writes, most preferred first when the client weighs them alike
CODINGS = ("br", "gzip")
IDENTITY = "identity"

_COMPRESSIBLE_TYPES = frozenset(
    {
        "application/json",
        "application/problem+json",
        "application/javascript",
        "application/yaml",
        "text/css",
        "text/html",
        "text/javascript",
        "text/plain",
    }
)
# qvalue = ( "0" [ "." 0*3DIGIT ] ) / ( "1" [ "." 0*3("0") ] )  (RFC 9110, 12.4.2)
_QVALUE = re.compile(r"(?:0(?:\.[0-9]{0,3})?|1(?:\.0{0,3})?)\Z")
_TOKEN = re.compile(r"[!#$%&'*+.^_`|~0-9A-Za-z-]+\Z")
# the coding suffix of an entity tag, just before its closing quote
_SUFFIXED_TAG = re.compile(r'-(br|gzip)"')


def accepted_codings(header: str | None) -> dict[str, float]:
    """The weight the client gives each coding it names in Accept-Encoding (RFC 9110,
    12.5.3), "*" included, names in lower case (x-gzip is gzip). Elements that are not
    a coding with an optional valid q are skipped; the first mention of a coding counts."""
    weights: dict[str, float] = {}
    if header is None:
        return weights
    for element in header.split(","):
        name, _, parameters = element.partition(";")
        name = name.strip().lower()
        if not name or _TOKEN.match(name) is None:
            continue
        weight = 1.0
        valid = True
        for parameter in parameters.split(";") if parameters else ():
            key, _, value = parameter.strip().partition("=")
            if key.strip().lower() != "q":
                continue
            value = value.strip()
            if _QVALUE.match(value) is None:
                valid = False
                break
            weight = float(value)
        if not valid:
            continue
        if name == "x-gzip":
            name = "gzip"
        weights.setdefault(name, weight)
    return weights


def choose_coding(header: str | None) -> str:
    """The coding to answer in: the most weighted of br and gzip the client accepts (a
    name's own weight, else that of "*"; br on a tie), or identity. No header means
    identity; so does a header that refuses everything, identity included (the gateway
    answers uncompressed rather than 406)."""
    weights = accepted_codings(header)
    anything = weights.get("*", 0.0)
    best, best_weight = IDENTITY, 0.0
    for coding in CODINGS:
        weight = weights.get(coding, anything)
        if weight > best_weight:
            best, best_weight = coding, weight
    return best


def suffixed_tag(tag: str, coding: str) -> str:
    """The entity tag `tag` ("7" or W/"7") of the representation in `coding` ("7-br")."""
    if not tag.endswith('"'):
        return tag
    return f'{tag[:-1]}-{coding}"'


def plain_tags(header: str) -> tuple[str, str | None]:
    """An If-Match or If-None-Match list with the coding suffixes taken off its tags, and
    the first suffix taken off (None when there was none)."""
    found = _SUFFIXED_TAG.search(header)
    if found is None:
        return header, None
    return _SUFFIXED_TAG.sub('"', header), found.group(1)


def compressor(coding: str, brotli_quality: int, gzip_level: int) -> Callable[[bytes], bytes]:
    """The function that compresses a whole body in `coding`."""
    if coding == "br":
        return lambda body: bytes(brotli.compress(body, quality=brotli_quality))

    def gzip_body(body: bytes) -> bytes:
        # zlib with a gzip header (wbits 31): gzip.compress's framing, without its mtime
        packer = zlib.compressobj(gzip_level, zlib.DEFLATED, 31)
        return packer.compress(body) + packer.flush()

    return gzip_body


def _header(headers: Headers, name: str) -> str | None:
    lowered = name.lower()
    for key, value in headers:
        if key.lower() == lowered:
            return value
    return None


def _replace(headers: Headers, name: str, value: str) -> None:
    lowered = name.lower()
    headers[:] = [(key, old) for key, old in headers if key.lower() != lowered]
    headers.append((name, value))


def _add_vary(headers: Headers) -> None:
    """Add Accept-Encoding to the answer's Vary, keeping every name its Vary headers (one
    or several: other steps append theirs) already list."""
    names = [
        name.strip()
        for key, value in headers
        if key.lower() == "vary"
        for name in value.split(",")
        if name.strip()
    ]
    if "*" in names or "accept-encoding" in {name.lower() for name in names}:
        return
    _replace(headers, "Vary", ", ".join([*names, "Accept-Encoding"]))


# the environ key where the step leaves the coding suffix a conditional request carried
_SUFFIX_KEY = "cardroom.etag_coding"


class CompressionStep:
    """Answers of at least `min_bytes` compressed in br or gzip, as the client accepts."""

    def __init__(self, min_bytes: int, brotli_quality: int, gzip_level: int) -> None:
        """Compress at brotli's `brotli_quality` and zlib's `gzip_level`."""
        self.min_bytes = min_bytes
        self.compressors = {
            coding: compressor(coding, brotli_quality, gzip_level) for coding in CODINGS
        }

    def before(self, exchange: Exchange) -> None:
        """Take the coding suffixes off the tags of If-Match and If-None-Match."""
        environ = exchange.environ
        for key in ("HTTP_IF_MATCH", "HTTP_IF_NONE_MATCH"):
            header = environ.get(key)
            if header is not None:
                plain, suffix = plain_tags(header)
                environ[key] = plain
                if suffix is not None and key == "HTTP_IF_NONE_MATCH":
                    environ[_SUFFIX_KEY] = suffix

    def after(self, exchange: Exchange, status: int, headers: Headers) -> None:
        """Register the compression of an answer worth it; mark what varies with it."""
        if status == 304:
            self._not_modified(exchange, headers)
            return
        if exchange.method == "HEAD" or status < 200 or status == 204:
            return
        media = (_header(headers, "Content-Type") or "").partition(";")[0].strip().lower()
        length = _header(headers, "Content-Length")
        if media not in _COMPRESSIBLE_TYPES or length is None or not length.isdigit():
            return  # an event stream, a stream of any kind, or an image
        if int(length) < self.min_bytes or _header(headers, "Content-Encoding") is not None:
            return
        _add_vary(headers)
        coding = choose_coding(exchange.header("Accept-Encoding"))
        if coding == IDENTITY:
            return
        compress = self.compressors[coding]

        def encode(body: bytes) -> bytes:
            packed = compress(body)
            if len(packed) >= len(body):
                return body
            headers.append(("Content-Encoding", coding))
            tag = _header(headers, "ETag")
            if tag is not None:
                _replace(headers, "ETag", suffixed_tag(tag, coding))
            return packed

        exchange.filters.append(encode)

    @staticmethod
    def _not_modified(exchange: Exchange, headers: Headers) -> None:
        """A 304's tag in the coding of the representation the client holds."""
        suffix = exchange.environ.get(_SUFFIX_KEY)
        tag = _header(headers, "ETag")
        if suffix is None or tag is None:
            return
        if choose_coding(exchange.header("Accept-Encoding")) == suffix:
            _replace(headers, "ETag", suffixed_tag(tag, suffix))
            _add_vary(headers)
