//===- DiskCache.cpp - The on-disk kernel cache ---------------------------===//

#include "runtime/cache/DiskCache.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <set>
#include <sys/stat.h>
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

/// Reads the rest of `fd`; false with errno set on failure.
bool readAll(int fd, std::vector<uint8_t> &out) {
  struct stat st;
  if (::fstat(fd, &st) != 0)
    return false;
  out.resize(static_cast<size_t>(st.st_size));
  size_t got = 0;
  while (got < out.size()) {
    ssize_t r = ::read(fd, out.data() + got, out.size() - got);
    if (r < 0 && errno == EINTR)
      continue;
    if (r < 0)
      return false;
    if (r == 0)
      break;
    got += static_cast<size_t>(r);
  }
  out.resize(got);
  return true;
}

const char *fileKind(mode_t mode) {
  switch (mode & S_IFMT) {
  case S_IFREG:
    return "regular file";
  case S_IFDIR:
    return "directory";
  case S_IFLNK:
    return "symbolic link";
  case S_IFIFO:
    return "FIFO";
  case S_IFSOCK:
    return "socket";
  default:
    return "device";
  }
}

/// "" when `st` is a `kind` (S_IFREG or S_IFDIR) owned by this user that
/// nobody else may write; otherwise why it is not, as "is ...".
std::string unsafeReason(const struct stat &st, mode_t kind) {
  if ((st.st_mode & S_IFMT) != kind)
    return std::string("is a ") + fileKind(st.st_mode) + ", not a " + fileKind(kind);
  if (st.st_uid != ::geteuid())
    return "is owned by uid " + std::to_string(st.st_uid) + ", not by this user (uid " +
           std::to_string(::geteuid()) + ")";
  if (st.st_mode & (S_IWGRP | S_IWOTH)) {
    char mode[8];
    std::snprintf(mode, sizeof(mode), "%04o", unsigned(st.st_mode & 07777));
    return std::string("is writable by group or others (mode ") + mode + ")";
  }
  return "";
}

/// A descriptor opened by openChecked, closed with the object.
struct CheckedFd {
  int fd = -1;
  bool missing = false;
  std::string where;   // the path refused or unreadable
  std::string problem; // "" when fd is open and checked
  CheckedFd() = default;
  CheckedFd(CheckedFd &&o) noexcept { *this = std::move(o); }
  CheckedFd &operator=(CheckedFd &&o) noexcept {
    std::swap(fd, o.fd);
    missing = o.missing;
    where = std::move(o.where);
    problem = std::move(o.problem);
    return *this;
  }
  ~CheckedFd() {
    if (fd >= 0)
      ::close(fd);
  }
  bool ok() const { return fd >= 0; }
};

/// Opens `name` relative to `dirFd` (or AT_FDCWD) for reading, then checks
/// the open file itself (fstat, so nothing can be swapped in between) with
/// unsafeReason. A final symbolic link is refused unless `follow`; a FIFO
/// cannot block the open (O_NONBLOCK). `shown` names it in messages.
CheckedFd openChecked(int dirFd, const std::string &name, const std::string &shown, mode_t kind,
                      bool follow = false) {
  CheckedFd r;
  r.where = shown;
  int flags = O_RDONLY | O_NONBLOCK | O_CLOEXEC | (follow ? 0 : O_NOFOLLOW);
  int fd = ::openat(dirFd, name.c_str(), flags);
  if (fd < 0) {
    r.missing = errno == ENOENT;
    if (errno == ELOOP)
      r.problem = std::string("is a symbolic link, not a ") + fileKind(kind);
    else if (!r.missing)
      r.problem = std::string("is unreadable (") + std::strerror(errno) + ")";
    return r;
  }
  struct stat st;
  r.problem = ::fstat(fd, &st) != 0 ? std::string("is unreadable (") + std::strerror(errno) + ")"
                                    : unsafeReason(st, kind);
  if (r.problem.empty())
    r.fd = fd;
  else
    ::close(fd);
  return r;
}

/// Opens `dir` (`root` or a directory below it): checks `root`, which may be
/// reached through symbolic links, then opens and checks each directory
/// under it with openat, following no link.
CheckedFd openCacheDir(const std::string &root, llvm::StringRef dir) {
  CheckedFd d = openChecked(AT_FDCWD, root, root, S_IFDIR, /*follow=*/true);
  llvm::SmallVector<llvm::StringRef, 4> parts;
  dir.drop_front(root.size()).split(parts, '/', -1, /*KeepEmpty=*/false);
  std::string shown = root;
  for (llvm::StringRef part : parts) {
    if (!d.ok())
      break;
    shown += "/" + part.str();
    d = openChecked(d.fd, part.str(), shown, S_IFDIR);
  }
  return d;
}

/// Creates `dir` and the parents it lacks, each 0700.
std::error_code createPrivateDirs(llvm::StringRef dir) {
  return llvm::sys::fs::create_directories(dir, /*IgnoreExisting=*/true, llvm::sys::fs::owner_all);
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
  if (const char *d = std::getenv("MOEGEN_CACHE_DIR"); d && *d)
    return d;
  // cache_directory: $XDG_CACHE_HOME, else <home>/.cache. The XDG spec says
  // to ignore an empty or relative $XDG_CACHE_HOME; LLVM returns it as is.
  llvm::SmallString<256> dir;
  if (!llvm::sys::path::cache_directory(dir) || !llvm::sys::path::is_absolute(dir)) {
    dir.clear();
    if (!llvm::sys::path::home_directory(dir) || !llvm::sys::path::is_absolute(dir))
      return "";
    llvm::sys::path::append(dir, ".cache");
  }
  llvm::sys::path::append(dir, "moegen");
  return std::string(dir);
}

//===----------------------------------------------------------------------===//
// FileLock
//===----------------------------------------------------------------------===//

namespace {

/// The lock files this process holds. llvm::sys::fs::tryLockFile takes a
/// POSIX record lock, which belongs to the process: a second thread would
/// get it too, and closing any descriptor of the file drops it. So threads
/// of one process take turns here first, and only the holder opens the file.
struct HeldLocks {
  std::mutex mutex;
  std::condition_variable released;
  std::set<std::string> paths;
};

HeldLocks &heldLocks() {
  static HeldLocks held;
  return held;
}

} // namespace

FileLock &FileLock::operator=(FileLock &&o) noexcept {
  if (this != &o) {
    release();
    fd = o.fd;
    waited = o.waited;
    path = std::move(o.path);
    o.fd = -1;
    o.path.clear();
  }
  return *this;
}

void FileLock::release() {
  if (fd >= 0) {
    llvm::sys::fs::unlockFile(fd);
    ::close(fd);
    fd = -1;
  }
  if (!path.empty()) {
    HeldLocks &held = heldLocks();
    {
      std::lock_guard<std::mutex> lock(held.mutex);
      held.paths.erase(path);
    }
    held.released.notify_all();
    path.clear();
  }
}

llvm::Expected<FileLock> FileLock::acquire(const std::string &path, int64_t timeoutMs) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeoutMs);
  auto timedOut = [&] {
    return llvm::createStringError(std::errc::timed_out,
                                   "timed out after %lld ms waiting for the lock '%s'",
                                   static_cast<long long>(timeoutMs), path.c_str());
  };
  FileLock l;
  {
    HeldLocks &held = heldLocks();
    std::unique_lock<std::mutex> lock(held.mutex);
    if (held.paths.count(path)) {
      l.waited = true;
      if (!held.released.wait_until(lock, deadline, [&] { return !held.paths.count(path); }))
        return timedOut();
    }
    held.paths.insert(path);
    l.path = path; // from here on, release() gives the turn back
  }
  l.fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK, 0600);
  if (l.fd < 0)
    return errnoError("cannot open lock file '" + path + "'");
  struct stat st;
  if (::fstat(l.fd, &st) != 0)
    return errnoError("cannot open lock file '" + path + "'");
  // Not a permission error: one bad lock file must not make the cache
  // read-only; the caller compiles without the lock.
  if (std::string why = unsafeReason(st, S_IFREG); !why.empty())
    return llvm::createStringError(std::errc::invalid_argument, "refusing lock file '%s': it %s",
                                   path.c_str(), why.c_str());
  // Another process: try once, then poll until the deadline (tryLockFile
  // sleeps between attempts), so that a stuck holder cannot hang us forever.
  std::error_code ec = llvm::sys::fs::tryLockFile(l.fd);
  if (ec == std::errc::no_lock_available) {
    l.waited = true;
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0)
      return timedOut();
    ec = llvm::sys::fs::tryLockFile(l.fd, left);
    if (ec == std::errc::no_lock_available)
      return timedOut();
  }
  if (ec)
    return llvm::createStringError(ec, "cannot lock '%s': %s", path.c_str(), ec.message().c_str());
  return std::move(l);
}

//===----------------------------------------------------------------------===//
// DiskCache
//===----------------------------------------------------------------------===//

void DiskCache::setWriteHookForTesting(void (*hook)(const char *)) { writeHook = hook; }

DiskCache::DiskCache(std::string root, runtime::LogHandler logHandler, Open open)
    : rootDir(root.empty() ? defaultCacheRoot() : std::move(root)), log(std::move(logHandler)) {
  while (rootDir.size() > 1 && rootDir.back() == '/')
    rootDir.pop_back();
  if (open == Open::ExistingOnly)
    return;
  if (rootDir.empty()) {
    degrade(State::Unusable, "no cache directory: none of MOEGEN_CACHE_DIR, XDG_CACHE_HOME and "
                             "HOME is set");
    return;
  }
  std::string dir = versionDir();
  if (std::error_code ec = createPrivateDirs(dir)) {
    if (llvm::sys::fs::is_directory(dir))
      degrade(State::ReadOnly, "cannot write '" + dir + "': " + ec.message());
    else
      degrade(State::Unusable, "cannot create '" + dir + "': " + ec.message());
    return;
  }
  if (CheckedFd d = openCacheDir(rootDir, dir); !d.ok()) {
    degrade(State::Unusable, "refusing the cache directory '" + d.where + "': it " + d.problem);
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
                      "kernel cache: entry '" + path + "' " + why +
                          "; it is not loaded and will be rebuilt");
}

DiskCache::LoadResult DiskCache::load(const CacheKey &key, llvm::StringRef chip,
                                      KernelBinary &out) {
  if (state() == State::Unusable)
    return LoadResult::Miss;
  std::string path = entryPath(key, chip);
  llvm::StringRef dir = llvm::sys::path::parent_path(path);
  CheckedFd d = openCacheDir(rootDir, dir);
  if (d.missing)
    return LoadResult::Miss;
  if (!d.ok()) {
    reportRejected(path, "in '" + d.where + "', which " + d.problem);
    return LoadResult::Rejected;
  }
  CheckedFd f = openChecked(d.fd, llvm::sys::path::filename(path).str(), path, S_IFREG);
  if (f.missing)
    return LoadResult::Miss;
  std::vector<uint8_t> bytes;
  if (f.ok() && !readAll(f.fd, bytes))
    f.problem = std::string("is unreadable (") + std::strerror(errno) + ")";
  if (!f.problem.empty()) {
    reportRejected(path, f.problem);
    return LoadResult::Rejected;
  }
  auto entry = decodeEntry(bytes, &key);
  if (!entry) {
    reportRejected(path, "is " + llvm::toString(entry.takeError()));
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
  if (std::error_code ec = createPrivateDirs(dir)) {
    if (isPermissionErrno(ec.value())) {
      degrade(State::ReadOnly, "cannot create '" + dir + "': " + ec.message());
      return llvm::Error::success();
    }
    return llvm::createStringError(ec, "kernel cache: cannot create '%s': %s", dir.str().c_str(),
                                   ec.message().c_str());
  }
  // Everything below happens relative to the checked directory.
  CheckedFd d = openCacheDir(rootDir, dir);
  if (!d.ok())
    return llvm::createStringError(std::errc::operation_not_permitted,
                                   "kernel cache: not writing '%s': '%s' %s", path.c_str(),
                                   d.where.c_str(), d.problem.c_str());
  std::vector<uint8_t> bytes = encodeEntry(key, kernel);
  // The temp file is created (O_EXCL, 0600) in the directory just checked:
  // every directory from the root down is this user's and writable by
  // nobody else, so the path cannot be redirected in between. TempFile also
  // removes it if the process dies of a signal it can catch.
  auto temp =
      llvm::sys::fs::TempFile::create(dir + "/." + key.hex() + ".%%%%%%%%%%%%%%%%.tmp",
                                      llvm::sys::fs::owner_read | llvm::sys::fs::owner_write);
  if (!temp) {
    std::error_code ec = llvm::errorToErrorCode(temp.takeError());
    if (isPermissionErrno(ec.value())) {
      degrade(State::ReadOnly, "cannot write in '" + dir + "': " + ec.message());
      return llvm::Error::success();
    }
    return llvm::createStringError(ec, "kernel cache: cannot create a temp file in '%s': %s",
                                   dir.str().c_str(), ec.message().c_str());
  }
  size_t half = bytes.size() / 2;
  bool ok = writeAll(temp->FD, bytes.data(), half);
  if (ok && writeHook)
    writeHook("partial");
  ok = ok && writeAll(temp->FD, bytes.data() + half, bytes.size() - half) && ::fsync(temp->FD) == 0;
  int savedErrno = errno;
  if (ok && writeHook)
    writeHook("written");
  if (!ok) {
    llvm::consumeError(temp->discard());
    errno = savedErrno;
    return errnoError("kernel cache: cannot publish '" + path + "'");
  }
  // keep() renames over the entry: readers see the old entry or the new one.
  if (llvm::Error e = temp->keep(path)) {
    std::error_code ec = llvm::errorToErrorCode(std::move(e));
    llvm::consumeError(temp->discard());
    return llvm::createStringError(ec, "kernel cache: cannot publish '%s': %s", path.c_str(),
                                   ec.message().c_str());
  }
  ::fsync(d.fd);
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
  if (std::error_code ec = createPrivateDirs(dir)) {
    if (isPermissionErrno(ec.value())) {
      degrade(State::ReadOnly, "cannot create '" + dir + "': " + ec.message());
      return FileLock();
    }
    return llvm::createStringError(ec, "kernel cache: cannot create '%s'", dir.str().c_str());
  }
  auto lock = FileLock::acquire(path, lockTimeoutMs());
  if (!lock) {
    std::error_code ec;
    std::string why;
    llvm::handleAllErrors(lock.takeError(), [&](const llvm::ErrorInfoBase &e) {
      ec = e.convertToErrorCode();
      why = e.message();
    });
    if (isPermissionErrno(ec.value())) {
      degrade(State::ReadOnly, "cannot create lock files in '" + dir + "': " + ec.message());
      return FileLock();
    }
    // A holder that never finishes, or a lock file that is not one, must not
    // block us: compile without the lock; the rename keeps the entry whole
    // either way.
    runtime::logMessage(log, runtime::LogLevel::Warning,
                        "kernel cache: " + why + "; compiling without it");
    return FileLock();
  }
  return lock;
}

/// Whether `name` is an entry's or a temp file's name.
static bool isEntryName(llvm::StringRef name, bool &isTemp) {
  isTemp = name.starts_with(".") && name.ends_with(".tmp");
  return isTemp || name.ends_with(".moeko");
}

/// One listed file: refused as unsafe, or decoded.
static EntryListing describeEntry(const std::string &path, bool isTemp) {
  EntryListing e;
  e.path = path;
  CheckedFd f = openChecked(AT_FDCWD, path, path, S_IFREG);
  std::vector<uint8_t> bytes;
  if (f.ok() && !readAll(f.fd, bytes))
    f.problem = std::string("is unreadable (") + std::strerror(errno) + ")";
  e.bytes = bytes.size();
  llvm::StringRef name = llvm::sys::path::filename(path);
  if (!f.problem.empty()) {
    e.problem = "refused: " + f.problem;
  } else if (isTemp) {
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
  return e;
}

llvm::Expected<std::vector<EntryListing>> DiskCache::list() const {
  std::string top = versionDir();
  CheckedFd d = openCacheDir(rootDir, top);
  if (d.missing)
    return llvm::createStringError(std::errc::no_such_file_or_directory, "'%s' does not exist",
                                   top.c_str());
  if (!d.ok())
    return llvm::createStringError(std::errc::permission_denied, "cannot use '%s': it %s",
                                   d.where.c_str(), d.problem.c_str());
  std::vector<EntryListing> out;
  std::error_code ec;
  llvm::sys::fs::recursive_directory_iterator it(top, ec, /*follow_symlinks=*/false), end;
  for (; it != end && !ec; it.increment(ec)) {
    bool isTemp;
    if (!isEntryName(llvm::sys::path::filename(it->path()), isTemp))
      continue;
    if (it->type() == llvm::sys::fs::file_type::directory_file)
      it.no_push();
    out.push_back(describeEntry(it->path(), isTemp));
  }
  if (ec)
    return llvm::createStringError(ec, "cannot read '%s': %s",
                                   (it == end ? top : it->path()).c_str(), ec.message().c_str());
  std::sort(out.begin(), out.end(),
            [](const EntryListing &a, const EntryListing &b) { return a.path < b.path; });
  return out;
}

llvm::Expected<size_t> DiskCache::clear() {
  std::vector<std::string> files;
  std::error_code ec;
  for (llvm::sys::fs::recursive_directory_iterator it(versionDir(), ec, false), end;
       it != end && !ec; it.increment(ec)) {
    llvm::StringRef name = llvm::sys::path::filename(it->path());
    bool isTemp;
    // Links, FIFOs and the like under an entry's name go too; directories stay.
    if (it->type() != llvm::sys::fs::file_type::directory_file &&
        (isEntryName(name, isTemp) || name.ends_with(".lock")))
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
