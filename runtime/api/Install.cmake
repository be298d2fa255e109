# The installed package: libmoegen_runtime.so (everything a host application
# needs, moegen's static libraries inside), the public headers under
# include/moegen with their in-tree paths, and lib/cmake/moegen so that
# find_package(moegen) gives moegen::runtime. Component: moegen_runtime.
include(CMakePackageConfigHelpers)
include(GNUInstallDirs)

add_library(moegen_runtime SHARED Exports.cpp)
add_library(moegen::runtime ALIAS moegen_runtime)
target_link_libraries(moegen_runtime
  PRIVATE "$<LINK_LIBRARY:WHOLE_ARCHIVE,MoegenRuntime>" MoegenNumerics
  PUBLIC LLVM)
target_compile_features(moegen_runtime INTERFACE cxx_std_20)
target_include_directories(moegen_runtime INTERFACE
  $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}/moegen>)
set_target_properties(moegen_runtime PROPERTIES
  EXPORT_NAME runtime
  VERSION ${PROJECT_VERSION}
  SOVERSION ${PROJECT_VERSION_MAJOR}.${PROJECT_VERSION_MINOR}
  # libMLIR.so is not on the default search path of Debian's llvm-22.
  INSTALL_RPATH "${LLVM_LIBRARY_DIR}")

install(TARGETS moegen_runtime EXPORT moegenTargets
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT moegen_runtime)

# Public headers, by their path in the tree (they include each other so).
set(moegen_public_headers
  compiler/spec/Spec.h compiler/spec/Expr.h compiler/spec/DslParser.h compiler/spec/TargetInfo.h
  runtime/api/Compiler.h runtime/api/MoeLayer.h runtime/api/Backends.h
  runtime/backend/Backend.h
  runtime/cache/CacheKey.h runtime/cache/DiskCache.h runtime/cache/EntryFormat.h
  runtime/cache/KernelBinary.h runtime/cache/KernelCache.h runtime/cache/Log.h
  runtime/numerics/Compare.h runtime/numerics/InputGen.h runtime/numerics/MxQuant.h
  runtime/numerics/Preshuffle.h runtime/numerics/Reference.h runtime/numerics/Sorting.h
  runtime/numerics/Tensor.h)
foreach(h ${moegen_public_headers})
  get_filename_component(dir ${h} DIRECTORY)
  install(FILES ${PROJECT_SOURCE_DIR}/${h}
    DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/moegen/${dir} COMPONENT moegen_runtime)
endforeach()

set(moegen_cmake_dir ${CMAKE_INSTALL_LIBDIR}/cmake/moegen)
install(EXPORT moegenTargets NAMESPACE moegen:: DESTINATION ${moegen_cmake_dir}
  COMPONENT moegen_runtime)
configure_package_config_file(${CMAKE_CURRENT_SOURCE_DIR}/moegenConfig.cmake.in
  ${CMAKE_CURRENT_BINARY_DIR}/moegenConfig.cmake INSTALL_DESTINATION ${moegen_cmake_dir})
write_basic_package_version_file(${CMAKE_CURRENT_BINARY_DIR}/moegenConfigVersion.cmake
  VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/moegenConfig.cmake
  ${CMAKE_CURRENT_BINARY_DIR}/moegenConfigVersion.cmake
  DESTINATION ${moegen_cmake_dir} COMPONENT moegen_runtime)
