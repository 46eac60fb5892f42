// The live site (see site.h): routing, the answers around pages, access.
#include "harness/cli/serve/site.h"

#include <fmt/format.h>
#include <httplib.h>
#include <malloc.h>

#include <atomic>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <iostream>
#include <mutex>
#include <stdexcept>
#include <thread>

#include "harness/base/strings.h"
#include "harness/cli/serve/access.h"
#include "harness/cli/serve/page_cache.h"
#include "harness/cli/serve/pages.h"
#include "harness/cli/serve/store_pool.h"
#include "harness/cli/serve/target.h"
#include "reports/alerts_report.h"
#include "reports/html.h"

namespace twinbench::serve {

namespace {

using Clock = std::chrono::steady_clock;

// Every answer carries these: no script may run, no frame may hold a page, no
// sniffing of a text answer into HTML.
void secure(httplib::Response& res) {
  if (res.has_header("Content-Security-Policy")) return;  // once: the error handler follows a refusal's own
  res.set_header("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; img-src data:; "
                                            "form-action 'self'; frame-ancestors 'none'; base-uri 'none'");
  res.set_header("X-Content-Type-Options", "nosniff");
  res.set_header("X-Frame-Options", "DENY");
  res.set_header("Referrer-Policy", "same-origin");
  res.set_header("Cache-Control", "no-store");
}

// One line: an error's answer (404, 400, ...), plain text.
void line(httplib::Response& res, int status, const std::string& text) {
  res.status = status;
  std::string one = text;
  for (char& c : one)
    if (c == '\n' || c == '\r') c = ' ';
  res.set_content(one + "\n", "text/plain; charset=utf-8");
}

std::string reason_of(int status) {
  switch (status) {
    case 400: return "bad request";
    case 404: return "not found";
    case 405: return "method not allowed";
    case 413: return "request body too large";
    case 414: return "request target too long";
    case 416: return "range not satisfiable";
    case 431: return "request headers too large";
    default: return status >= 500 ? "server error" : "refused";
  }
}

bool wants_json(const httplib::Request& req, const Target& t) {
  if (!t.path.empty() && ends_with(t.path.back(), ".json")) return true;
  const std::string accept = req.get_header_value("Accept");
  return accept.find("application/json") != std::string::npos && accept.find("text/html") == std::string::npos;
}

// "nightly.json" -> "nightly"
std::string stem(const std::string& segment) {
  return ends_with(segment, ".json") ? segment.substr(0, segment.size() - 5) : segment;
}

// A small page of the server's own (computing, unreachable, login), in the reports' shell.
std::string own_page(const std::string& title, const std::string& body_html, int refresh_s = 0) {
  html::Page page;
  page.title = "twinbench · " + title;
  page.nav_html = html::link("/", "index");
  page.body_html = body_html;
  std::string out = html::render_page(page);
  if (refresh_s > 0)  // reload by itself: no script needed
    out.insert(out.find("<meta charset=\"utf-8\">\n") + 23,
               fmt::format("<meta http-equiv=\"refresh\" content=\"{}\">\n", refresh_s));
  return out;
}

// The sanitized target for the access log (printable ASCII, at most 200 bytes).
// The client's address, as the front passed it on (front.h): httplib's own peer is the front.
std::string peer(const httplib::Request& req) { return req.get_header_value(kPeerHeader); }

std::string loggable(const std::string& target) {
  std::string out;
  for (const char c : target.substr(0, 200)) out += (c >= 0x20 && c < 0x7f) ? c : '?';
  return out;
}

class Site {
 public:
  explicit Site(const ServeOptions& o)
      : o_(o),
        stores_(o.db),
        cache_(stores_, o.workers, o.cache_bytes),
        access_(o.write_token, o.read_only_token, o.read_token, o.public_url),
        front_(o.limits) {
    context_.store_location = o.db;
    context_.repo = o.repo;
    // httplib behind the front (front.h), through its public setters: the
    // front passes each request on whole, over a connection of its own that
    // ends with the answer (the client's connection is the front's to keep).
    const size_t threads = o.limits.threads;
    server_.new_task_queue = [threads] { return new httplib::ThreadPool(threads); };
    server_.set_read_timeout(std::chrono::duration_cast<std::chrono::seconds>(o.limits.request_time).count());
    server_.set_write_timeout(std::chrono::duration_cast<std::chrono::seconds>(o.limits.write_time).count());
    server_.set_payload_max_length(o.limits.body_bytes);
    server_.set_pre_routing_handler([this](const httplib::Request& req, httplib::Response& res) {
      secure(res);
      return allowed(req, res) ? httplib::Server::HandlerResponse::Unhandled : httplib::Server::HandlerResponse::Handled;
    });
    server_.Get(".*", [this](const httplib::Request& req, httplib::Response& res) { get(req, res); });
    server_.Post(".*", [this](const httplib::Request& req, httplib::Response& res) { post(req, res); });
    server_.set_error_handler([](const httplib::Request&, httplib::Response& res) {
      secure(res);
      if (res.body.empty()) {  // httplib's own refusals: a malformed request, a body too large, a method
        const int status = res.status;
        line(res, status, fmt::format("{} {}", status, reason_of(status)));
      }
    });
    server_.set_exception_handler([](const httplib::Request&, httplib::Response& res, std::exception_ptr e) {
      std::string what = "unknown";
      try {
        std::rethrow_exception(e);
      } catch (const std::exception& x) {
        what = x.what();
      } catch (...) {
      }
      secure(res);
      line(res, 500, "internal error: " + what);
    });
    server_.set_logger([](const httplib::Request& req, const httplib::Response& res) {
      // Method, target, status and size: never a header or a body, so never a token.
      std::cerr << fmt::format("twinbench serve: {} {} {} {} {}\n", peer(req), req.method, loggable(req.target),
                               res.status, res.body.size());
    });
  }

  void run(const std::function<void(const std::string&)>& on_listening, const std::function<bool()>& stop) {
    const auto [host, port] = parse_listen(o_.listen);
    const int bound = front_.bind(host, port);
    if (bound < 0) throw std::runtime_error(fmt::format("serve: cannot listen on {} (in use, or not an address here)", o_.listen));
    const int behind = server_.bind_to_any_port("127.0.0.1");
    if (behind < 0) throw std::runtime_error("serve: cannot listen on a loopback port for the server behind the front");
    const std::string url = host.find(':') != std::string::npos ? fmt::format("http://[{}]:{}/", host, bound)
                                                                : fmt::format("http://{}:{}/", host, bound);
    std::thread server([&] { server_.listen_after_bind(); });
    std::atomic<bool> done{false};
    std::thread watcher([&] {
      while (!done && !stop()) std::this_thread::sleep_for(std::chrono::milliseconds(100));
      front_.stop();
    });
    on_listening(url);
    front_.run(behind);  // until stopped, and every connection ended
    done = true;
    watcher.join();
    server_.stop();
    server.join();
  }

 private:
  // Reads (and the login) need a token only with --read-token.
  bool allowed(const httplib::Request& req, httplib::Response& res) {
    if (access_.right_of(req) != Right::kNone) return true;
    const std::string path = req.path;
    if (path == "/login" || path == "/health" || path == "/health.json" || path == "/favicon.ico") return true;
    if (!req.get_header_value("Authorization").empty()) {
      line(res, 401, "the token is not this server's");
    } else {
      res.status = 401;
      res.set_content(own_page("sign in", login_form("This server needs a token to read.")), "text/html; charset=utf-8");
    }
    return false;
  }

  std::string login_form(const std::string& note) const {
    return "<p>" + html::escape(note) +
           "</p><form method=\"post\" action=\"/login\"><p><label>Token <input type=\"password\" name=\"token\" "
           "autocomplete=\"current-password\" required></label> <button type=\"submit\">Sign in</button></p></form>";
  }

  void get(const httplib::Request& req, httplib::Response& res) {
    Target t;
    try {
      t = parse_target(req.target);
      const bool json = wants_json(req, t);
      if (!route(req, t, json, res)) line(res, 404, fmt::format("not found: {}", loggable(req.path)));
    } catch (const BadRequest& e) {
      line(res, 400, fmt::format("bad request: {}", e.what()));
    }
  }

  // The pages; false for a path that is none of them.
  bool route(const httplib::Request& req, const Target& t, bool json, httplib::Response& res) {
    const auto& p = t.path;
    const std::string first = p.empty() ? "" : stem(p[0]);
    if (p.empty() || (p.size() == 1 && (p[0] == "index.html" || p[0] == "index.json")))
      return page(index_page(t.query), json, "", res);
    if (p.size() == 1) {
      if (p[0] == "favicon.ico") {
        res.status = 204;
        return true;
      }
      if (first == "health") return health(json, res);
      if (p[0] == "login") {
        res.set_content(own_page("sign in", login_form(access_.writes_enabled()
                                                           ? "Sign in with the server's token to act on alerts."
                                                           : "This server takes no writes: it was started without "
                                                             "TWINBENCH_SERVE_TOKEN.")),
                        "text/html; charset=utf-8");
        return true;
      }
      if (first == "nightly") return page(nightly_page(t.query), json, "", res);
      if (first == "series") return page(series_page(t.query), json, "", res);
      if (first == "branch") return page(branch_page(t.query, context_), json, "", res);
      if (first == "bisect") return page(bisect_page(t.query, context_), json, "", res);
      if (first == "runs") return page(runs_page(t.query), json, "", res);
      if (first == "alerts") return page(alerts_page(t.query), json, "", res);
    }
    if (p.size() == 2 && p[0] == "alerts") {
      const int64_t id = alert_id(stem(p[1]));
      const bool cookie_writer = access_.by_cookie(req) && access_.right_of(req) == Right::kWrite;
      return page(alert_page(id, t.query, cookie_writer, access_.writes_enabled(), cookie_writer ? access_.csrf_of(req) : ""),
                  json, "", res);
    }
    if (p.size() == 2 && p[0] == "run") return page(run_page(stem(p[1]), t.query), json, "", res);
    // A group's report is a folder: its pages link each other by file name.
    if ((p[0] == "pair" || p[0] == "nway" || p[0] == "session") && p.size() >= 2 && p.size() <= 3) {
      if (p.size() == 2 && !t.folder) {  // the folder's own URL ends with '/'
        const auto q = req.target.find('?');
        redirect(res, req.target.substr(0, q) + "/" + (q == std::string::npos ? "" : req.target.substr(q)));
        return true;
      }
      const std::string file = p.size() == 3 ? p[2] : "";
      if (file == "index.html") {  // a report's "index" link: the site's
        redirect(res, "/");
        return true;
      }
      const auto spec = p[0] == "pair" ? pair_page(p[1], t.query)
                        : p[0] == "nway" ? nway_page(p[1], t.query)
                                         : session_page(p[1], t.query);
      return page(spec, json, ends_with(file, ".json") ? "" : file, res);
    }
    return false;
  }

  void redirect(httplib::Response& res, const std::string& to) {
    res.status = 303;
    res.set_header("Location", to);
  }

  // A page from the cache: its HTML `file` ("" its first) or its JSON.
  bool page(const PageSpec& spec, bool json, const std::string& file, httplib::Response& res) {
    const auto a = cache_.get(spec.key, spec.compute, o_.wait);
    if (a.status == 200) {
      res.set_header("X-Twinbench-Computed-At", a.computed_at);
      if (json) {
        res.set_content(a.page->json, "application/json");
        return true;
      }
      const auto it = a.page->pages.find(file.empty() ? a.page->first : file);
      if (it == a.page->pages.end()) {
        line(res, 404, fmt::format("not found: this report has no page '{}'", loggable(file)));
        return true;
      }
      res.set_content(it->second, "text/html; charset=utf-8");
      return true;
    }
    if (a.status == 202 || a.status == 503) {
      res.status = a.status;
      res.set_header("Retry-After", a.status == 202 ? "2" : "5");
      if (json) {
        res.set_content(nlohmann_status(a), "application/json");
      } else if (a.status == 202) {
        res.set_content(own_page("computing", "<p class=\"callout\">" + html::escape(a.message) +
                                                  ". This page is still being computed; it reloads by itself.</p>",
                                 2),
                        "text/html; charset=utf-8");
      } else {
        res.set_content(own_page("store unreachable", "<p class=\"callout\">" + html::escape(a.message) +
                                                          ". The server keeps trying and serves this page again as "
                                                          "soon as the store is back; this page reloads by itself.</p>",
                                 5),
                        "text/html; charset=utf-8");
      }
      return true;
    }
    line(res, a.status, (a.status == 404 ? "not found: " : "") + a.message);
    return true;
  }

  // Every JSON answer through nlohmann: a store's path or error keeps its tabs and quotes, escaped.
  static std::string nlohmann_status(const PageCache::Answer& a) {
    const nlohmann::ordered_json j = {{"status", a.status == 202 ? "computing" : "unreachable"},
                                      {"message", a.message},
                                      {"seconds", std::round(a.computing_s * 10) / 10}};
    return json_text(j);
  }

  // Invalid UTF-8 (an error text from the system) is replaced, never a throw.
  static std::string json_text(const nlohmann::ordered_json& j) {
    return j.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace) + "\n";
  }

  bool health(bool json, httplib::Response& res) {
    std::string marker, error;
    try {
      marker = stores_.marker();
    } catch (const StoreUnavailable& e) {
      error = e.what();
    }
    res.status = error.empty() ? 200 : 503;
    if (json)
      res.set_content(json_text({{"store", stores_.label()},
                                 {"reachable", error.empty()},
                                 {"message", error},
                                 {"public_url", o_.public_url}}),
                      "application/json");
    else
      line(res, res.status, error.empty() ? "ok: " + stores_.label() : error);
    return true;
  }

  static int64_t alert_id(const std::string& text) {
    char* end = nullptr;
    errno = 0;
    const long long id = std::strtoll(text.c_str(), &end, 10);
    if (text.empty() || *end != '\0' || errno != 0 || id <= 0) throw BadRequest("an alert's id is a positive number");
    return id;
  }

  void post(const httplib::Request& req, httplib::Response& res) {
    if (req.path == "/login") return login(req, res);
    try {
      const Target t = parse_target(req.target);
      if (t.path.size() == 2 && t.path[0] == "alerts" && t.query.empty()) return act(req, t, res);
    } catch (const BadRequest& e) {
      return line(res, 400, fmt::format("bad request: {}", e.what()));
    }
    if (req.path == "/logout") {
      res.set_header("Set-Cookie", access_.cookie_header(""));
      redirect(res, "/");
      return;
    }
    line(res, 404, fmt::format("not found: {}", loggable(req.path)));
  }

  // Acknowledge an alert, or mark it expected or invalid, with a note: the
  // only writes. Behind the write token; a browser's form also carries the
  // session's CSRF token.
  void act(const httplib::Request& req, const Target& t, httplib::Response& res) {
    const bool json = wants_json(req, t);
    const int64_t id = alert_id(stem(t.path[1]));
    if (!access_.writes_enabled()) return line(res, 403, "this server takes no writes: it was started without TWINBENCH_SERVE_TOKEN");
    if (access_.right_of(req) != Right::kWrite)
      return line(res, 401, "acting on an alert needs the write token (Authorization: Bearer, or sign in at /login)");
    std::string state, note, csrf;
    if (req.get_header_value("Content-Type").rfind("application/json", 0) == 0) {
      const auto body = nlohmann::json::parse(req.body, nullptr, false);
      if (!body.is_object()) return line(res, 400, "bad request: the body is not a JSON object");
      state = body.value("state", "");
      note = body.value("note", "");
    } else {
      for (const auto& [name, value] : parse_form(req.body)) {
        if (name == "state") state = value;
        else if (name == "note") note = value;
        else if (name == "csrf") csrf = value;
        else return line(res, 400, fmt::format("bad request: unknown field '{}'", name.substr(0, 64)));
      }
    }
    if (access_.by_cookie(req) && !access_.csrf_ok(req, csrf))
      return line(res, 403, "the form's CSRF token is missing or not this session's (reload the alert's page)");
    store::AlertTransition change;
    change.actor = store::AlertActor::kPerson;
    // What a person may set is the lifecycle's (store::alert_moves); the server offers these three.
    if (state == "acknowledged" || state == "expected" || state == "invalid") {
      change.to = store::alert_state_from_string(state);
    } else {
      return line(res, 400, "bad request: 'state' is acknowledged, expected or invalid");
    }
    if (note.size() > 500) return line(res, 400, "bad request: the note is longer than 500 bytes");
    for (const char c : note)
      if (static_cast<unsigned char>(c) < 0x20) return line(res, 400, "bad request: a control character in the note");
    change.note = note;
    change.by = "twinbench serve (" + peer(req) + ")";
    std::optional<store::Alert> after;
    store::AlertMoveResult moved;
    try {
      stores_.with_store([&](store::Store& db) {
        if (!db.alert(id)) return;
        moved = db.change_alert_state(id, change);
        after = db.alert(id);
      });
    } catch (const StoreUnavailable& e) {
      return line(res, 503, e.what());
    } catch (const store::StoreError& e) {  // the store refused the write (read-only, ...): it says why
      return line(res, 503, e.what());
    }
    if (!after) return line(res, 404, fmt::format("not found: no alert #{} in the store", id));
    cache_.clear();  // every page that shows it
    if (!moved.moved)  // the same words as the CLI's refusal
      return line(res, 409, store::alert_move_refusal(id, moved.state, change.to, change.actor));
    if (json) {
      res.set_content(reports::alert_json(*after).dump(2), "application/json");
      return;
    }
    redirect(res, "/alerts/" + std::to_string(id));
  }

  void login(const httplib::Request& req, httplib::Response& res) {
    if (!access_.same_origin(req)) return line(res, 403, "a sign-in from another site is refused");
    std::string token;
    try {
      for (const auto& [name, value] : parse_form(req.body))
        if (name == "token") token = value;
    } catch (const BadRequest& e) {
      return line(res, 400, fmt::format("bad request: {}", e.what()));
    }
    const auto session = access_.login(token);
    if (!session) {
      res.status = 403;
      res.set_content(own_page("sign in", login_form("That is not this server's token.")), "text/html; charset=utf-8");
      return;
    }
    res.set_header("Set-Cookie", access_.cookie_header(*session));
    redirect(res, "/");
  }

  ServeOptions o_;
  StorePool stores_;
  PageCache cache_;
  Access access_;
  httplib::Server server_;
  Front front_;
  PageContext context_;
};

}  // namespace

std::pair<std::string, int> parse_listen(const std::string& listen) {
  const size_t colon = listen.rfind(':');
  if (colon == std::string::npos || colon + 1 == listen.size())
    throw std::invalid_argument(fmt::format("--listen {}: expected HOST:PORT, e.g. 127.0.0.1:8080", listen));
  std::string host = listen.substr(0, colon);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
  const std::string port_text = listen.substr(colon + 1);
  char* end = nullptr;
  const long port = std::strtol(port_text.c_str(), &end, 10);
  if (host.empty() || *end != '\0' || port < 0 || port > 65535)
    throw std::invalid_argument(fmt::format("--listen {}: expected HOST:PORT with a port from 0 to 65535", listen));
  return {host, static_cast<int>(port)};
}

void serve(const ServeOptions& options, const std::function<void(const std::string&)>& on_listening,
           const std::function<bool()>& stop_requested) {
  // Two malloc arenas, not one per thread: tens of connection threads would
  // each keep freed memory of their own.
  mallopt(M_ARENA_MAX, 2);
  Site site(options);
  site.run(on_listening, stop_requested);
}

}  // namespace twinbench::serve
