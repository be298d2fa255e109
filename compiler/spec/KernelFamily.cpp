//===- KernelFamily.cpp - The kernel families a layer compiles to ---------===//

#include "compiler/spec/KernelFamily.h"

#include <array>

namespace moegen {
namespace {

struct FamilyInfo {
  KernelFamily family;
  llvm::StringLiteral name;
  StageId served;
};

constexpr std::array<FamilyInfo, kNumKernelFamilies> kFamilies = {{
    {KernelFamily::SortCount, "sort_count", StageId::Stage1},
    {KernelFamily::SortScan, "sort_scan", StageId::Stage1},
    {KernelFamily::Sort, "sort", StageId::Stage1},
    {KernelFamily::QuantInput, "quant_input", StageId::Stage1},
    {KernelFamily::Stage1, "stage1", StageId::Stage1},
    {KernelFamily::Finish, "finish", StageId::Stage1},
    {KernelFamily::QuantInter, "quant_inter", StageId::Stage2},
    {KernelFamily::Stage2, "stage2", StageId::Stage2},
    {KernelFamily::Reduce, "reduce", StageId::Stage2},
}};

constexpr bool indexedByFamily() {
  for (size_t i = 0; i < kFamilies.size(); ++i)
    if (static_cast<size_t>(kFamilies[i].family) != i)
      return false;
  return true;
}
static_assert(indexedByFamily(), "kFamilies must list the families in enum order");

constexpr std::array<KernelFamily, kNumKernelFamilies> kLaunchOrder = {
    KernelFamily::SortCount,  KernelFamily::SortScan, KernelFamily::Sort,
    KernelFamily::QuantInput, KernelFamily::Stage1,   KernelFamily::Finish,
    KernelFamily::QuantInter, KernelFamily::Stage2,   KernelFamily::Reduce};

} // namespace

llvm::ArrayRef<KernelFamily> allKernelFamilies() { return kLaunchOrder; }

llvm::StringRef toString(KernelFamily family) {
  return kFamilies[static_cast<size_t>(family)].name;
}

std::optional<KernelFamily> parseKernelFamily(llvm::StringRef name) {
  for (const FamilyInfo &f : kFamilies)
    if (f.name == name)
      return f.family;
  return std::nullopt;
}

llvm::Expected<std::vector<KernelFamily>> parseKernelFamilies(llvm::ArrayRef<std::string> names) {
  std::vector<KernelFamily> out;
  for (const std::string &name : names) {
    std::optional<KernelFamily> f = parseKernelFamily(name);
    if (!f) {
      std::string known;
      for (const FamilyInfo &k : kFamilies)
        known += (known.empty() ? "" : ", ") + k.name.str();
      return llvm::createStringError("unknown kernel family '" + name + "' (families: " + known +
                                     ")");
    }
    out.push_back(*f);
  }
  return out;
}

StageId servedStage(KernelFamily family) { return kFamilies[static_cast<size_t>(family)].served; }

} // namespace moegen
