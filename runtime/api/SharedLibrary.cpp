//===- SharedLibrary.cpp - Source of the installed shared libraries -------===//
//
// libmoegen_runtime.so, libmoegen_jit.so and libmoegen_reference.so are made
// of moegen's static libraries, linked whole (Install.cmake), so that every
// public function is in them whether or not moegen itself calls it. CMake
// needs one source per library: this one.
//
//===----------------------------------------------------------------------===//
