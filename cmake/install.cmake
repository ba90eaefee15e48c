# The CMake package of an installed MSL: <prefix>/lib/cmake/msl/ holds
# mslConfig.cmake, its version file and mslTargets.cmake, which defines the
# imported target msl::msl (libmsl.so, the include folder, C++20). A host:
#
#   find_package(msl REQUIRED)          # CMAKE_PREFIX_PATH=<prefix> or msl_DIR
#   target_link_libraries(host PRIVATE msl::msl)
#
# mslTargets.cmake finds the prefix from its own location, so a moved
# install still works (tests/cli/test_install.sh checks that).
if(NOT TARGET msl_shared)
  return()
endif()

include(CMakePackageConfigHelpers)
set(MSL_INSTALL_CMAKEDIR ${CMAKE_INSTALL_LIBDIR}/cmake/msl)
install(EXPORT mslTargets NAMESPACE msl:: DESTINATION ${MSL_INSTALL_CMAKEDIR})
configure_package_config_file(${CMAKE_CURRENT_LIST_DIR}/mslConfig.cmake.in
                              ${CMAKE_CURRENT_BINARY_DIR}/mslConfig.cmake INSTALL_DESTINATION ${MSL_INSTALL_CMAKEDIR})
# 0.x: any change of the minor version may change the API.
write_basic_package_version_file(${CMAKE_CURRENT_BINARY_DIR}/mslConfigVersion.cmake
                                 COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/mslConfig.cmake ${CMAKE_CURRENT_BINARY_DIR}/mslConfigVersion.cmake
        DESTINATION ${MSL_INSTALL_CMAKEDIR})
