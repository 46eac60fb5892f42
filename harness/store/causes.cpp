// Cause files (see causes.h). Plain POSIX calls, no exceptions out: these run
// exactly when something else is already failing.
#include "harness/store/causes.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <vector>

namespace twinbench::store::causes {

namespace {

// First line of every written cause file; a reservation is all zero bytes.
constexpr char kMagic[] = "twinbench-cause 1\n";

std::string dir_of(const std::string& db_path) { return db_path + "-causes"; }

bool in_memory(const std::string& db_path) {
  return db_path.empty() || db_path == ":memory:" || db_path.rfind("file:", 0) == 0;
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

std::string path_of(const std::string& db_path, const std::string& run_id) {
  if (in_memory(db_path) || !safe_name(run_id)) return "";
  return dir_of(db_path) + "/" + run_id;
}

void reserve(const std::string& db_path, const std::string& run_id) noexcept {
  const std::string path = path_of(db_path, run_id);
  if (path.empty()) return;
  mkdir(dir_of(db_path).c_str(), 0755);  // EEXIST is the usual case
  const int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) return;
  // Allocated blocks, zero-filled: a later pwrite into them needs no free space.
  if (posix_fallocate(fd, 0, static_cast<off_t>(kReservedBytes)) != 0) {
    const std::vector<char> zeros(kReservedBytes, '\0');
    write_all(fd, zeros.data(), zeros.size(), 0);
  }
  close(fd);
}

bool write(const std::string& db_path, const std::string& run_id, RunStatus status,
           const std::string& reason) noexcept {
  try {
    const std::string path = path_of(db_path, run_id);
    if (path.empty()) return false;
    std::string text = std::string(kMagic) + std::string(to_string(status)) + "\n" + reason;
    text.resize(std::min(text.size(), kReservedBytes - 1));
    text.push_back('\0');  // the end of the text, also over a longer earlier one
    int fd = open(path.c_str(), O_WRONLY | O_CLOEXEC);
    if (fd < 0) {  // no reservation: try to make one now
      mkdir(dir_of(db_path).c_str(), 0755);
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

std::optional<Cause> read(const std::string& db_path, const std::string& run_id) noexcept {
  try {
    const std::string path = path_of(db_path, run_id);
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

void remove(const std::string& db_path, const std::string& run_id) noexcept {
  const std::string path = path_of(db_path, run_id);
  if (!path.empty()) unlink(path.c_str());
}

}  // namespace twinbench::store::causes
