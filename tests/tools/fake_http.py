#!/usr/bin/env python3
"""A local HTTP server standing in for what twinbench's delivery talks to
(tests/integration/delivery_test.cpp, docs/alerts.md):

  /hook/<name>          a chat webhook (Slack, Mattermost, Teams): a JSON object with "text"
  /github/...           GitHub's REST API: check runs, issues, issue comments
  /gitlab/api/v4/...    GitLab's REST API v4: commit statuses, merge request notes

Every request to a forge is checked against the operation's contract as the
forge publishes it (tests/data/delivery/github_contract.json, from
github/rest-api-description; gitlab_contract.json, from GitLab's API docs):
the path, the query parameters, the body's required fields, types, value sets
and lengths. A request that breaks it gets 422 and is recorded in
"violations"; the tests require none. Forge state (issues, comments, check
runs, statuses, notes) lives in memory like the real thing, and is written to
--state-file after every request.

Faults on demand (POST /_control/faults, a JSON object; each applies to the
requests whose path starts with "path", default every one):
  {"fail": [500, 500]}          answer the next requests with these statuses
  {"delay_s": 3, "count": 1}    answer the next request(s) this late
  {"rate_limit": [{"status": 403, "retry_after": 1}, {"status": 429, "reset_in": 2}]}
  {"kill_pid": PID}             SIGKILL process PID upon the next request, after recording it
POST /_control/seed {"github_comments": {"repo": "o/r", "number": 7, "count": 120}} adds
comments by others (so that the one twinbench looks for is on a later page).

Tokens: --token is the one with write access, --read-only-token reads only
(a fork's pull request): its writes get 403 "Resource not accessible by
integration"; any other gets 401.

  fake_http.py --port-file F --state-file F --contracts DIR [--token T] [--read-only-token R] [--port P]
"""
import argparse
import json
import os
import re
import signal
import socket
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qsl, urlsplit

LOCK = threading.Lock()
STATE = {"requests": [], "violations": [], "hooks": [], "check_runs": [], "statuses": [],
         "issues": {}, "comments": {}, "notes": {}}
FAULTS = []  # [{"kind": ..., "path": prefix, ...}], consumed in order
NEXT_ID = [1000]
ARGS = None
CONTRACTS = {}

DATE_TIME = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$")


def new_id():
    NEXT_ID[0] += 1
    return NEXT_ID[0]


def type_ok(kind, value):
    return {"string": lambda v: isinstance(v, str),
            "integer": lambda v: isinstance(v, int) and not isinstance(v, bool),
            "number": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
            "boolean": lambda v: isinstance(v, bool),
            "object": lambda v: isinstance(v, dict),
            "array": lambda v: isinstance(v, list)}[kind](value)


def validate(schema, value, where):
    """The errors of `value` against the contract's subset of OpenAPI 3.0 schemas."""
    errors = []
    if value is None:
        return [] if schema.get("nullable") else [f"{where}: null is not allowed"]
    if "oneOf" in schema and "type" not in schema and "properties" not in schema:
        matches = sum(1 for s in schema["oneOf"] if not validate(s, value, where))
        return [] if matches == 1 else [f"{where}: matches {matches} of oneOf, not exactly one"]
    if "type" in schema and not type_ok(schema["type"], value):
        return [f"{where}: expected {schema['type']}, got {type(value).__name__} {json.dumps(value)[:60]}"]
    if "enum" in schema and value not in schema["enum"]:
        errors.append(f"{where}: {json.dumps(value)} is not one of {schema['enum']}")
    if "maxLength" in schema and isinstance(value, str) and len(value) > schema["maxLength"]:
        errors.append(f"{where}: {len(value)} characters, more than {schema['maxLength']}")
    if "maxItems" in schema and isinstance(value, list) and len(value) > schema["maxItems"]:
        errors.append(f"{where}: {len(value)} items, more than {schema['maxItems']}")
    if schema.get("format") == "date-time" and isinstance(value, str) and not DATE_TIME.match(value):
        errors.append(f"{where}: {value!r} is not an ISO 8601 date-time")
    if isinstance(value, dict):
        for key in schema.get("required", []):
            if key not in value:
                errors.append(f"{where}: required field '{key}' is missing")
        props = schema.get("properties")
        if props is not None:
            for key, v in value.items():
                if key not in props:
                    errors.append(f"{where}: '{key}' is not a field of this operation")
                else:
                    errors += validate(props[key], v, f"{where}.{key}")
        if "oneOf" in schema:
            matches = 0
            for sub in schema["oneOf"]:
                ok = all(k in value for k in sub.get("required", [])) and all(
                    k not in value or not validate(s, value[k], where) for k, s in sub.get("properties", {}).items())
                matches += ok
            if matches != 1:
                errors.append(f"{where}: matches {matches} of the oneOf alternatives "
                              f"{[s.get('required', []) for s in schema['oneOf']]}, not exactly one")
    return errors


def route(forge, method, path):
    """(operation id, path parameters) of a forge request, or (None, None)."""
    for op, spec in CONTRACTS[forge]["operations"].items():
        if spec["method"] != method:
            continue
        pattern = "^" + re.sub(r"\\\{(\w+)\\\}", lambda m: f"(?P<{m.group(1)}>[^/]+)", re.escape(spec["path"])) + "$"
        m = re.match(pattern, path)
        if m:
            return op, m.groupdict()
    return None, None


def check_query(spec, query):
    errors = []
    allowed = spec.get("query", {})
    for key, value in query:
        if key not in allowed:
            errors.append(f"query: '{key}' is not a parameter of this operation")
            continue
        s = allowed[key]
        if s.get("type") == "integer":
            if not re.fullmatch(r"\d+", value):
                errors.append(f"query.{key}: {value!r} is not an integer")
                continue
            v = int(value)
            if v < s.get("minimum", v) or v > s.get("maximum", v):
                errors.append(f"query.{key}: {v} outside [{s.get('minimum')}, {s.get('maximum')}]")
        elif "enum" in s and value not in s["enum"]:
            errors.append(f"query.{key}: {value!r} is not one of {s['enum']}")
    return errors


def save_state():
    tmp = ARGS.state_file + ".tmp"
    with open(tmp, "w") as f:
        json.dump(STATE, f, indent=1)
    os.replace(tmp, ARGS.state_file)


def take_fault(path, kinds):
    for i, f in enumerate(FAULTS):
        if f["kind"] in kinds and path.startswith(f.get("path", "")):
            return FAULTS.pop(i)
    return None


def page(items, query, base_url):
    q = dict(query)
    per_page = int(q.get("per_page", 30))
    number = int(q.get("page", 1))
    chunk = items[(number - 1) * per_page: number * per_page]
    link = None
    if number * per_page < len(items):
        q["page"] = str(number + 1)
        link = f'<{base_url}?{"&".join(f"{k}={v}" for k, v in q.items())}>; rel="next"'
    return chunk, link


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def reply(self, status, body=None, headers=None):
        data = json.dumps(body).encode() if body is not None else b""
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(data)

    def body_json(self):
        n = int(self.headers.get("Content-Length", 0))
        raw = self.rfile.read(n) if n else b""
        if not raw:
            return None, raw
        try:
            return json.loads(raw), raw
        except ValueError:
            return ValueError, raw

    def handle_any(self, method):
        parts = urlsplit(self.path)
        path, query = parts.path, parse_qsl(parts.query, keep_blank_values=True)
        body, raw = self.body_json()
        if path.startswith("/_control/"):
            return self.control(path, body)
        with LOCK:
            STATE["requests"].append({"method": method, "path": path, "query": query,
                                      "authorization": self.headers.get("Authorization", ""),
                                      "private_token": self.headers.get("PRIVATE-TOKEN", ""),
                                      "body": body if body is not ValueError else raw.decode(errors="replace")})
            delay = take_fault(path, ("delay",))
            kill = take_fault(path, ("kill",))
            fail = take_fault(path, ("fail",))
            limit = take_fault(path, ("rate_limit",))
            save_state()
        if kill:
            os.kill(kill["pid"], signal.SIGKILL)
        if delay:
            time.sleep(delay["delay_s"])
        if limit:
            headers = {}
            if "retry_after" in limit:
                headers["Retry-After"] = str(limit["retry_after"])
            if "reset_in" in limit:
                headers["X-RateLimit-Remaining"] = "0"
                headers["X-RateLimit-Reset"] = str(int(time.time() + limit["reset_in"]) + 1)
            return self.reply(limit["status"], {"message": "API rate limit exceeded"}, headers)
        if fail:
            return self.reply(fail["status"], {"message": f"injected {fail['status']}"})
        if path.startswith("/hook/"):
            return self.hook(path, body)
        for forge, prefix in (("github", "/github"), ("gitlab", "/gitlab/api/v4")):
            if path.startswith(prefix + "/"):
                return self.forge(forge, method, path[len(prefix):], query, body,
                                  f"http://{self.headers['Host']}{prefix}")
        self.reply(404, {"message": "Not Found"})

    def violation(self, what):
        with LOCK:
            STATE["violations"].append(what)
            save_state()
        self.reply(422, {"message": "Validation Failed", "errors": [what]})

    def hook(self, path, body):
        if body is ValueError or not isinstance(body, dict) or not isinstance(body.get("text"), str) or not body["text"]:
            return self.violation(f"{path}: a webhook needs a JSON object with a non-empty 'text'")
        with LOCK:
            STATE["hooks"].append({"path": path, "body": body})
            save_state()
        self.reply(200, {"ok": True})

    def forge(self, forge, method, path, query, body, base):
        op, params = route(forge, method, path)
        if op is None:
            return self.reply(404, {"message": f"Not Found: {method} {path}"})
        # Authentication, as each forge does it.
        token = (self.headers.get("Authorization", "").removeprefix("Bearer ").removeprefix("token ")
                 if forge == "github" else self.headers.get("PRIVATE-TOKEN", ""))
        if token not in (ARGS.token, ARGS.read_only_token) or not token:
            return self.reply(401, {"message": "Bad credentials" if forge == "github" else "401 Unauthorized"})
        if method != "GET" and token == ARGS.read_only_token:
            return self.reply(403, {"message": "Resource not accessible by integration" if forge == "github"
                                    else "403 Forbidden"})
        spec = CONTRACTS[forge]["operations"][op]
        errors = check_query(spec, query)
        if body is ValueError:
            errors.append("body: not JSON")
        elif "body" in spec:
            if body is None:
                errors.append("body: missing")
            else:
                errors += validate(spec["body"], body, "body")
        for name in ("issue_number", "comment_id", "merge_request_iid", "note_id"):
            if name in params and not re.fullmatch(r"\d+", params[name]):
                errors.append(f"path: {name} {params[name]!r} is not an integer")
        if "sha" in params and not re.fullmatch(r"[0-9a-f]{40}", params["sha"]):
            errors.append(f"path: sha {params['sha']!r} is not a full commit SHA")
        if errors:
            return self.violation(f"{forge} {op}: " + "; ".join(errors))
        with LOCK:
            status, answer, link = self.apply(op, params, query, body, f"{base}{path}")
            save_state()
        self.reply(status, answer, {"Link": link} if link else None)

    def apply(self, op, p, query, body, url):
        host = f"http://{self.headers['Host']}"
        if op == "checks/create":
            run = dict(body, id=new_id(), html_url=f"{host}/runs/{NEXT_ID[0]}")
            STATE["check_runs"].append(run)
            return 201, run, None
        repo = f"{p.get('owner')}/{p.get('repo')}"
        issues = STATE["issues"].setdefault(repo, [])
        if op == "issues/list-for-repo":
            chunk, link = page([i for i in issues if i["state"] == dict(query).get("state", "open")], query, url)
            return 200, chunk, link
        if op == "issues/create":
            issue = {"number": len(issues) + 1, "title": body["title"], "body": body.get("body", ""),
                     "state": "open", "html_url": f"{host}/{repo}/issues/{len(issues) + 1}", "updates": 0}
            issues.append(issue)
            return 201, issue, None
        if op == "issues/update":
            for issue in issues:
                if issue["number"] == int(p["issue_number"]):
                    issue.update({k: v for k, v in body.items() if k in ("title", "body", "state")})
                    issue["updates"] += 1
                    return 200, issue, None
            return 404, {"message": "Not Found"}, None
        if op.startswith("issues/") and "comment" in op:
            if op == "issues/update-comment":
                for comments in STATE["comments"].values():
                    for c in comments:
                        if c["id"] == int(p["comment_id"]):
                            c["body"] = body["body"]
                            c["edits"] += 1
                            return 200, c, None
                return 404, {"message": "Not Found"}, None
            comments = STATE["comments"].setdefault(f"{repo}#{p['issue_number']}", [])
            if op == "issues/list-comments":
                chunk, link = page(comments, query, url)
                return 200, chunk, link
            comment = {"id": new_id(), "body": body["body"], "user": "twinbench", "edits": 0}
            comments.append(comment)
            return 201, comment, None
        if op == "commits/post-status":
            status = dict(body, sha=p["sha"], project=p["id"], id=new_id())
            STATE["statuses"].append(status)
            return 201, status, None
        notes = STATE["notes"].setdefault(f"{p['id']}!{p['merge_request_iid']}", [])
        if op == "notes/list-merge-request-notes":
            chunk, link = page(notes, query, url)
            return 200, chunk, link
        if op == "notes/create-merge-request-note":
            note = {"id": new_id(), "body": body["body"], "edits": 0}
            notes.append(note)
            return 201, note, None
        for n in notes:
            if n["id"] == int(p["note_id"]):
                n["body"] = body["body"]
                n["edits"] += 1
                return 200, n, None
        return 404, {"message": "404 Not found"}, None

    def control(self, path, body):
        body = body if isinstance(body, dict) else {}
        with LOCK:
            where = body.get("path", "")
            if path == "/_control/faults":
                for status in body.get("fail", []):
                    FAULTS.append({"kind": "fail", "status": status, "path": where})
                for _ in range(body.get("count", 1) if "delay_s" in body else 0):
                    FAULTS.append({"kind": "delay", "delay_s": body["delay_s"], "path": where})
                for limit in body.get("rate_limit", []):
                    FAULTS.append(dict(limit, kind="rate_limit", path=where))
                if "kill_pid" in body:
                    FAULTS.append({"kind": "kill", "pid": body["kill_pid"], "path": where})
            elif path == "/_control/seed":
                seed = body.get("github_comments")
                if seed:
                    comments = STATE["comments"].setdefault(f"{seed['repo']}#{seed['number']}", [])
                    for i in range(seed["count"]):
                        comments.append({"id": new_id(), "body": f"a reviewer's comment {i}", "user": "someone",
                                         "edits": 0})
            save_state()
        self.reply(200, {"ok": True})

    def do_GET(self):
        self.handle_any("GET")

    def do_POST(self):
        self.handle_any("POST")

    def do_PATCH(self):
        self.handle_any("PATCH")

    def do_PUT(self):
        self.handle_any("PUT")


def main():
    global ARGS
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--port-file", required=True)
    parser.add_argument("--state-file", required=True)
    parser.add_argument("--token", default="good-token")
    parser.add_argument("--read-only-token", default="read-only-token")
    parser.add_argument("--contracts", required=True, help="the folder of github_contract.json and gitlab_contract.json")
    parser.add_argument("--port", type=int, default=0, help="the port (default: a free one)")
    ARGS = parser.parse_args()
    for forge in ("github", "gitlab"):
        with open(os.path.join(ARGS.contracts, f"{forge}_contract.json")) as f:
            CONTRACTS[forge] = json.load(f)
    ThreadingHTTPServer.allow_reuse_address = True
    server = ThreadingHTTPServer(("127.0.0.1", ARGS.port), Handler)
    server.daemon_threads = True
    save_state()
    tmp = ARGS.port_file + ".tmp"
    with open(tmp, "w") as f:
        f.write(str(server.server_address[1]))
    os.replace(tmp, ARGS.port_file)
    signal.signal(signal.SIGTERM, lambda *_: os._exit(0))
    server.serve_forever()


if __name__ == "__main__":
    main()
