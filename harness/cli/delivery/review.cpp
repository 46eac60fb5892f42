// The branch verdict on GitHub and GitLab (see review.h).
#include "harness/cli/delivery/review.h"

#include <fmt/chrono.h>
#include <fmt/format.h>

#include <cstdlib>
#include <ctime>
#include <fstream>

#include "harness/cli/delivery/forge.h"

namespace twinbench::cli::delivery {

namespace {

std::string env(const char* name) {
  const char* v = std::getenv(name);
  return v ? v : "";
}

std::string required_env(const char* name, const char* flag) {
  const std::string v = env(name);
  if (v.empty())
    throw std::invalid_argument(fmt::format("{}: ${} is not set: run it in the CI job, or set it by hand", flag, name));
  return v;
}

std::string iso_now() {
  const std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  return fmt::format("{:%Y-%m-%dT%H:%M:%SZ}", tm);
}

// The id of the first comment or note of the list at `path` that holds `marker`.
std::optional<std::string> find_marked(const ForgeApi& api, const std::string& path, const std::string& marker,
                                       std::optional<HttpResponse>& failed) {
  const auto item = api.find_marked(path, marker, failed);
  if (!item) return std::nullopt;
  return std::to_string(item->value("id", int64_t{0}));
}

class GitHubHost : public ReviewHost {
 public:
  GitHubHost(const ReviewOptions& o, Secrets& secrets, std::ostream& log)
      : options_(o),
        repo_(required_env("GITHUB_REPOSITORY", "--github")),
        api_(ForgeApi::Kind::kGitHub, env("GITHUB_API_URL").empty() ? "https://api.github.com" : env("GITHUB_API_URL"),
             token(secrets), HttpPolicy::from_env(), secrets, log) {
    head_ = env("GITHUB_SHA");
    // A pull request's event names the pull request and its head (GITHUB_SHA is the merge commit then).
    if (const std::string path = env("GITHUB_EVENT_PATH"); !path.empty()) {
      std::ifstream in(path);
      const auto event = nlohmann::json::parse(in, nullptr, false);
      if (event.is_discarded()) throw std::invalid_argument("--github: $GITHUB_EVENT_PATH=" + path + " is not JSON");
      if (event.contains("pull_request") && event["pull_request"].is_object()) {
        const auto& pr = event["pull_request"];
        if (pr.contains("number") && pr["number"].is_number_integer()) pr_ = pr["number"].get<int64_t>();
        if (pr.contains("head") && pr["head"].is_object() && pr["head"].contains("sha") && pr["head"]["sha"].is_string())
          head_ = pr["head"]["sha"].get<std::string>();
      }
    }
    if (head_.empty()) throw std::invalid_argument("--github: no head commit: $GITHUB_SHA is not set");
    if (!env("GITHUB_SERVER_URL").empty() && !env("GITHUB_RUN_ID").empty())
      job_ = fmt::format("{}/{}/actions/runs/{}", env("GITHUB_SERVER_URL"), repo_, env("GITHUB_RUN_ID"));
  }
  static std::string token(Secrets& secrets) {
    const std::string t = secret_from_env({"TWINBENCH_GITHUB_TOKEN", "GITHUB_TOKEN"}, "TWINBENCH_GITHUB_TOKEN_FILE",
                                          secrets);
    if (t.empty()) throw std::invalid_argument("--github: no token: set $GITHUB_TOKEN (or $TWINBENCH_GITHUB_TOKEN)");
    return t;
  }
  std::string name() const override { return "GitHub"; }
  std::string head() const override { return head_; }
  bool has_review() const override { return pr_.has_value(); }
  std::string job_link() const override { return job_; }
  HttpResponse post_verdict(const reports::PrVerdict& v, const std::string& summary, const std::string& text,
                            const std::string& link) override {
    nlohmann::json body = {{"name", options_.name},
                           {"head_sha", head_},
                           {"status", "completed"},
                           {"conclusion", v.conclusion},
                           {"completed_at", iso_now()},
                           {"output", {{"title", "twinbench: " + v.headline}, {"summary", summary}, {"text", text}}}};
    if (!link.empty()) body["details_url"] = link;
    return api_.call("POST", "/repos/" + repo_ + "/check-runs", body);
  }
  std::optional<std::string> find_comment(const std::string& marker, std::optional<HttpResponse>& failed) override {
    return find_marked(api_, fmt::format("/repos/{}/issues/{}/comments?per_page=100", repo_, *pr_), marker, failed);
  }
  HttpResponse create_comment(const std::string& body) override {
    return api_.call("POST", fmt::format("/repos/{}/issues/{}/comments", repo_, *pr_), {{"body", body}});
  }
  HttpResponse update_comment(const std::string& id, const std::string& body) override {
    return api_.call("PATCH", fmt::format("/repos/{}/issues/comments/{}", repo_, id), {{"body", body}});
  }
  void write_summary(const std::string& markdown) override {
    const std::string file = env("GITHUB_STEP_SUMMARY");
    if (file.empty()) return;
    std::ofstream(file, std::ios::app) << markdown << "\n";
  }
  std::string describe(const HttpResponse& r) const override { return api_.describe(r); }

 private:
  ReviewOptions options_;
  std::string repo_, head_, job_;
  std::optional<int64_t> pr_;
  ForgeApi api_;
};

class GitLabHost : public ReviewHost {
 public:
  GitLabHost(const ReviewOptions& o, Secrets& secrets, std::ostream& log)
      : options_(o),
        project_(required_env("CI_PROJECT_ID", "--gitlab")),
        head_(required_env("CI_COMMIT_SHA", "--gitlab")),
        mr_(env("CI_MERGE_REQUEST_IID")),
        job_(env("CI_JOB_URL")),
        log_(log),
        api_(ForgeApi::Kind::kGitLab, required_env("CI_API_V4_URL", "--gitlab"), token(secrets), HttpPolicy::from_env(),
             secrets, log) {}
  static std::string token(Secrets& secrets) {
    // CI_JOB_TOKEN may not write notes or statuses: a project or personal access token.
    const std::string t = secret_from_env({"TWINBENCH_GITLAB_TOKEN", "GITLAB_TOKEN"}, "TWINBENCH_GITLAB_TOKEN_FILE",
                                          secrets);
    if (t.empty()) throw std::invalid_argument("--gitlab: no token: set $GITLAB_TOKEN (or $TWINBENCH_GITLAB_TOKEN)");
    return t;
  }
  std::string name() const override { return "GitLab"; }
  std::string head() const override { return head_; }
  bool has_review() const override { return !mr_.empty(); }
  std::string job_link() const override { return job_; }
  HttpResponse post_verdict(const reports::PrVerdict& v, const std::string&, const std::string&,
                            const std::string& link) override {
    // GitLab's statuses have no "neutral": an undecided verdict does not block the merge, and says so.
    nlohmann::json body = {{"state", v.conclusion == "failure" ? "failed" : "success"},
                           {"name", options_.name},
                           {"description", v.headline.substr(0, 255)}};
    if (!link.empty()) body["target_url"] = link;
    return api_.call("POST", fmt::format("/projects/{}/statuses/{}", project_, head_), body);
  }
  std::optional<std::string> find_comment(const std::string& marker, std::optional<HttpResponse>& failed) override {
    return find_marked(api_, fmt::format("/projects/{}/merge_requests/{}/notes?sort=asc&per_page=100", project_, mr_),
                       marker, failed);
  }
  HttpResponse create_comment(const std::string& body) override {
    return api_.call("POST", fmt::format("/projects/{}/merge_requests/{}/notes", project_, mr_), {{"body", body}});
  }
  HttpResponse update_comment(const std::string& id, const std::string& body) override {
    return api_.call("PUT", fmt::format("/projects/{}/merge_requests/{}/notes/{}", project_, mr_, id), {{"body", body}});
  }
  void write_summary(const std::string& markdown) override { log_ << markdown << "\n"; }
  std::string describe(const HttpResponse& r) const override { return api_.describe(r); }

 private:
  ReviewOptions options_;
  std::string project_, head_, mr_, job_;
  std::ostream& log_;
  ForgeApi api_;
};

}  // namespace

void add_review_options(CLI::App* cmd, ReviewOptions& o) {
  cmd->add_flag("--github", o.github,
                "post the verdict to GitHub from the Actions job's environment: a check run on the head commit and "
                "one pull-request comment edited in place (docs/alerts.md)");
  cmd->add_flag("--gitlab", o.gitlab,
                "post the verdict to GitLab from the CI job's environment: a commit status and one merge-request "
                "note edited in place");
  cmd->add_option("--comment", o.comment,
                  "the pull-request comment: always (default), on-change (only when some row changed or could not "
                  "decide; an existing comment is always brought up to date) or never")
      ->check(CLI::IsMember({"always", "on-change", "never"}));
  cmd->add_option("--check-name", o.name, "the check run's (commit status's) name, also the comment's (default twinbench)");
  cmd->add_option("--report-url", o.report_url,
                  "the full report's URL for the comment and the check run (default $TWINBENCH_REPORT_URL, else the "
                  "CI job's page)")
      ->envname("TWINBENCH_REPORT_URL");
}

std::unique_ptr<ReviewHost> review_host(const ReviewOptions& o, Secrets& secrets, std::ostream& log) {
  if (o.github && o.gitlab) throw std::invalid_argument("--github and --gitlab: one forge at a time");
  if (o.github) return std::make_unique<GitHubHost>(o, secrets, log);
  if (o.gitlab) return std::make_unique<GitLabHost>(o, secrets, log);
  return nullptr;
}

ReviewOutcome deliver_review(ReviewHost& host, const compare::BranchAnalysis& a, const ReviewOptions& o,
                             std::ostream& log) {
  ReviewOutcome out;
  const reports::PrVerdict verdict = reports::pr_verdict(a);
  const std::string link = o.report_url.empty() ? host.job_link() : o.report_url;
  const std::string marker = "<!-- twinbench-pr: " + o.name + " -->";
  const std::string comment = reports::pr_comment(a, verdict, link, host.head(), marker);
  host.write_summary(comment);
  const auto refused = [&](const std::string& what, const HttpResponse& r) {
    out.degraded = true;
    const bool permission = r.status == 401 || r.status == 403 || r.status == 404;
    log << fmt::format("twinbench: warning: {} refused {} ({}){}; the verdict is in the job summary and the exit "
                       "code still gates\n",
                       host.name(), what, host.describe(r),
                       permission ? ": a token without write access (a pull request from a fork?) or a wrong token"
                                  : "");
  };
  const HttpResponse posted = host.post_verdict(verdict, comment, reports::check_text(a), link);
  if (posted.ok()) {
    out.verdict_posted = true;
    log << fmt::format("twinbench: {} {} on {}: {}\n", host.name(),
                       host.name() == "GitHub" ? "check run" : "commit status", host.head().substr(0, 9),
                       verdict.conclusion);
  } else {
    refused(host.name() == "GitHub" ? "the check run" : "the commit status", posted);
  }
  if (o.comment == "never" || !host.has_review()) {
    out.comment = "skipped";
    return out;
  }
  std::optional<HttpResponse> failed;
  const auto existing = host.find_comment(marker, failed);
  if (failed) {
    refused("listing the comments", *failed);
    return out;
  }
  if (!existing && o.comment == "on-change" && !verdict.changed) {
    out.comment = "skipped";
    return out;
  }
  const HttpResponse r = existing ? host.update_comment(*existing, comment) : host.create_comment(comment);
  if (!r.ok()) {
    refused("the comment", r);
    return out;
  }
  out.comment = existing ? "updated" : "created";
  log << fmt::format("twinbench: {} comment {}\n", host.name(), out.comment);
  return out;
}

}  // namespace twinbench::cli::delivery
