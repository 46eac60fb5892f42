// The one way twinbench makes a private temporary directory: mkdtemp under
// $TMPDIR (else /tmp), removed with everything in it when the object goes,
// unless keep() was called (a failure left something worth reading there).
#pragma once

#include <filesystem>
#include <string>

namespace twinbench {

class TempDir {
 public:
  // `prefix` names the directory: "<tmp>/<prefix>-XXXXXX". Throws
  // std::runtime_error naming the path and the OS error when it cannot be made.
  explicit TempDir(const std::string& prefix);
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::filesystem::path& path() const { return path_; }
  std::string file(const std::string& name) const { return (path_ / name).string(); }
  void keep() { keep_ = true; }

 private:
  std::filesystem::path path_;
  bool keep_ = false;
};

}  // namespace twinbench
