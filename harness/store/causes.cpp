// Cause files (see causes.h). Plain POSIX calls, no exceptions out: these run
// exactly when something else is already failing.
#include "harness/store/causes.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "harness/store/postgres.h"
#include "harness/store/store.h"

namespace twinbench::store::causes {

namespace {

// First line of every written cause file; a reservation is all zero bytes.
constexpr char kMagic[] = "twinbench-cause 1\n";

bool in_memory(const std::string& db_path) {
  return db_path.empty() || db_path == ":memory:" || db_path.rfind("file:", 0) == 0;
}

// mkdir -p; errors are found when the file is opened.
void make_folders(const std::string& path) {
  for (size_t slash = path.find('/', 1); ; slash = path.find('/', slash + 1)) {
    mkdir(path.substr(0, slash).c_str(), 0755);  // EEXIST is the usual case
    if (slash == std::string::npos) return;
  }
}

std::string state_dir() {
  const auto env = [](const char* name) -> std::string {
    const char* v = std::getenv(name);
    return v && *v ? v : "";
  };
  if (const auto dir = env("TWINBENCH_STATE_DIR"); !dir.empty()) return dir;
  if (const auto dir = env("XDG_STATE_HOME"); !dir.empty()) return dir + "/twinbench";
  if (const auto home = env("HOME"); !home.empty()) return home + "/.local/state/twinbench";
  return "/tmp/twinbench-state-" + std::to_string(getuid());
}

// A run id becomes a file name: only uuid-like ids are accepted (anything with a
// path separator or a dot could name another file).
bool safe_name(const std::string& run_id) {
  return !run_id.empty() && run_id.size() <= 128 && std::all_of(run_id.begin(), run_id.end(), [](char c) {
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '-' || c == '_';
  });
}

bool write_all(int fd, const char* data, size_t size, off_t offset) {
  while (size > 0) {
    const ssize_t n = pwrite(fd, data, size, offset);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    data += n;
    size -= static_cast<size_t>(n);
    offset += n;
  }
  return true;
}

}  // namespace

std::string server_name(const std::string& location) {
  // The server and database, without user or password, as one file name.
  std::string url = pg::redact(location);
  const size_t scheme = url.find("://"), at = url.find('@');
  if (scheme != std::string::npos && at != std::string::npos && at < url.find_first_of("/?", scheme + 3))
    url.erase(scheme + 3, at - scheme - 2);
  std::string name;
  for (const char c : url) name += std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '-' ? c : '_';
  return name.substr(0, 200);
}

std::string folder_for(const std::string& location) {
  if (!is_server_location(location)) return in_memory(location) ? "" : location + "-causes";
  return state_dir() + "/causes/" + server_name(location);
}

std::string path_of(const std::string& folder, const std::string& run_id) {
  if (folder.empty() || !safe_name(run_id)) return "";
  return folder + "/" + run_id;
}

void reserve(const std::string& folder, const std::string& run_id) noexcept {
  const std::string path = path_of(folder, run_id);
  if (path.empty()) return;
  make_folders(folder);
  const int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) return;
  // Allocated blocks, zero-filled: a later pwrite into them needs no free space.
  if (posix_fallocate(fd, 0, static_cast<off_t>(kReservedBytes)) != 0) {
    const std::vector<char> zeros(kReservedBytes, '\0');
    write_all(fd, zeros.data(), zeros.size(), 0);
  }
  close(fd);
}

bool write(const std::string& folder, const std::string& run_id, RunStatus status,
           const std::string& reason) noexcept {
  try {
    const std::string path = path_of(folder, run_id);
    if (path.empty()) return false;
    std::string text = std::string(kMagic) + std::string(to_string(status)) + "\n" + reason;
    text.resize(std::min(text.size(), kReservedBytes - 1));
    text.push_back('\0');  // the end of the text, also over a longer earlier one
    int fd = open(path.c_str(), O_WRONLY | O_CLOEXEC);
    if (fd < 0) {  // no reservation: try to make one now
      make_folders(folder);
      fd = open(path.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
    }
    if (fd < 0) return false;
    const bool ok = write_all(fd, text.data(), text.size(), 0) && fdatasync(fd) == 0;
    close(fd);
    return ok;
  } catch (...) {  // std::bad_alloc: nothing more can be done
    return false;
  }
}

std::optional<Cause> read(const std::string& folder, const std::string& run_id) noexcept {
  try {
    const std::string path = path_of(folder, run_id);
    if (path.empty()) return std::nullopt;
    const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return std::nullopt;
    std::vector<char> buffer(kReservedBytes, '\0');
    const ssize_t n = pread(fd, buffer.data(), buffer.size(), 0);
    close(fd);
    if (n <= 0) return std::nullopt;
    const std::string text(buffer.data(), strnlen(buffer.data(), static_cast<size_t>(n)));
    const size_t magic = std::strlen(kMagic);
    if (text.compare(0, magic, kMagic) != 0) return std::nullopt;  // an empty reservation
    const size_t newline = text.find('\n', magic);
    if (newline == std::string::npos) return std::nullopt;
    Cause cause;
    cause.status = status_from_string(text.substr(magic, newline - magic));
    if (cause.status == RunStatus::running) return std::nullopt;
    cause.reason = text.substr(newline + 1);
    return cause;
  } catch (...) {  // an unknown status: not ours to apply
    return std::nullopt;
  }
}

void remove(const std::string& folder, const std::string& run_id) noexcept {
  const std::string path = path_of(folder, run_id);
  if (!path.empty()) unlink(path.c_str());
}

std::vector<std::string> written(const std::string& folder) noexcept {
  std::vector<std::string> out;
  try {
    DIR* dir = folder.empty() ? nullptr : opendir(folder.c_str());
    if (!dir) return out;
    while (const dirent* entry = readdir(dir))
      if (safe_name(entry->d_name) && read(folder, entry->d_name)) out.emplace_back(entry->d_name);
    closedir(dir);
  } catch (...) {  // std::bad_alloc: what was found so far
  }
  return out;
}

}  // namespace twinbench::store::causes
