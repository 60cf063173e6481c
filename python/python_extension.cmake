# The Python extension flashseek._C: the binding (python/flashseek/csrc/binding.cpp) linked with the library.
# Built against the torch of the interpreter that builds it; torch's libraries are already loaded when
# flashseek imports the module (flashseek.api imports torch first), so no rpath is needed.
find_package(Python3 REQUIRED COMPONENTS Interpreter Development.Module)
execute_process(
  COMMAND ${Python3_EXECUTABLE} -c
    "import torch; from torch.utils import cpp_extension as c; print(';'.join(c.include_paths())); print(';'.join(c.library_paths())); print(int(torch._C._GLIBCXX_USE_CXX11_ABI))"
  OUTPUT_VARIABLE FLASHSEEK_TORCH_INFO
  RESULT_VARIABLE FLASHSEEK_TORCH_RESULT
  OUTPUT_STRIP_TRAILING_WHITESPACE)
if(NOT FLASHSEEK_TORCH_RESULT EQUAL 0)
  message(FATAL_ERROR "FLASHSEEK_BUILD_PYTHON needs torch importable by ${Python3_EXECUTABLE}")
endif()
string(REPLACE "\n" ";" FLASHSEEK_TORCH_INFO "${FLASHSEEK_TORCH_INFO}")
list(GET FLASHSEEK_TORCH_INFO -1 FLASHSEEK_TORCH_CXX11_ABI)
list(REMOVE_AT FLASHSEEK_TORCH_INFO -1)
set(FLASHSEEK_TORCH_INCLUDES "")
set(FLASHSEEK_TORCH_LIBDIRS "")
foreach(entry ${FLASHSEEK_TORCH_INFO})
  if(entry MATCHES "/lib$")
    list(APPEND FLASHSEEK_TORCH_LIBDIRS ${entry})
  else()
    list(APPEND FLASHSEEK_TORCH_INCLUDES ${entry})
  endif()
endforeach()

Python3_add_library(_C MODULE WITH_SOABI ${CMAKE_CURRENT_SOURCE_DIR}/python/flashseek/csrc/binding.cpp)
target_include_directories(_C PRIVATE ${FLASHSEEK_TORCH_INCLUDES})
target_link_directories(_C PRIVATE ${FLASHSEEK_TORCH_LIBDIRS})
target_link_libraries(_C PRIVATE flashseek CUDA::cudart c10 c10_cuda torch torch_cpu torch_cuda torch_python)
target_compile_definitions(_C PRIVATE TORCH_EXTENSION_NAME=_C TORCH_API_INCLUDE_EXTENSION_H
                                      _GLIBCXX_USE_CXX11_ABI=${FLASHSEEK_TORCH_CXX11_ABI})
install(TARGETS _C LIBRARY DESTINATION flashseek)
