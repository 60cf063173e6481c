# CPU tests of the host argument validation (no GPU needed). Included from the top-level CMakeLists, which defines
# the static library flashseek_host (src/host/*.cpp) and calls enable_testing().
include(GoogleTest)
add_executable(test_validate ${CMAKE_CURRENT_LIST_DIR}/test_validate.cpp)
target_include_directories(test_validate PRIVATE ${CMAKE_CURRENT_LIST_DIR}/../../include)
target_link_libraries(test_validate PRIVATE flashseek_host GTest::gtest_main)
gtest_discover_tests(test_validate)
