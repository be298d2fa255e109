//===- DeviceChoice.h - Choosing the device a backend runs on ---*- C++ -*-===//
//
// The hip and cuda backends run on one device of those their driver sees: the
// one asked for by index, or else the first that runs the chip asked for.
// chooseDevice makes that choice from what the backend learns of each device,
// and when none will do, its error lists every device, one a line, so that
// the user sees what the driver saw.
//
//===----------------------------------------------------------------------===//
#ifndef MOEGEN_RUNTIME_BACKEND_DEVICECHOICE_H
#define MOEGEN_RUNTIME_BACKEND_DEVICECHOICE_H

#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <string>

namespace moegen::runtime {

/// What a backend learns of one device while choosing.
struct DeviceInfo {
  std::string Description; // for the error's list: "gfx950:sramecc+:xnack-"
  bool Fits = false;       // it runs the chip asked for
};

/// The device a backend asks for, and the words of chooseDevice's errors.
struct DeviceQuery {
  llvm::StringRef Backend; // prefixes the errors: "cuda"
  llvm::StringRef Driver;  // "CUDA": "CUDA device(s)", "CUDA_VISIBLE_DEVICES"
  llvm::StringRef Library; // the driver library's path
  int Requested = -1;      // a device index, or -1 for the first that fits
  std::string NoneFits;    // with Requested -1: "no device runs sm_90a"
  std::string NotFitting;  // else: "device 1 cannot run sm_90a"
};

/// The index of the device `query` asks for among the `count` the driver
/// sees. `countError` is the driver's error when it could not count them
/// (empty when it could); `describe` tells of the device at an index.
llvm::Expected<int> chooseDevice(const DeviceQuery &query, int count, llvm::StringRef countError,
                                 llvm::function_ref<llvm::Expected<DeviceInfo>(int)> describe);

} // namespace moegen::runtime

#endif // MOEGEN_RUNTIME_BACKEND_DEVICECHOICE_H
