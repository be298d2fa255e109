# The installed package: the shared libraries below, the public headers under
# include/moegen with their in-tree paths, and lib/cmake/moegen so that
# find_package(moegen) gives moegen::runtime, moegen::jit and
# moegen::reference. Component: moegen_runtime.
include(CMakePackageConfigHelpers)
include(GNUInstallDirs)

# One shared library per layer, each made of moegen's static libraries linked
# whole (SharedLibrary.cpp): moegen::runtime (ahead of time: prefilled
# cache, MoeLayer, backends, input formats; no MLIR), moegen::jit (the same
# and the compiler: an application links one of the two) and
# moegen::reference (the reference layer and comparisons, for checks).
function(moegen_add_shared_library name export_name)
  cmake_parse_arguments(ARG "" "" "WHOLE;LIBS" ${ARGN})
  add_library(${name} SHARED ${CMAKE_CURRENT_LIST_DIR}/SharedLibrary.cpp)
  add_library(moegen::${export_name} ALIAS ${name})
  # Raw flags: CMake refuses a library both whole and as an ordinary
  # dependency, and the parts depend on each other.
  set(whole)
  foreach(lib ${ARG_WHOLE})
    list(APPEND whole $<TARGET_FILE:${lib}>)
  endforeach()
  add_dependencies(${name} ${ARG_WHOLE})
  target_link_libraries(${name} PRIVATE "-Wl,--whole-archive" ${whole} "-Wl,--no-whole-archive"
    ${ARG_WHOLE} ${ARG_LIBS} PUBLIC LLVM)
  target_compile_features(${name} INTERFACE cxx_std_20)
  target_include_directories(${name} INTERFACE
    $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}/moegen>)
  set_target_properties(${name} PROPERTIES
    EXPORT_NAME ${export_name}
    VERSION ${PROJECT_VERSION}
    SOVERSION ${PROJECT_VERSION_MAJOR}.${PROJECT_VERSION_MINOR}
    # libLLVM.so and libMLIR.so are not on the default search path of Debian's llvm-22.
    INSTALL_RPATH "${LLVM_LIBRARY_DIR}")
endfunction()

set(moegen_runtime_parts MoegenRuntime MoegenFormats MoegenSpec MoegenTemplateRules MoegenCache
    MoegenDispatch MoegenBackend MoegenBackendEmu MoegenBackendHip MoegenBackendCuda)
moegen_add_shared_library(moegen_runtime runtime WHOLE ${moegen_runtime_parts})
moegen_add_shared_library(moegen_jit jit WHOLE MoegenJit ${moegen_runtime_parts})
moegen_add_shared_library(moegen_reference reference WHOLE MoegenReference LIBS MoegenFormats)

install(TARGETS moegen_runtime moegen_jit moegen_reference EXPORT moegenTargets
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT moegen_runtime)

# Public headers, by their path in the tree (they include each other so).
set(moegen_public_headers
  compiler/spec/Spec.h compiler/spec/Expr.h compiler/spec/DslParser.h compiler/spec/TargetInfo.h
  compiler/spec/KernelFamily.h
  runtime/api/KernelSource.h runtime/api/MoeLayer.h runtime/api/Backends.h runtime/jit/Compiler.h
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
configure_package_config_file(${CMAKE_CURRENT_LIST_DIR}/moegenConfig.cmake.in
  ${CMAKE_CURRENT_BINARY_DIR}/moegenConfig.cmake INSTALL_DESTINATION ${moegen_cmake_dir})
write_basic_package_version_file(${CMAKE_CURRENT_BINARY_DIR}/moegenConfigVersion.cmake
  VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/moegenConfig.cmake
  ${CMAKE_CURRENT_BINARY_DIR}/moegenConfigVersion.cmake
  DESTINATION ${moegen_cmake_dir} COMPONENT moegen_runtime)
