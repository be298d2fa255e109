//===- DeviceChoice.cpp - Choosing the device a backend runs on -----------===//

#include "runtime/backend/DeviceChoice.h"

namespace moegen::runtime {

llvm::Expected<int> chooseDevice(const DeviceQuery &query, int count, llvm::StringRef countError,
                                 llvm::function_ref<llvm::Expected<DeviceInfo>(int)> describe) {
  if (!countError.empty() || count == 0)
    return llvm::createStringError(
        llvm::inconvertibleErrorCode(), "%s backend: no %s device visible to '%s'%s",
        query.Backend.str().c_str(), query.Driver.str().c_str(), query.Library.str().c_str(),
        (countError.empty() ? " (" + query.Driver + "_VISIBLE_DEVICES?)" : ": " + countError)
            .str()
            .c_str());
  std::string seen;
  int chosen = -1;
  for (int d = 0; d < count; ++d) {
    llvm::Expected<DeviceInfo> info = describe(d);
    if (!info)
      return info.takeError();
    seen += "\n  device " + std::to_string(d) + ": " + info->Description;
    if (query.Requested >= 0 ? d == query.Requested && info->Fits : info->Fits && chosen < 0)
      chosen = d;
  }
  if (chosen >= 0)
    return chosen;
  const std::string &which = query.Requested >= 0 ? query.NotFitting : query.NoneFits;
  return llvm::createStringError(
      llvm::inconvertibleErrorCode(), "%s backend: %s among the %d %s device(s) of '%s':%s",
      query.Backend.str().c_str(), which.c_str(), count, query.Driver.str().c_str(),
      query.Library.str().c_str(), seen.c_str());
}

} // namespace moegen::runtime
