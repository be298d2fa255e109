//===- CacheHelper.cpp - A process that asks the runtime for kernels ------===//
//
// Used by the multi-process cache tests:
//   moegen-cache-helper --spec FILE --dir DIR [--kernels 0,1,2,3]
//                       [--kill-at partial|written] [--as-nobody]
// Layer i is the spec with topk = 16 >> i. Prints "compiles N" (layers),
// "kernels-compiled N", "kernels-per-layer N", "disk-hits N" (kernels),
// "rejected N", "disk-state S" and, per layer, "kernel I <hash of its
// kernels' code objects and bitcode>".
//
//===----------------------------------------------------------------------===//

#include "compiler/spec/DslParser.h"
#include "runtime/api/Compiler.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/BLAKE3.h"
#include "llvm/Support/raw_ostream.h"

#include <csignal>
#include <cstring>
#include <pwd.h>
#include <unistd.h>

using namespace moegen;

namespace {

const char *killAt = nullptr;

void killHook(const char *stage) {
  if (killAt && std::strcmp(stage, killAt) == 0)
    ::raise(SIGKILL);
}

int fail(const llvm::Twine &msg) {
  llvm::errs() << "moegen-cache-helper: " << msg << "\n";
  return 1;
}

} // namespace

int main(int argc, char **argv) {
  std::string specPath, dir, kernels = "0,1,2,3";
  bool asNobody = false;
  for (int i = 1; i < argc; ++i) {
    llvm::StringRef a = argv[i];
    auto next = [&]() -> const char * { return i + 1 < argc ? argv[++i] : ""; };
    if (a == "--spec")
      specPath = next();
    else if (a == "--dir")
      dir = next();
    else if (a == "--kernels")
      kernels = next();
    else if (a == "--kill-at")
      killAt = next();
    else if (a == "--as-nobody")
      asNobody = true;
    else
      return fail("unknown argument '" + a + "'");
  }
  if (asNobody && ::geteuid() == 0) {
    // Root ignores permission bits: drop to an ordinary user so that a
    // read-only directory really is read-only.
    struct passwd *pw = ::getpwnam("nobody");
    uid_t uid = pw ? pw->pw_uid : 65534;
    gid_t gid = pw ? pw->pw_gid : 65534;
    if (::setgid(gid) != 0 || ::setuid(uid) != 0)
      return fail("cannot drop to user nobody");
  }
  if (killAt)
    cache::DiskCache::setWriteHookForTesting(killHook);
  auto base = parseMoeSpecFile(specPath);
  if (!base)
    return fail(llvm::toString(base.takeError()));

  runtime::CompilerOptions options;
  options.cacheDir = dir;
  runtime::Compiler jit(options);
  llvm::SmallVector<llvm::StringRef> ids;
  llvm::StringRef(kernels).split(ids, ',');
  std::string out;
  size_t perUnit = 0;
  for (llvm::StringRef id : ids) {
    unsigned i;
    if (id.getAsInteger(10, i) || i > 3)
      return fail("bad kernel index '" + id + "'");
    MoeSpec spec = *base;
    spec.problem.topk = 16 >> i;
    auto set = jit.getKernels(spec, runtime::Target());
    if (!set)
      return fail(llvm::toString(set.takeError()));
    llvm::BLAKE3 h;
    for (const auto &k : (*set)->kernels) {
      h.update(k->meta.symbol);
      h.update(k->hsaco);
      h.update(k->bitcode);
    }
    perUnit = (*set)->kernels.size();
    out += "kernel " + id.str() + " " + llvm::toHex(h.final(), true) + "\n";
  }
  runtime::CacheStats s = jit.stats();
  const char *states[] = {"writable", "read-only", "unusable"};
  cache::DiskCache *disk = jit.kernelCache().disk();
  llvm::outs() << "compiles " << s.compiles << "\nkernels-compiled " << s.kernelsCompiled
               << "\nkernels-per-layer " << perUnit << "\ndisk-hits " << s.diskHits << "\nrejected "
               << s.rejectedEntries << "\ndisk-state "
               << (disk ? states[int(disk->state())] : "none") << "\n"
               << out;
  return 0;
}
