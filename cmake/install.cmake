# Installation: the library (stripped), headers, a CMake package (find_package(cucore) ->
# cucore::cucore) and a pkg-config file.
#
# Versions: the soname is libcucore.so.<MAJOR>. While MAJOR is 0 the ABI may change
# between minor releases; the package version file (SameMinorVersion) therefore makes
# find_package(cucore 0.1) accept 0.1.x with x >= the patch asked for, never 0.2.
# From 1.0 on the policy is SameMajorVersion (see README.md, "Versions").
include(CMakePackageConfigHelpers)

# (or at install time: CUCORE_INSTALL_DEBUG_INFO=1 cmake --install ...)
option(CUCORE_INSTALL_DEBUG_INFO
  "Install libcucore's debug info as a separate file (<libdir>/.debug/, found by gdb through .gnu_debuglink)" OFF)

# The include directory reaches consumers once, through the target's INSTALL_INTERFACE
# (src/CMakeLists.txt); an INCLUDES DESTINATION here would list it a second time.
install(TARGETS cucore EXPORT cucoreTargets
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
# The build is RelWithDebInfo (11.9 MB with debug info, 0.7 MB without): the installed
# library is stripped whether or not `cmake --install --strip` was asked for. With
# CUCORE_INSTALL_DEBUG_INFO, its debug info is kept beside it first (taken from the build
# tree's copy, which is never stripped) and linked by .gnu_debuglink.
if(CMAKE_STRIP)
  install(CODE "
    set(cucore_built \"$<TARGET_FILE:cucore>\")
    set(cucore_installed_name \"${CMAKE_INSTALL_LIBDIR}/$<TARGET_FILE_NAME:cucore>\")
    set(cucore_strip \"${CMAKE_STRIP}\")
    set(cucore_objcopy \"${CMAKE_OBJCOPY}\")
    set(cucore_debug_info ${CUCORE_INSTALL_DEBUG_INFO})")
  install(CODE [[
    if(IS_ABSOLUTE "${cucore_installed_name}")
      set(cucore_installed "$ENV{DESTDIR}${cucore_installed_name}")
    else()
      set(cucore_installed "$ENV{DESTDIR}${CMAKE_INSTALL_PREFIX}/${cucore_installed_name}")
    endif()
    if(DEFINED ENV{CUCORE_INSTALL_DEBUG_INFO})
      set(cucore_debug_info "$ENV{CUCORE_INSTALL_DEBUG_INFO}")
    endif()
    if(cucore_debug_info)
      get_filename_component(cucore_debug_dir "${cucore_installed}" DIRECTORY)
      get_filename_component(cucore_debug_name "${cucore_installed}" NAME)
      set(cucore_debug "${cucore_debug_dir}/.debug/${cucore_debug_name}.debug")
      file(MAKE_DIRECTORY "${cucore_debug_dir}/.debug")
      message(STATUS "Installing: ${cucore_debug}")
      execute_process(COMMAND "${cucore_objcopy}" --only-keep-debug "${cucore_built}" "${cucore_debug}"
        COMMAND_ERROR_IS_FATAL ANY)
    endif()
    message(STATUS "Stripping: ${cucore_installed}")
    execute_process(COMMAND "${cucore_strip}" --strip-unneeded "${cucore_installed}" COMMAND_ERROR_IS_FATAL ANY)
    if(cucore_debug_info)
      execute_process(COMMAND "${cucore_objcopy}" "--add-gnu-debuglink=${cucore_debug}" "${cucore_installed}"
        COMMAND_ERROR_IS_FATAL ANY)
    endif()
  ]])
else()
  message(WARNING "cucore: no strip tool found (CMAKE_STRIP): the installed libcucore.so keeps its debug info")
endif()
install(FILES include/cucore.h include/cucore.hpp DESTINATION ${CMAKE_INSTALL_INCLUDEDIR} OPTIONAL)
install(DIRECTORY include/cucore DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
  FILES_MATCHING PATTERN "*.h" PATTERN "*.hpp")

set(CUCORE_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/cucore)
install(EXPORT cucoreTargets NAMESPACE cucore:: DESTINATION ${CUCORE_CMAKE_DIR})
configure_package_config_file(cmake/cucoreConfig.cmake.in
  ${CMAKE_CURRENT_BINARY_DIR}/cucoreConfig.cmake INSTALL_DESTINATION ${CUCORE_CMAKE_DIR})
if(PROJECT_VERSION_MAJOR EQUAL 0)
  set(cucore_compatibility SameMinorVersion)
else()
  set(cucore_compatibility SameMajorVersion)
endif()
write_basic_package_version_file(${CMAKE_CURRENT_BINARY_DIR}/cucoreConfigVersion.cmake
  VERSION ${PROJECT_VERSION} COMPATIBILITY ${cucore_compatibility})
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/cucoreConfig.cmake ${CMAKE_CURRENT_BINARY_DIR}/cucoreConfigVersion.cmake
  DESTINATION ${CUCORE_CMAKE_DIR})

configure_file(cmake/cucore.pc.in ${CMAKE_CURRENT_BINARY_DIR}/cucore.pc @ONLY)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/cucore.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
