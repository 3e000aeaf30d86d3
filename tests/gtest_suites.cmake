# Included by ctest (a TEST_INCLUDE_FILES entry written by tests/CMakeLists.txt, which sets `exe`, `label`,
# `cost` and `dir`): one test per GoogleTest suite of `exe`, running that suite's tests in one process. A
# process of a test binary costs start-up before its first test (0.8 s under ASan; 0.4 s while cuBLAS was
# linked), which one process per test paid 557 times over for the unit tests. A failing suite's output
# (ctest --output-on-failure, on in the presets) names its failing tests.
execute_process(COMMAND "${exe}" --gtest_list_tests OUTPUT_VARIABLE listing RESULT_VARIABLE rc TIMEOUT 60)
if(NOT rc EQUAL 0)
  # Listing failed (not built, or it crashes): a test that runs the listing shows the failure in ctest.
  add_test("${label}: --gtest_list_tests" "${exe}" --gtest_list_tests)
  set_tests_properties("${label}: --gtest_list_tests" PROPERTIES LABELS "${label}" WORKING_DIRECTORY "${dir}")
  return()
endif()
string(REPLACE "\n" ";" lines "${listing}")
foreach(line IN LISTS lines)
  # A suite's line is not indented and ends its name with '.' (typed suites add "  # TypeParam = ...").
  if(line MATCHES "^([A-Za-z0-9_/]+)\\.( |$)")
    set(suite "${CMAKE_MATCH_1}")
    add_test("${suite}.*" "${exe}" "--gtest_filter=${suite}.*" --gtest_brief=1)
    set_tests_properties("${suite}.*" PROPERTIES LABELS "${label}" COST "${cost}" WORKING_DIRECTORY "${dir}")
  endif()
endforeach()
