# Installation: the library, headers, a CMake package (find_package(cucore) ->
# cucore::cucore) and a pkg-config file.
include(CMakePackageConfigHelpers)

install(TARGETS cucore EXPORT cucoreTargets
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR}
  INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(FILES include/cucore.h include/cucore.hpp DESTINATION ${CMAKE_INSTALL_INCLUDEDIR} OPTIONAL)
install(DIRECTORY include/cucore DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
  FILES_MATCHING PATTERN "*.h" PATTERN "*.hpp")

set(CUCORE_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/cucore)
install(EXPORT cucoreTargets NAMESPACE cucore:: DESTINATION ${CUCORE_CMAKE_DIR})
configure_package_config_file(cmake/cucoreConfig.cmake.in
  ${CMAKE_CURRENT_BINARY_DIR}/cucoreConfig.cmake INSTALL_DESTINATION ${CUCORE_CMAKE_DIR})
write_basic_package_version_file(${CMAKE_CURRENT_BINARY_DIR}/cucoreConfigVersion.cmake
  VERSION ${PROJECT_VERSION} COMPATIBILITY SameMajorVersion)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/cucoreConfig.cmake ${CMAKE_CURRENT_BINARY_DIR}/cucoreConfigVersion.cmake
  DESTINATION ${CUCORE_CMAKE_DIR})

configure_file(cmake/cucore.pc.in ${CMAKE_CURRENT_BINARY_DIR}/cucore.pc @ONLY)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/cucore.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
