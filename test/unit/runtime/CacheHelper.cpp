//===- CacheHelper.cpp - A process that asks the runtime for kernels ------===//
//
// Used by the multi-process cache tests:
//   moegen-cache-helper --spec FILE --dir DIR [--kernels 0,1,2,3]
//                       [--kill-at partial|written] [--permission-bits]
// Layer i is the spec with topk = 16 >> i. Prints "compiles N" (layers),
// "kernels-compiled N", "kernels-per-layer N", "disk-hits N" (kernels),
// "rejected N", "disk-state S" and, per layer, "kernel I <hash of its
// kernels' code objects and bitcode>".
//
//===----------------------------------------------------------------------===//

#include "compiler/spec/DslParser.h"
#include "runtime/jit/Compiler.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/BLAKE3.h"
#include "llvm/Support/raw_ostream.h"

#include <csignal>
#include <cstring>
#include <linux/capability.h>
#include <sys/syscall.h>
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

/// Root passes permission checks through CAP_DAC_OVERRIDE and
/// CAP_DAC_READ_SEARCH; without them a read-only directory is read-only for
/// root too, and root keeps every file it can reach (no switch of user).
bool dropDacCapabilities() {
  __user_cap_header_struct header{_LINUX_CAPABILITY_VERSION_3, 0};
  __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3] = {};
  if (::syscall(SYS_capget, &header, data) != 0)
    return false;
  for (int cap : {CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH}) {
    data[CAP_TO_INDEX(cap)].effective &= ~CAP_TO_MASK(cap);
    data[CAP_TO_INDEX(cap)].permitted &= ~CAP_TO_MASK(cap);
  }
  return ::syscall(SYS_capset, &header, data) == 0;
}

} // namespace

int main(int argc, char **argv) {
  std::string specPath, dir, kernels = "0,1,2,3";
  bool permissionBits = false;
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
    else if (a == "--permission-bits")
      permissionBits = true;
    else
      return fail("unknown argument '" + a + "'");
  }
  if (permissionBits && ::geteuid() == 0 && !dropDacCapabilities())
    return fail("cannot drop CAP_DAC_OVERRIDE and CAP_DAC_READ_SEARCH");
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
