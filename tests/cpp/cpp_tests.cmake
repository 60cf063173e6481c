# C++ tests. CPU tests run everywhere GoogleTest is installed; GPU tests exit 77 (reported as skipped) when no
# GPU is visible.
# Host cost of validate() + make_plan() per call (not a test: a benchmark that needs no GPU; docs/perf-log.md entry 59).
add_executable(bench_validate_plan ${CMAKE_CURRENT_LIST_DIR}/../../bench/host/validate_plan_bench.cpp)
target_link_libraries(bench_validate_plan PRIVATE flashseek_host)
# Each described call's launch plan on the host (scripts/plan_diff.py: which plans an experiment token changes).
add_executable(plan_probe ${CMAKE_CURRENT_LIST_DIR}/../../bench/host/plan_probe.cpp)
target_link_libraries(plan_probe PRIVATE flashseek_host)

find_package(GTest)
if(GTest_FOUND)
  include(${CMAKE_CURRENT_LIST_DIR}/validate_tests.cmake)
  add_executable(test_per_device ${CMAKE_CURRENT_LIST_DIR}/test_per_device.cpp)
  target_include_directories(test_per_device PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/src/host)
  target_link_libraries(test_per_device PRIVATE GTest::gtest_main)
  gtest_discover_tests(test_per_device)
  add_executable(test_split_weights ${CMAKE_CURRENT_LIST_DIR}/test_split_weights.cpp)
  target_link_libraries(test_split_weights PRIVATE GTest::gtest_main)
  gtest_discover_tests(test_split_weights)
  add_executable(test_plan ${CMAKE_CURRENT_LIST_DIR}/test_plan.cpp)
  target_link_libraries(test_plan PRIVATE flashseek_host GTest::gtest_main)
  target_include_directories(test_plan PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/src/host)
  gtest_discover_tests(test_plan)
  # The planner reads FLASHSEEK_EXPERIMENT once per process: rules behind a token get a run of their own.
  function(plan_test_under name filter experiment)
    add_test(NAME plan_under_${name} COMMAND test_plan --gtest_filter=${filter})
    set_tests_properties(plan_under_${name} PROPERTIES ENVIRONMENT FLASHSEEK_EXPERIMENT=${experiment})
  endfunction()
  plan_test_under(no_d64_cta2 PlanUnderExperiment.* no-d64-cta2)
  plan_test_under(no_fp8_m192 PlanUnderNoFp8M192.* no-fp8-m192)
  plan_test_under(no_d96_m192_persist PlanUnderNoD96M192Persist.* no-d96-m192,no-d96-persist)
  plan_test_under(d96 PlanUnderD96.* d96)
  plan_test_under(d64_window_tile PlanUnderD64WindowTile.* d64-window-tile)
  plan_test_under(no_persist192 PlanUnderNoPersist192.* no-persist192)
  plan_test_under(persist192_any PlanUnderPersist192Any.* persist192-any)
  plan_test_under(split_rows_max Plan.VarlenCallSplitsByItsRealTiles split-rows-max)
  plan_test_under(persist192_strict PlanUnderPersist192Strict.* persist192-strict)
  plan_test_under(fp8_headpack PlanUnderFp8HeadPack.* fp8-headpack)
  plan_test_under(fp8_headpack2 PlanUnderFp8HeadPack2.* fp8-headpack2)
  plan_test_under(keys_as_m PlanUnderKeysAsM.* tile=5)
  plan_test_under(no_fp8_keys_as_m PlanUnderNoFp8KeysAsM.* no-fp8-keys-as-m)
  plan_test_under(no_kam2 PlanUnderNoKam2.* no-kam2)
  plan_test_under(no_fp8_kam2 PlanUnderNoFp8Kam2.* no-fp8-kam2)
  plan_test_under(kam2_split2 PlanUnderKam2Split2.* kam2-split2)
  plan_test_under(no_kam2_splits PlanUnderNoKam2Splits.*:Plan.KeysAsMTileWhereTheTableTileWouldRun no-kam2-splits)
  plan_test_under(no_kam4 PlanUnderNoKam4.* no-kam4)
  plan_test_under(splits16 PlanUnderForcedSplits.* splits=16)
  plan_test_under(cluster_combine PlanUnderClusterCombine.* cluster-combine)
  plan_test_under(keys_as_m_ctas PlanUnderKeysAsMCtas.* keys-as-m-ctas=64)
else()
  message(STATUS "GoogleTest not found: the C++ CPU tests are not built here")
endif()

# One executable per primitive so that a failure names the primitive, not the kernel.
foreach(prim wgmma_ss wgmma_rs wgmma_fp8 mbarrier_pipeline swizzle_layout setmaxnreg tma_load)
  add_executable(test_prim_${prim} ${CMAKE_CURRENT_LIST_DIR}/../gpu_prims/test_${prim}.cu)
  target_include_directories(test_prim_${prim} PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/src)
  target_compile_options(test_prim_${prim} PRIVATE ${FLASHSEEK_CUDA_FLAGS})
  target_link_libraries(test_prim_${prim} PRIVATE CUDA::cudart)
  add_test(NAME gpu_prim_${prim} COMMAND test_prim_${prim})
  set_tests_properties(gpu_prim_${prim} PROPERTIES SKIP_RETURN_CODE 77 LABELS gpu)
endforeach()

# The SASS check: every forward kernel must run on the tensor cores (HGMMA), without local memory.
find_package(Python3 COMPONENTS Interpreter)
if(Python3_FOUND)
  add_test(NAME sass_check
    COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/scripts/check_sass.py --min-kernels 20
            $<TARGET_FILE:flashseek>)
  set_tests_properties(sass_check PROPERTIES SKIP_RETURN_CODE 77)
endif()

# Packaging: the installed CMake package is usable from another project.
add_test(NAME packaging_find_package
  COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/tests/packaging/check_find_package.sh ${CMAKE_BINARY_DIR})
