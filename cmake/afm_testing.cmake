# Test helpers shared by tests/*/CMakeLists.txt.
find_package(GTest REQUIRED)
include(GoogleTest)

# afm_test_binaries: every GoogleTest binary (the fuzz targets too, when AFM_FUZZ is on), and
# nothing else. The instrumented tree builds only this: its tests run the binaries themselves,
# while the CLI, benchmarks and examples are exercised by the Python tests of the Release tree.
add_custom_target(afm_test_binaries)

# afm_add_gtest(<name> SOURCES a.cpp ... LIBS afm_x ...): one GoogleTest binary, its tests
# registered with CTest one by one. Tests run from the source root so fixture paths are stable.
function(afm_add_gtest name)
  cmake_parse_arguments(ARG "" "" "SOURCES;LIBS" ${ARGN})
  add_executable(${name} ${ARG_SOURCES})
  add_dependencies(afm_test_binaries ${name})
  target_link_libraries(${name} PRIVATE ${ARG_LIBS} GTest::gtest_main Threads::Threads)
  target_include_directories(${name} PRIVATE ${CMAKE_SOURCE_DIR}/src ${CMAKE_SOURCE_DIR}/tests)
  gtest_discover_tests(${name} WORKING_DIRECTORY ${CMAKE_SOURCE_DIR}
                       PROPERTIES ENVIRONMENT "AFM_SOURCE_DIR=${CMAKE_SOURCE_DIR}"
                       DISCOVERY_TIMEOUT 60)
endfunction()

# afm_add_python_test(<name> SCRIPT path.py [ARGS ...]): runs an oracle test in the project
# .venv with AFM_BIN pointing at the afm CLI. Labelled "python" so it can be selected.
# COST 20 starts them before the GoogleTest cases when CTest has no timings yet (a fresh
# clone): they are the long tests (30-170 s each against a second or less), and started last
# they left one core idle at the end of the Release tests.
function(afm_add_python_test name)
  cmake_parse_arguments(ARG "" "SCRIPT" "ARGS" ${ARGN})
  add_test(NAME ${name} COMMAND ${AFM_PYTHON} ${CMAKE_SOURCE_DIR}/${ARG_SCRIPT} ${ARG_ARGS}
           WORKING_DIRECTORY ${CMAKE_SOURCE_DIR})
  set_tests_properties(${name} PROPERTIES
    ENVIRONMENT "AFM_BIN=$<TARGET_FILE:afm>;AFM_SOURCE_DIR=${CMAKE_SOURCE_DIR};AFM_BUILD_DIR=${CMAKE_BINARY_DIR}"
    LABELS python TIMEOUT 600 COST 20)
endfunction()
