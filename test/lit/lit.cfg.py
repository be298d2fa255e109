import os

import lit.formats
from lit.llvm import llvm_config

config.name = "moegen"
config.test_format = lit.formats.ShTest(not llvm_config.use_lit_shell)
config.suffixes = [".mlir", ".moe", ".test"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.moegen_obj_root, "test", "lit")
config.excludes = ["CMakeLists.txt", "lit.cfg.py", "lit.site.cfg.py", "Inputs"]

llvm_config.with_system_environment(["HOME", "TMP", "TEMP"])
llvm_config.use_default_substitutions()
llvm_config.add_tool_substitutions(
    ["moegen", "moegen-opt", "moegen-cuda-check", "moegen-layer-check", "moegen-test-prefill",
     "moegen-tune-device"],
    [config.moegen_tools_dir],
)
llvm_config.add_tool_substitutions(["split-file", "not", "count"], [config.llvm_tools_dir])
config.substitutions.append(("%examples", os.path.join(config.moegen_src_root, "examples")))
config.substitutions.append(("%inputs", os.path.join(config.test_source_root, "Inputs")))
# The stand-in libcuda (test/unit/cuda/FakeCuda.cpp): runs no kernel.
config.substitutions.append(
    ("%fakecuda", os.path.join(config.moegen_obj_root, "test", "unit", "cuda", "libmoegen_fake_cuda.so")))
# Scripts of tools/layer-check that drive the device tools.
config.substitutions.append(("%layer_check_scripts", os.path.join(config.moegen_src_root, "tools", "layer-check")))
# CUDA's assembler, where CMake found one.
if config.ptxas and os.path.exists(config.ptxas):
    config.available_features.add("ptxas")
    config.substitutions.append(("%ptxas", config.ptxas))
