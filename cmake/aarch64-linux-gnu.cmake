# Cross-compiles for aarch64 Linux with Debian's g++-aarch64-linux-gnu, and
# runs what it builds under qemu-aarch64 (binfmt is not registered on our
# machines, so CMake, ctest included, has to call the emulator itself).
# Executables are linked statically, so qemu needs no aarch64 sysroot at run
# time. The presets aarch64 and aarch64-dotprod use it (CMakePresets.json);
# GoogleTest is built from its sources (CMakeLists.txt).
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(CMAKE_CXX_COMPILER aarch64-linux-gnu-g++)
set(CMAKE_C_COMPILER aarch64-linux-gnu-gcc)  # GoogleTest's project enables C

# Look for libraries and packages in the aarch64 tree only, programs on the host.
set(CMAKE_FIND_ROOT_PATH /usr/aarch64-linux-gnu)
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)

set(CMAKE_EXE_LINKER_FLAGS_INIT -static)
set(CMAKE_CROSSCOMPILING_EMULATOR qemu-aarch64)
