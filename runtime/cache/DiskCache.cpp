//===- DiskCache.cpp - The on-disk kernel cache ---------------------------===//

#include "runtime/cache/DiskCache.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <random>
#include <sys/file.h>
#include <sys/stat.h>
#include <thread>
#include <unistd.h>

namespace moegen::cache {
namespace {

void (*writeHook)(const char *) = nullptr;

llvm::Error errnoError(const llvm::Twine &what) {
  int e = errno;
  return llvm::createStringError(std::error_code(e, std::generic_category()),
                                 what + ": " + std::strerror(e));
}

/// Errors that mean "this directory is not ours to write", as opposed to
/// a transient failure of one write.
bool isPermissionErrno(int e) { return e == EACCES || e == EPERM || e == EROFS; }

bool writeAll(int fd, const uint8_t *p, size_t n) {
  while (n > 0) {
    ssize_t w = ::write(fd, p, n);
    if (w < 0) {
      if (errno == EINTR)
        continue;
      return false;
    }
    p += w;
    n -= static_cast<size_t>(w);
  }
  return true;
}

/// Reads a whole file; false with errno set on failure.
bool readFile(const std::string &path, std::vector<uint8_t> &out, bool &missing) {
  missing = false;
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    missing = errno == ENOENT;
    return false;
  }
  struct stat st;
  if (::fstat(fd, &st) != 0) {
    ::close(fd);
    return false;
  }
  out.resize(static_cast<size_t>(st.st_size));
  size_t got = 0;
  while (got < out.size()) {
    ssize_t r = ::read(fd, out.data() + got, out.size() - got);
    if (r < 0 && errno == EINTR)
      continue;
    if (r <= 0)
      break;
    got += static_cast<size_t>(r);
  }
  out.resize(got);
  ::close(fd);
  return true;
}

void fsyncDir(llvm::StringRef dir) {
  int fd = ::open(dir.str().c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd >= 0) {
    ::fsync(fd);
    ::close(fd);
  }
}

std::string tempSuffix() {
  static thread_local std::mt19937_64 rng(std::random_device{}() ^
                                          (static_cast<uint64_t>(::getpid()) << 32));
  return std::to_string(::getpid()) + "." + llvm::utohexstr(rng());
}

int64_t lockTimeoutMs() {
  if (const char *s = std::getenv("MOEGEN_CACHE_LOCK_TIMEOUT_S")) {
    int64_t v;
    if (!llvm::StringRef(s).getAsInteger(10, v) && v >= 0)
      return v * 1000;
  }
  return 600 * 1000;
}

} // namespace

std::string defaultCacheRoot() {
  auto env = [](const char *name) -> std::string {
    const char *v = std::getenv(name);
    return v ? v : "";
  };
  if (std::string d = env("MOEGEN_CACHE_DIR"); !d.empty())
    return d;
  if (std::string d = env("XDG_CACHE_HOME"); !d.empty())
    return d + "/moegen";
  if (std::string d = env("HOME"); !d.empty())
    return d + "/.cache/moegen";
  return "";
}

//===----------------------------------------------------------------------===//
// FileLock
//===----------------------------------------------------------------------===//

FileLock &FileLock::operator=(FileLock &&o) noexcept {
  if (this != &o) {
    release();
    fd = o.fd;
    waited = o.waited;
    o.fd = -1;
  }
  return *this;
}

void FileLock::release() {
  if (fd >= 0) {
    ::flock(fd, LOCK_UN);
    ::close(fd);
    fd = -1;
  }
}

llvm::Expected<FileLock> FileLock::acquire(const std::string &path, int64_t timeoutMs) {
  FileLock l;
  l.fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (l.fd < 0)
    return errnoError("cannot open lock file '" + path + "'");
  auto start = std::chrono::steady_clock::now();
  // Poll rather than block so that a stuck holder cannot hang us forever.
  int sleepUs = 200;
  while (::flock(l.fd, LOCK_EX | LOCK_NB) != 0) {
    if (errno == EINTR)
      continue;
    if (errno != EWOULDBLOCK)
      return errnoError("cannot lock '" + path + "'");
    l.waited = true;
    auto waitedMs = std::chrono::duration_cast<std::chrono::milliseconds>(
                        std::chrono::steady_clock::now() - start)
                        .count();
    if (waitedMs >= timeoutMs)
      return llvm::createStringError(std::errc::timed_out,
                                     "timed out after %lld ms waiting for the lock '%s'",
                                     static_cast<long long>(waitedMs), path.c_str());
    std::this_thread::sleep_for(std::chrono::microseconds(sleepUs));
    sleepUs = std::min(sleepUs * 2, 20000);
  }
  return std::move(l);
}

//===----------------------------------------------------------------------===//
// DiskCache
//===----------------------------------------------------------------------===//

void DiskCache::setWriteHookForTesting(void (*hook)(const char *)) { writeHook = hook; }

DiskCache::DiskCache(std::string root, runtime::LogHandler logHandler)
    : rootDir(root.empty() ? defaultCacheRoot() : std::move(root)), log(std::move(logHandler)) {
  if (rootDir.empty()) {
    degrade(State::Unusable, "no cache directory: none of MOEGEN_CACHE_DIR, XDG_CACHE_HOME and "
                             "HOME is set");
    return;
  }
  std::string dir = versionDir();
  if (std::error_code ec = llvm::sys::fs::create_directories(dir)) {
    if (llvm::sys::fs::is_directory(dir))
      degrade(State::ReadOnly, "cannot write '" + dir + "': " + ec.message());
    else
      degrade(State::Unusable, "cannot create '" + dir + "': " + ec.message());
    return;
  }
  if (::access(dir.c_str(), W_OK) != 0)
    degrade(State::ReadOnly, "'" + dir + "' is read-only: " + std::strerror(errno));
}

void DiskCache::degrade(State to, const llvm::Twine &why) {
  State from = currentState.load();
  while (static_cast<int>(from) < static_cast<int>(to))
    if (currentState.compare_exchange_weak(from, to)) {
      runtime::logMessage(log, runtime::LogLevel::Warning,
                          "kernel cache: " + why +
                              (to == State::ReadOnly
                                   ? "; existing entries are used, new kernels stay in memory"
                                   : "; kernels are cached in memory only"));
      return;
    }
}

std::string DiskCache::versionDir() const {
  return rootDir + "/v" + std::to_string(kEntryFormatVersion);
}

std::string DiskCache::entryPath(const CacheKey &key, llvm::StringRef chip) const {
  std::string hex = key.hex();
  return versionDir() + "/" + chip.str() + "/" + hex.substr(0, 2) + "/" + hex + ".moeko";
}

std::string DiskCache::lockPath(const CacheKey &unit, llvm::StringRef chip) const {
  std::string hex = unit.hex();
  return versionDir() + "/" + chip.str() + "/" + hex.substr(0, 2) + "/" + hex + ".lock";
}

void DiskCache::reportRejected(const std::string &path, llvm::StringRef why) {
  {
    std::lock_guard<std::mutex> lock(reportMutex);
    if (std::find(reported.begin(), reported.end(), path) != reported.end())
      return;
    reported.push_back(path);
  }
  runtime::logMessage(log, runtime::LogLevel::Warning,
                      "kernel cache: entry '" + path + "' is " + why +
                          "; it is not loaded and will be rebuilt");
}

DiskCache::LoadResult DiskCache::load(const CacheKey &key, llvm::StringRef chip,
                                      KernelBinary &out) {
  if (state() == State::Unusable)
    return LoadResult::Miss;
  std::string path = entryPath(key, chip);
  std::vector<uint8_t> bytes;
  bool missing;
  if (!readFile(path, bytes, missing)) {
    if (missing)
      return LoadResult::Miss;
    reportRejected(path, std::string("unreadable (") + std::strerror(errno) + ")");
    return LoadResult::Rejected;
  }
  auto entry = decodeEntry(bytes, &key);
  if (!entry) {
    reportRejected(path, llvm::toString(entry.takeError()));
    return LoadResult::Rejected;
  }
  out = std::move(entry->kernel);
  return LoadResult::Hit;
}

llvm::Error DiskCache::store(const CacheKey &key, llvm::StringRef chip,
                             const KernelBinary &kernel) {
  if (state() != State::Writable)
    return llvm::Error::success();
  std::string path = entryPath(key, chip);
  llvm::StringRef dir = llvm::sys::path::parent_path(path);
  if (std::error_code ec = llvm::sys::fs::create_directories(dir)) {
    if (isPermissionErrno(ec.value())) {
      degrade(State::ReadOnly, "cannot create '" + dir + "': " + ec.message());
      return llvm::Error::success();
    }
    return llvm::createStringError(ec, "kernel cache: cannot create '%s': %s", dir.str().c_str(),
                                   ec.message().c_str());
  }
  std::vector<uint8_t> bytes = encodeEntry(key, kernel);
  std::string tmp = dir.str() + "/." + key.hex() + "." + tempSuffix() + ".tmp";
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) {
    if (isPermissionErrno(errno)) {
      degrade(State::ReadOnly, "cannot write in '" + dir + "': " + std::strerror(errno));
      return llvm::Error::success();
    }
    return errnoError("kernel cache: cannot create '" + tmp + "'");
  }
  size_t half = bytes.size() / 2;
  bool ok = writeAll(fd, bytes.data(), half);
  if (ok && writeHook)
    writeHook("partial");
  ok = ok && writeAll(fd, bytes.data() + half, bytes.size() - half) && ::fsync(fd) == 0;
  int savedErrno = errno;
  ::close(fd);
  if (ok && writeHook)
    writeHook("written");
  if (!ok || ::rename(tmp.c_str(), path.c_str()) != 0) {
    if (ok)
      savedErrno = errno;
    ::unlink(tmp.c_str());
    errno = savedErrno;
    return errnoError("kernel cache: cannot publish '" + path + "'");
  }
  fsyncDir(dir);
  return llvm::Error::success();
}

void DiskCache::removeStaleTemps(const CacheKey &key, llvm::StringRef chip) {
  std::string path = entryPath(key, chip);
  llvm::StringRef dir = llvm::sys::path::parent_path(path);
  std::string prefix = "." + key.hex() + ".";
  std::error_code ec;
  std::vector<std::string> stale;
  for (llvm::sys::fs::directory_iterator it(dir, ec), end; it != end && !ec; it.increment(ec)) {
    llvm::StringRef name = llvm::sys::path::filename(it->path());
    if (name.starts_with(prefix) && name.ends_with(".tmp"))
      stale.push_back(it->path());
  }
  for (const std::string &f : stale)
    ::unlink(f.c_str());
}

llvm::Expected<FileLock> DiskCache::lockUnit(const CacheKey &unit, llvm::StringRef chip) {
  if (state() != State::Writable)
    return FileLock();
  std::string path = lockPath(unit, chip);
  llvm::StringRef dir = llvm::sys::path::parent_path(path);
  if (std::error_code ec = llvm::sys::fs::create_directories(dir)) {
    if (isPermissionErrno(ec.value())) {
      degrade(State::ReadOnly, "cannot create '" + dir + "': " + ec.message());
      return FileLock();
    }
    return llvm::createStringError(ec, "kernel cache: cannot create '%s'", dir.str().c_str());
  }
  auto lock = FileLock::acquire(path, lockTimeoutMs());
  if (!lock) {
    std::error_code ec = llvm::errorToErrorCode(lock.takeError());
    if (isPermissionErrno(ec.value())) {
      degrade(State::ReadOnly, "cannot create lock files in '" + dir + "': " + ec.message());
      return FileLock();
    }
    // A holder that never finishes must not block us forever: compile
    // without the lock; the rename keeps the entry whole either way.
    runtime::logMessage(log, runtime::LogLevel::Warning,
                        "kernel cache: " + ec.message() + " on '" + path +
                            "'; compiling without it");
    return FileLock();
  }
  return lock;
}

std::vector<EntryListing> DiskCache::list() const {
  std::vector<EntryListing> out;
  std::error_code ec;
  for (llvm::sys::fs::recursive_directory_iterator it(versionDir(), ec), end; it != end && !ec;
       it.increment(ec)) {
    if (it->type() != llvm::sys::fs::file_type::regular_file)
      continue;
    llvm::StringRef name = llvm::sys::path::filename(it->path());
    bool isTemp = name.starts_with(".") && name.ends_with(".tmp");
    if (!isTemp && !name.ends_with(".moeko"))
      continue;
    EntryListing e;
    e.path = it->path();
    std::vector<uint8_t> bytes;
    bool missing;
    if (!readFile(e.path, bytes, missing))
      continue;
    e.bytes = bytes.size();
    if (isTemp) {
      e.problem = "unfinished write (temp file)";
    } else {
      auto key = CacheKey::fromHex(name.drop_back(6));
      auto entry = decodeEntry(bytes, key ? &*key : nullptr);
      if (!key)
        e.problem = "file name is not a key";
      else if (!entry)
        e.problem = llvm::toString(entry.takeError());
      else {
        e.valid = true;
        e.meta = std::move(entry->kernel.meta);
      }
    }
    out.push_back(std::move(e));
  }
  std::sort(out.begin(), out.end(),
            [](const EntryListing &a, const EntryListing &b) { return a.path < b.path; });
  return out;
}

llvm::Expected<size_t> DiskCache::clear() {
  std::vector<std::string> files;
  std::error_code ec;
  for (llvm::sys::fs::recursive_directory_iterator it(versionDir(), ec), end; it != end && !ec;
       it.increment(ec)) {
    llvm::StringRef name = llvm::sys::path::filename(it->path());
    if (it->type() == llvm::sys::fs::file_type::regular_file &&
        (name.ends_with(".moeko") || name.ends_with(".tmp") || name.ends_with(".lock")))
      files.push_back(it->path());
  }
  size_t removed = 0;
  for (const std::string &f : files) {
    if (std::error_code rc = llvm::sys::fs::remove(f))
      return llvm::createStringError(rc, "cannot remove '%s': %s", f.c_str(), rc.message().c_str());
    ++removed;
  }
  return removed;
}

} // namespace moegen::cache
