// The branch verdict where the pull request is (docs/alerts.md, "Pull
// requests"), behind one interface for GitHub and GitLab: read from the CI's
// own environment, the verdict goes on the head commit (a GitHub check run:
// failure on a regression, success on no change, neutral when inconclusive,
// the verdict table as its output; a GitLab commit status) and into one
// comment found again by its marker and edited in place on every push
// (`--comment always|on-change|never`). What the forge refuses — a token
// without write access (a fork's pull request), a wrong token — is a warning:
// the comment goes to the job summary and the exit code still gates. Rate
// limits are waited out within a bound (http.h).
#pragma once

#include <CLI/CLI.hpp>

#include <memory>
#include <optional>
#include <ostream>
#include <string>

#include "harness/cli/delivery/http.h"
#include "harness/compare/branch_analysis.h"
#include "reports/pr_comment.h"

namespace twinbench::cli::delivery {

struct ReviewOptions {
  bool github = false, gitlab = false;
  std::string comment = "always";  // always | on-change | never
  std::string name = "twinbench";  // the check run's (commit status's) name; the comment's marker names it too
  std::string report_url;          // the full report's URL (else the CI job's page)
};

// --github, --gitlab, --comment, --check-name, --report-url.
void add_review_options(CLI::App* cmd, ReviewOptions& options);

// One forge, as the delivery sees it.
class ReviewHost {
 public:
  virtual ~ReviewHost() = default;
  virtual std::string name() const = 0;  // "GitHub", "GitLab"
  virtual std::string head() const = 0;  // the commit the verdict is for
  virtual bool has_review() const = 0;   // a pull (merge) request to comment on
  virtual std::string job_link() const = 0;  // the CI job's page ("" when unknown)
  virtual HttpResponse post_verdict(const reports::PrVerdict& verdict, const std::string& summary,
                                    const std::string& text, const std::string& link) = 0;
  // The id of the comment holding `marker`; nullopt when none. A failed
  // listing comes back in `failed`.
  virtual std::optional<std::string> find_comment(const std::string& marker, std::optional<HttpResponse>& failed) = 0;
  virtual HttpResponse create_comment(const std::string& body) = 0;
  virtual HttpResponse update_comment(const std::string& id, const std::string& body) = 0;
  // The job's own summary (GitHub's $GITHUB_STEP_SUMMARY; GitLab: the job log).
  virtual void write_summary(const std::string& markdown) = 0;
  virtual std::string describe(const HttpResponse& r) const = 0;
};

// The host the options ask for, read from the CI's environment; nullptr when
// neither --github nor --gitlab. std::invalid_argument when the environment
// lacks what it needs (it names the variable).
std::unique_ptr<ReviewHost> review_host(const ReviewOptions& options, Secrets& secrets, std::ostream& log);

struct ReviewOutcome {
  bool verdict_posted = false;
  std::string comment;  // "created", "updated", "skipped", "" when it failed
  bool degraded = false;  // something was refused: the job summary has the verdict
};

// Posts the verdict and the comment; never throws for what the forge answers.
ReviewOutcome deliver_review(ReviewHost& host, const compare::BranchAnalysis& analysis, const ReviewOptions& options,
                             std::ostream& log);

}  // namespace twinbench::cli::delivery
