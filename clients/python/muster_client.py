"""A small client of musterd's HTTP API, driven by its OpenAPI document.

It knows no path of the API: it reads the document musterd serves (GET
/api/v2/openapi.json, no token needed; or a document given as a dict) and
calls operations by their operationId. Python's standard library only.

    from muster_client import Client

    c = Client("https://localhost:8090", token=admin_token,
               cafile="/var/lib/muster/tls/ca.pem")
    status, ie = c.call("infra_env_create", body={"name": "lab"})
    status, hosts = c.call("hosts_list", infra_env_id=ie["id"], unbound="true")
    status, host = c.call("host_bind", infra_env_id=ie["id"],
                          host_id=hosts[0]["id"], body={"cluster_id": cid})
    agent = c.with_token(ie["agent_token"])   # the same document, another token

call(operation_id, body=..., **parameters):

- builds the URL from the operation's path template and its declared path,
  query and header parameters (the path item's and the operation's); an
  undeclared parameter, a missing required one, a body for an operation
  without a requestBody or no body for one that requires it raise
  UsageError before anything is sent;
- authenticates as the operation's `security` (else the document's) says:
  a bearer scheme sends `Authorization: Bearer TOKEN`; an apiKey scheme in
  the query (`?token=`) is used only where the operation lists it and lists
  no bearer scheme beside it; `security: []` sends no token;
- sends a dict or list body as JSON, bytes as the first non-JSON media type
  the requestBody lists (or content_type=...);
- returns (status, data): data is the parsed JSON of a JSON answer, the
  bytes of another, None when there is no body. The answer's headers are in
  client.last_headers (X-Next-After for the next page of a list).
- raises UnexpectedStatus when the status is not one the operation lists
  (its exact code, an NXX range or `default`). Listed error statuses (404,
  409, ...) are returned, not raised: their data is {"code", "reason"}.

Redirects are not followed: a status is the operation's own answer.
"""

import json
import re
import ssl
import urllib.error
import urllib.parse
import urllib.request

__all__ = ["Client", "UsageError", "UnexpectedStatus", "DOCUMENT_PATH"]

# Where musterd serves its document: the one path a client has to know.
DOCUMENT_PATH = "/api/v2/openapi.json"

_PLACEHOLDER = re.compile(r"\{([^{}]+)\}")
_METHODS = ("get", "put", "post", "delete", "options", "head", "patch", "trace")


class UsageError(ValueError):
    """A call the document does not allow (refused before it is sent)."""


class UnexpectedStatus(RuntimeError):
    """An answer whose status the operation does not list."""

    def __init__(self, operation_id, status, data):
        self.operation_id = operation_id
        self.status = status
        self.data = data
        super().__init__("%s: status %d is not one the operation lists (%r)" % (operation_id, status, data))


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, req, fp, code, msg, headers, newurl):
        return None


class _Operation:
    """One operation of the document, its references resolved."""

    def __init__(self, doc, path, method, path_item, op):
        self.id = op.get("operationId")
        self.path = path
        self.method = method.upper()
        params = {}
        for p in path_item.get("parameters", []) + op.get("parameters", []):
            p = _resolve(doc, p)
            params[p["name"], p["in"]] = p  # the operation's replace the path item's
        self.params = {}
        self.problem = None  # what makes the operation uncallable, said when it is called
        for (name, where), p in params.items():
            if where == "cookie":
                continue
            if name in self.params:
                self.problem = "parameter %s is declared in both %s and %s" % (name, self.params[name]["in"], where)
            self.params[name] = p
        for name in _PLACEHOLDER.findall(path):
            if self.params.get(name, {}).get("in") != "path":
                self.problem = "{%s} of %s is no declared path parameter" % (name, path)
        self.request_body = _resolve(doc, op["requestBody"]) if "requestBody" in op else None
        responses = op.get("responses", {})
        self.responses = set(responses)
        media = []
        for r in responses.values():
            for m in _resolve(doc, r).get("content", {}):
                if m not in media:
                    media.append(m)
        self.accept = ", ".join(media) or "*/*"
        self.security = op["security"] if "security" in op else doc.get("security", [])


def _resolve(doc, obj):
    """obj, or what its local $ref ("#/components/...") points at."""
    seen = 0
    while isinstance(obj, dict) and "$ref" in obj:
        ref = obj["$ref"]
        if not ref.startswith("#/"):
            raise UsageError("only local references are followed: %s" % ref)
        obj = doc
        for part in ref[2:].split("/"):
            obj = obj[part.replace("~1", "/").replace("~0", "~")]
        seen += 1
        if seen > 32:
            raise UsageError("a $ref loop at %s" % ref)
    return obj


def _text(value):
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


class Client:
    """A client of one musterd, built from its OpenAPI document.

    base_url: the server's root ("https://localhost:8090"; the document's
    paths start with /api/v2). token: a person's, an infra-env's agent or a
    host's token (None: only public operations). cafile: the CA to trust
    (musterd's <state_dir>/tls/ca.pem) instead of the system's. document:
    the OpenAPI document as a dict; None fetches it from the server.
    on_answer: called with (method, path_and_query, status, content_type,
    body_bytes) after each answer (a log, a trace), before its status is
    checked.
    """

    def __init__(self, base_url, token=None, cafile=None, document=None, timeout=30, on_answer=None):
        self.base_url = base_url.rstrip("/")
        self.token = token
        self.cafile = cafile
        self.timeout = timeout
        self.on_answer = on_answer
        self.last_headers = {}
        ctx = ssl.create_default_context(cafile=cafile) if self.base_url.startswith("https:") else None
        self._opener = urllib.request.build_opener(_NoRedirect(), urllib.request.HTTPSHandler(context=ctx))
        if document is None:
            document = self._fetch_document()
        self.document = document
        self.operations = {}
        for path, item in document.get("paths", {}).items():
            item = _resolve(document, item)
            for method in _METHODS:
                if method in item:
                    op = _Operation(document, path, method, item, item[method])
                    if op.id:
                        self.operations[op.id] = op

    def _fetch_document(self):
        req = urllib.request.Request(self.base_url + DOCUMENT_PATH, headers={"Accept": "application/json"})
        with self._opener.open(req, timeout=self.timeout) as r:
            return json.load(r)

    def with_token(self, token):
        """Another client of the same server and document, with token."""
        return Client(self.base_url, token=token, cafile=self.cafile, document=self.document, timeout=self.timeout,
                      on_answer=self.on_answer)

    def _scheme(self, op):
        """How op is to carry the token: ("bearer", None), ("query", NAME),
        ("header", NAME) or None (no token sent)."""
        if not op.security:
            return None
        anonymous = any(len(req) == 0 for req in op.security)
        if self.token is None:
            if anonymous:
                return None
            raise UsageError("%s needs a token (%s)" % (op.id, ", ".join(n for r in op.security for n in r)))
        schemes = self.document.get("components", {}).get("securitySchemes", {})
        usable = []
        for req in op.security:
            if len(req) != 1:
                continue  # one token cannot satisfy several schemes at once
            s = _resolve(self.document, schemes[next(iter(req))])
            if s.get("type") == "http" and s.get("scheme", "").lower() == "bearer":
                usable.append((0, ("bearer", None)))
            elif s.get("type") == "apiKey" and s.get("in") == "header":
                usable.append((1, ("header", s["name"])))
            elif s.get("type") == "apiKey" and s.get("in") == "query":
                usable.append((2, ("query", s["name"])))
        if not usable:
            if anonymous:
                return None
            raise UsageError("%s: no security scheme a token can satisfy" % op.id)
        return min(usable, key=lambda u: u[0])[1]

    def call(self, operation_id, body=None, content_type=None, **params):
        """Call an operation by its operationId: (status, data)."""
        op = self.operations.get(operation_id)
        if op is None:
            raise UsageError("no operation %r in the document" % operation_id)
        if op.problem:
            raise UsageError("%s cannot be called: %s" % (operation_id, op.problem))
        for name in params:
            if name not in op.params:
                raise UsageError("%s takes no parameter %r (it takes: %s)"
                                 % (operation_id, name, ", ".join(sorted(op.params)) or "none"))
        path_values, query, headers = {}, [], {"Accept": op.accept}
        for name, p in op.params.items():
            if name not in params or params[name] is None:
                if p.get("required"):
                    raise UsageError("%s: parameter %r is required" % (operation_id, name))
                continue
            value = params[name]
            if p["in"] == "path":
                path_values[name] = urllib.parse.quote(_text(value), safe="")
            elif p["in"] == "query":
                query.append((name, _text(value)))
            elif p["in"] == "header":
                headers[name] = _text(value)
        url_path = _PLACEHOLDER.sub(lambda m: path_values[m.group(1)], op.path)

        data = None
        if body is not None:
            if op.request_body is None:
                raise UsageError("%s takes no request body" % operation_id)
            media = list(op.request_body.get("content", {}))
            if isinstance(body, (bytes, bytearray)):
                ctype = content_type or next((m for m in media if "json" not in m), None)
                data = bytes(body)
            else:
                ctype = content_type or next((m for m in media if m == "application/json"), None)
                data = json.dumps(body).encode()
            if ctype not in media:
                raise UsageError("%s takes a body of %s, not %s" % (operation_id, ", ".join(media), ctype))
            headers["Content-Type"] = ctype
        elif op.request_body is not None and op.request_body.get("required"):
            raise UsageError("%s requires a request body" % operation_id)

        scheme = self._scheme(op)
        if scheme and scheme[0] == "bearer":
            headers["Authorization"] = "Bearer " + self.token
        elif scheme and scheme[0] == "header":
            headers[scheme[1]] = self.token
        elif scheme and scheme[0] == "query":
            query.append((scheme[1], self.token))
        url = self.base_url + url_path + ("?" + urllib.parse.urlencode(query) if query else "")

        req = urllib.request.Request(url, data=data, method=op.method, headers=headers)
        try:
            r = self._opener.open(req, timeout=self.timeout)
        except urllib.error.HTTPError as e:
            r = e
        with r:
            status, raw = r.status, r.read()
            self.last_headers = dict(r.headers.items())
            ctype = r.headers.get("Content-Type", "")
        if self.on_answer:
            self.on_answer(op.method, url[len(self.base_url):], status, ctype, raw)
        if not raw:
            result = None
        elif "json" in ctype.split(";")[0]:
            result = json.loads(raw)
        else:
            result = raw
        code = str(status)
        if code not in op.responses and code[0] + "XX" not in op.responses and "default" not in op.responses:
            raise UnexpectedStatus(operation_id, status, result)
        return status, result
