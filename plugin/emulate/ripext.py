"""REST in Pawn (rip.ext 1.3) over real HTTP and real JSON.

`HTTPRequest` sends its request to the URL the plugin built (a real `synelo serve` on
loopback in the scenarios) when the plugin calls `Post` or `Get`, and the callback runs once
the plugin call under way returns. What rip.ext does, from its source (ErikMinekus/sm-ripext:
`json_natives.cpp`, `http_natives.cpp`, `httprequestcontext.cpp`):

- a connection failure still calls back, with status 0 and curl's error text;
- `response.Data` parses the body on first use and throws on a body that is not JSON; the
  extension frees it after the callback, so the plugin must not delete it;
- `JSONObject.Get`, `GetInt`, `GetBool`, `GetFloat` and `IsNull` throw on a missing key;
  `GetString` returns false; `FromString` throws on text that is not JSON;
- every handle `Get` returns must be deleted by the plugin.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from plugin.emulate.registry import NativeTable

if TYPE_CHECKING:
    from plugin.emulate.natives import Context

NATIVES = NativeTable()
sp = NATIVES.native


@dataclass
class Json:
    value: Any


@dataclass
class Request:
    url: str
    headers: dict[str, str] = field(default_factory=dict)
    timeout: float = 10.0


@dataclass
class Response:
    status: int
    body: bytes
    headers: dict[str, str]
    data_handle: int = 0


@dataclass
class Exchange:
    """One request the plugin sent, as the scenario output shows it."""

    t: float
    method: str
    url: str
    body: Any
    status: int
    answer: Any
    error: str = ""


class Http:
    """The server's network: real HTTP, unless the scenario has taken the service away."""

    def __init__(self) -> None:
        self.down = False  # an outage: every request fails to connect
        self.exchanges: list[Exchange] = []

    def send(
        self, method: str, request: Request, body: bytes | None, now: float
    ) -> tuple[Response, str]:
        if self.down:
            error = "Failed to connect to the service: Connection refused"
            self.exchanges.append(Exchange(now, method, request.url, _loads(body), 0, None, error))
            return Response(0, b"", {}), error
        req = urllib.request.Request(request.url, data=body, method=method)
        for name, value in request.headers.items():
            req.add_header(name, value)
        if body is not None:
            req.add_header("Content-Type", "application/json")
        try:
            with urllib.request.urlopen(req, timeout=request.timeout) as answer:
                status, raw, headers = answer.status, answer.read(), dict(answer.headers)
        except urllib.error.HTTPError as exc:
            status, raw, headers = exc.code, exc.read(), dict(exc.headers)
        except (urllib.error.URLError, OSError) as exc:
            error = f"Failed to connect: {exc}"
            self.exchanges.append(Exchange(now, method, request.url, _loads(body), 0, None, error))
            return Response(0, b"", {}), error
        self.exchanges.append(Exchange(now, method, request.url, _loads(body), status, _loads(raw)))
        return Response(status, raw, headers), ""


def _loads(raw: bytes | None) -> Any:
    if not raw:
        return None
    try:
        return json.loads(raw)
    except ValueError:
        return raw.decode("utf-8", "replace")


def _json(c: Context, handle: int) -> Any:
    from plugin.emulate.engine import PluginError

    obj = c.server.handles.objects.get(handle)
    if not isinstance(obj, Json):
        raise PluginError(f"Invalid JSON handle {handle:x} (error 4)")
    return obj.value


def _new(c: Context, value: Any) -> int:
    return c.server.handles.new(Json(value))


def _key(c: Context, this: int, key: int) -> Any:
    from plugin.emulate.engine import PluginError

    obj = _json(c, this)
    name = c.s(key)
    if not isinstance(obj, dict) or name not in obj:
        raise PluginError(f"Could not retrieve value for key '{name}'")
    return obj[name]


def _index(c: Context, this: int, index: int) -> Any:
    from plugin.emulate.engine import PluginError

    obj = _json(c, this)
    if not isinstance(obj, list) or not 0 <= index < len(obj):
        raise PluginError(f"Could not retrieve value at index {index}")
    return obj[index]


@sp("JSONObject.FromString")
def _from_string(c: Context, text: int, flags: int = 0) -> int:
    from plugin.emulate.engine import PluginError

    try:
        value = json.loads(c.mem.bytes_at(text))
    except ValueError as exc:
        raise PluginError(f"Invalid JSON: {exc}") from exc
    return _new(c, value)


@sp("JSONObject.Get")
def _obj_get(c: Context, this: int, key: int) -> int:
    return _new(c, _key(c, this, key))


@sp("JSONObject.GetInt")
def _obj_int(c: Context, this: int, key: int) -> int:
    value = _key(c, this, key)
    return int(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else 0


@sp("JSONObject.GetFloat")
def _obj_float(c: Context, this: int, key: int) -> float:
    value = _key(c, this, key)
    return float(value) if isinstance(value, (int, float)) else 0.0


@sp("JSONObject.GetBool")
def _obj_bool(c: Context, this: int, key: int) -> bool:
    return _key(c, this, key) is True


@sp("JSONObject.IsNull")
def _obj_null(c: Context, this: int, key: int) -> bool:
    return _key(c, this, key) is None


@sp("JSONObject.HasKey")
def _obj_has(c: Context, this: int, key: int) -> bool:
    obj = _json(c, this)
    return isinstance(obj, dict) and c.s(key) in obj


@sp("JSONObject.GetString")
def _obj_string(c: Context, this: int, key: int, buf: int, maxlength: int) -> bool:
    obj = _json(c, this)
    value = obj.get(c.s(key)) if isinstance(obj, dict) else None
    if not isinstance(value, str):
        return False
    c.write(buf, maxlength, value)
    return True


@sp("JSONArray.Get")
def _arr_get(c: Context, this: int, index: int) -> int:
    return _new(c, _index(c, this, index))


@sp("JSONArray.GetString")
def _arr_string(c: Context, this: int, index: int, buf: int, maxlength: int) -> bool:
    value = _index(c, this, index)
    if not isinstance(value, str):
        return False
    c.write(buf, maxlength, value)
    return True


@sp("JSONArray.GetInt")
def _arr_int(c: Context, this: int, index: int) -> int:
    value = _index(c, this, index)
    return int(value) if isinstance(value, (int, float)) else 0


@sp("JSONArray.Length.get")
def _arr_len(c: Context, this: int) -> int:
    value = _json(c, this)
    return len(value) if isinstance(value, list) else 0


@sp("HTTPRequest.HTTPRequest")
def _request(c: Context, url: int) -> int:
    return c.server.handles.new(Request(c.s(url)))


@sp("HTTPRequest.SetHeader")
def _set_header(c: Context, this: int, name: int, fmt: int, *args: int) -> None:
    request = c.handle(this, Request)
    request.headers[c.s(name)] = c.fmt(fmt, list(args))


@sp("HTTPRequest.ConnectTimeout.set")
def _connect_timeout(c: Context, this: int, seconds: int) -> None:
    c.handle(this, Request).timeout = float(seconds)


@sp("HTTPRequest.ConnectTimeout.get")
def _connect_timeout_get(c: Context, this: int) -> int:
    return int(c.handle(this, Request).timeout)


@sp("HTTPRequest.Timeout.get")
def _timeout_get(c: Context, this: int) -> int:
    return int(c.handle(this, Request).timeout)


@sp("HTTPRequest.Timeout.set")
def _timeout(c: Context, this: int, seconds: int) -> None:
    c.handle(this, Request).timeout = float(seconds)


def _send(
    c: Context, this: int, method: str, body: bytes | None, callback: int, value: int
) -> None:
    request = c.handle(this, Request)
    c.server.handles.close(this)  # rip.ext takes the request over once it is sent
    server = c.server
    http: Http = server.http
    response, error = http.send(method, request, body, server.now)

    def deliver() -> None:
        if server.plugin is None:
            return  # unloaded first: rip.ext runs no callback
        handle = server.handles.new(response)
        try:
            server.call_id(callback, handle, value, error)
        finally:
            server.handles.close(response.data_handle)
            server.handles.close(handle)

    server.later(deliver)


@sp("HTTPRequest.Post")
def _post(c: Context, this: int, data: int, callback: int, value: int = 0) -> None:
    body = json.dumps(_json(c, data), separators=(",", ":")).encode()
    _send(c, this, "POST", body, callback, value)


@sp("HTTPRequest.Get")
def _get(c: Context, this: int, callback: int, value: int = 0) -> None:
    _send(c, this, "GET", None, callback, value)


@sp("HTTPResponse.Status.get")
def _status(c: Context, this: int) -> int:
    return c.handle(this, Response).status


@sp("HTTPResponse.Data.get")
def _data(c: Context, this: int) -> int:
    from plugin.emulate.engine import PluginError

    response = c.handle(this, Response)
    if not response.data_handle:
        try:
            value = json.loads(response.body)
        except ValueError as exc:
            raise PluginError(f"Invalid JSON in the response: {exc}") from exc
        response.data_handle = _new(c, value)
    return response.data_handle


@sp("HTTPResponse.GetHeader")
def _get_header(c: Context, this: int, name: int, buf: int, maxlength: int) -> bool:
    headers = {k.lower(): v for k, v in c.handle(this, Response).headers.items()}
    value = headers.get(c.s(name).lower())
    if value is None:
        return False
    c.write(buf, maxlength, value)
    return True
