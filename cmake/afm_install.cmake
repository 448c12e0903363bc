# The installable library: `cmake --install build [--prefix P]` puts
#   lib/libafm.so               the framework (include/afm/afm.h) with the engine inside it
#   include/afm/*.h             the public headers (they include <nlohmann/json.hpp>)
#   lib/cmake/afm/              find_package(afm CONFIG) -> target afm::afm
#   lib/pkgconfig/afm.pc        pkg-config --cflags --libs afm
#   bin/afm (and bin/afm-train when the trainer is built)
#   share/afm/models/           the shipped default model, which default_model() finds there
#   share/afm/eval, share/afm/bench   `afm eval`'s suite runner, generator and lm-eval tasks
# Only the public API's dependency (nlohmann_json, header-only) reaches a consumer; the
# engine's own libraries are linked into libafm.so (see docs/library.md).
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

# Every object of the framework archive (its symbols are the API; the archive also holds
# afm_model's objects, an OBJECT library whose architectures register themselves), and
# whatever they use from the engine's other static libraries.
# (CMake needs a source of the library's own: an empty one.)
file(WRITE ${CMAKE_BINARY_DIR}/install/libafm.cpp
     "// libafm.so is the framework archive linked whole: cmake/afm_install.cmake.\n")
add_library(afm_shared SHARED ${CMAKE_BINARY_DIR}/install/libafm.cpp)
target_link_libraries(afm_shared PRIVATE "$<LINK_LIBRARY:WHOLE_ARCHIVE,afm_framework>")
# Every symbol resolved at link time (sanitizer builds leave their runtime's symbols to the
# program, so they cannot ask for it).
if(NOT AFM_SANITIZE AND NOT AFM_FUZZ)
  target_link_options(afm_shared PRIVATE "LINKER:--no-undefined")
endif()
set_target_properties(afm_shared PROPERTIES
  OUTPUT_NAME afm
  EXPORT_NAME afm
  VERSION ${PROJECT_VERSION}
  SOVERSION ${PROJECT_VERSION_MAJOR}.${PROJECT_VERSION_MINOR}
  LIBRARY_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/lib)
target_include_directories(afm_shared INTERFACE
  $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}/include>
  $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
target_link_libraries(afm_shared INTERFACE nlohmann_json::nlohmann_json)
target_compile_features(afm_shared INTERFACE cxx_std_20)
add_library(afm::afm ALIAS afm_shared)

install(TARGETS afm_shared EXPORT afmTargets
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/afm DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(EXPORT afmTargets NAMESPACE afm:: DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/afm)
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/install/afmConfig.cmake.in
  ${CMAKE_BINARY_DIR}/install/afmConfig.cmake
  INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/afm)
write_basic_package_version_file(${CMAKE_BINARY_DIR}/install/afmConfigVersion.cmake
  VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_BINARY_DIR}/install/afmConfig.cmake
              ${CMAKE_BINARY_DIR}/install/afmConfigVersion.cmake
        DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/afm)
# pkg-config paths are relative to the file's own folder, so it stays right wherever --prefix
# puts it (and whatever depth the library folder has: lib, lib/x86_64-linux-gnu).
file(RELATIVE_PATH AFM_PC_TO_PREFIX "/p/${CMAKE_INSTALL_LIBDIR}/pkgconfig" "/p")
configure_file(${PROJECT_SOURCE_DIR}/cmake/install/afm.pc.in ${CMAKE_BINARY_DIR}/install/afm.pc @ONLY)
install(FILES ${CMAKE_BINARY_DIR}/install/afm.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)

install(TARGETS afm RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
if(TARGET afm-train)
  install(TARGETS afm-train RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
endif()
install(FILES ${PROJECT_SOURCE_DIR}/models/afm-device-21m.gguf
              ${PROJECT_SOURCE_DIR}/models/afm-device-21m-draft.gguf
        DESTINATION ${CMAKE_INSTALL_DATADIR}/afm/models)
# `afm eval`'s suites (tools/afm/cmd_eval.cpp finds the runner at bin/../share/afm/eval/): the
# runner and lm-eval task definitions under share/afm/eval, the evaluation generator and the
# lm-eval driver under share/afm/bench, the layout of the checkout.
install(FILES ${PROJECT_SOURCE_DIR}/eval/afm_eval.py DESTINATION ${CMAKE_INSTALL_DATADIR}/afm/eval)
install(DIRECTORY ${PROJECT_SOURCE_DIR}/eval/lm_eval DESTINATION ${CMAKE_INSTALL_DATADIR}/afm/eval
        PATTERN "__pycache__" EXCLUDE)
install(FILES ${PROJECT_SOURCE_DIR}/bench/task_eval.py ${PROJECT_SOURCE_DIR}/bench/lm_eval_suite.py
        DESTINATION ${CMAKE_INSTALL_DATADIR}/afm/bench)
