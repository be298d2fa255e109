//===- DiskCache.h - The on-disk kernel cache -------------------*- C++ -*-===//
//
// Layout: <root>/v<format>/<chip>/<first two hex digits>/<key>.moeko, one
// file per kernel (EntryFormat.h), and <unit key>.lock beside them.
//
// - Publishing: the entry is written to an llvm::sys::fs::TempFile
//   ".<key>.<random>.tmp" in the entry's own directory, fsync'ed, kept
//   (renamed) over the final name, and the directory is fsync'ed. Readers
//   need no lock: they see a whole entry or none. A writer killed half-way
//   leaves at most a temp file, never an entry.
// - Single flight across processes: compiling a unit holds the lock of the
//   unit's lock file (llvm::sys::fs::tryLockFile, a POSIX record lock), and
//   threads of one process take turns on the path first; whoever gets it
//   second finds the entries written. The lock is advisory and may be a
//   no-op on network file systems: put the cache on a local disk.
// - A corrupt, truncated or foreign-version entry is reported and reported
//   as missing, so the caller rebuilds it (the rebuild renames over it).
// - A missing directory that cannot be created, or a read-only one, makes
//   the cache read-only or unusable with one warning: kernels then live in
//   memory only.
// - Ownership: directories moegen creates are 0700, entries and lock files
//   0600. A cache directory (the root and every directory under it) that is
//   not a directory owned by this user, or that group or others may write,
//   is refused with one warning naming it, its owner or mode (the cache is
//   then unusable). An entry is opened without following a symbolic link or
//   blocking on a FIFO and checked on the open descriptor: anything but a
//   regular file of this user that only this user may write is reported and
//   rebuilt, never loaded.
//
//===----------------------------------------------------------------------===//
#ifndef MOEGEN_RUNTIME_CACHE_DISKCACHE_H
#define MOEGEN_RUNTIME_CACHE_DISKCACHE_H

#include "runtime/cache/CacheKey.h"
#include "runtime/cache/EntryFormat.h"
#include "runtime/cache/KernelBinary.h"
#include "runtime/cache/Log.h"

#include "llvm/Support/Error.h"

#include <atomic>
#include <functional>
#include <mutex>
#include <string>
#include <vector>

namespace moegen::cache {

/// $MOEGEN_CACHE_DIR, else llvm::sys::path::cache_directory()/moegen:
/// $XDG_CACHE_HOME/moegen, else <home>/.cache/moegen (home: $HOME, else the
/// user's passwd entry). An empty or relative $XDG_CACHE_HOME is ignored,
/// as the XDG spec says. "" when no absolute directory results.
std::string defaultCacheRoot();

/// An exclusive lock on a file, held until destruction (or release()):
/// across processes through llvm::sys::fs::tryLockFile, and across threads
/// of this process by path (a record lock alone does not exclude them).
class FileLock {
public:
  FileLock() = default;
  FileLock(FileLock &&o) noexcept : fd(o.fd), waited(o.waited), path(std::move(o.path)) {
    o.fd = -1;
    o.path.clear();
  }
  FileLock &operator=(FileLock &&o) noexcept;
  ~FileLock() { release(); }
  void release();
  bool held() const { return fd >= 0; }
  /// Whether acquiring it had to wait for another holder.
  bool hadToWait() const { return waited; }

  /// Blocks until the lock on `path` (created if missing) is held, or
  /// `timeoutMs` passed (then an error).
  static llvm::Expected<FileLock> acquire(const std::string &path, int64_t timeoutMs);

private:
  int fd = -1;
  bool waited = false;
  std::string path; // set while this object holds the in-process turn
};

/// One entry as `moegen cache ls` shows it.
struct EntryListing {
  std::string path;
  uint64_t bytes = 0;
  bool valid = false;
  std::string problem; // when !valid
  KernelMeta meta;     // when valid
};

class DiskCache {
public:
  enum class State { Writable, ReadOnly, Unusable };
  enum class LoadResult { Hit, Miss, Rejected };
  /// ExistingOnly creates nothing and checks nothing up front: for list()
  /// and clear() of a cache that may not exist.
  enum class Open { CreateIfMissing, ExistingOnly };

  /// `root` "" means defaultCacheRoot().
  DiskCache(std::string root, runtime::LogHandler log, Open open = Open::CreateIfMissing);

  llvm::StringRef root() const { return rootDir; }
  /// The directory of this format version: <root>/v<N>.
  std::string versionDir() const;
  State state() const { return currentState.load(); }

  std::string entryPath(const CacheKey &key, llvm::StringRef chip) const;
  std::string lockPath(const CacheKey &unit, llvm::StringRef chip) const;

  /// Reads and checks an entry. A bad entry is reported (once per path and
  /// process) and answered Rejected, never returned.
  LoadResult load(const CacheKey &key, llvm::StringRef chip, KernelBinary &out);

  /// Publishes an entry atomically. A permission or read-only failure turns
  /// the cache read-only (one warning) and is not an error.
  llvm::Error store(const CacheKey &key, llvm::StringRef chip, const KernelBinary &kernel);

  /// Removes the temp files of unfinished writes of `key`. Call it only
  /// while holding the lock of the key's unit: then no live writer owns them.
  void removeStaleTemps(const CacheKey &key, llvm::StringRef chip);

  /// The unit's lock; an empty lock when the cache is not writable.
  llvm::Expected<FileLock> lockUnit(const CacheKey &unit, llvm::StringRef chip);

  /// Every entry and stray temp file under versionDir(), refused ones
  /// (links, FIFOs, foreign or shared-writable files) as invalid. An error
  /// when versionDir() does not exist (no_such_file_or_directory), cannot be
  /// read, or is refused.
  llvm::Expected<std::vector<EntryListing>> list() const;
  /// Removes entries, temp files and lock files; returns how many files.
  llvm::Expected<size_t> clear();

  /// Test hook: called with "partial" after half of an entry is written to
  /// its temp file and with "written" after the fsync, before the rename.
  static void setWriteHookForTesting(void (*hook)(const char *stage));

private:
  void degrade(State to, const llvm::Twine &why);
  void reportRejected(const std::string &path, llvm::StringRef why);

  std::string rootDir;
  runtime::LogHandler log;
  std::atomic<State> currentState{State::Writable};
  std::mutex reportMutex;
  std::vector<std::string> reported;
};

} // namespace moegen::cache

#endif // MOEGEN_RUNTIME_CACHE_DISKCACHE_H
