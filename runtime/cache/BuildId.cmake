# Writes the moegen build id: the project version plus a
# SHA-256 over the compiler's sources (cmake -P BuildId.cmake with
# -DVERSION= -DROOT=<source root> -DLIST=<file listing the sources> -DOUT=<header>). The header is
# rewritten only when the id changes, so unrelated edits rebuild nothing.
file(STRINGS "${LIST}" sources)
set(all "")
foreach(src IN LISTS sources)
  if(EXISTS "${src}")
    file(SHA256 "${src}" h)
    file(RELATIVE_PATH rel "${ROOT}" "${src}")
    string(APPEND all "${rel}:${h}\n")
  endif()
endforeach()
string(SHA256 digest "${all}")
string(SUBSTRING "${digest}" 0 16 short)
set(text "#define MOEGEN_BUILD_ID \"${VERSION}+${short}\"\n")
if(EXISTS "${OUT}")
  file(READ "${OUT}" old)
  if(old STREQUAL text)
    return()
  endif()
endif()
file(WRITE "${OUT}" "${text}")
