# Installing realtime-server as a Debian/systemd service, and the .deb packages.
#
#   cmake --install build --prefix /usr      binaries, systemd unit, /etc env file, man page
#   cpack --config build/CPackConfig.cmake -G DEB  (or: cmake --build build --target package)
#       realtime-server_<version>-1_<arch>.deb     the server, its unit and configuration
#       realtime-dashboard_<version>-1_<arch>.deb  the operators' desktop application
#
# Install components: "server" and "dashboard" (the install(TARGETS) rules name them). Resources
# are compiled into the binaries (control plane SQL, dashboard translations under :/i18n/), so
# nothing else is installed for them.

set(RT_PACKAGING_DIR ${PROJECT_SOURCE_DIR}/packaging)

# qt_standard_project_setup() gives installed binaries an $ORIGIN RUNPATH for relocatable
# bundles; ours use the system's Qt in /usr/lib, and Debian binaries carry no RUNPATH.
foreach(target realtime-server realtime-dashboard)
    if(TARGET ${target})
        set_target_properties(${target} PROPERTIES INSTALL_RPATH "")
    endif()
endforeach()

if(RT_BUILD_SERVER)
    # The unit and env file paths depend on the prefix given at install time; see the script.
    install(CODE "
        set(RT_PACKAGING_DIR \"${RT_PACKAGING_DIR}\")
        set(RT_PACKAGING_BINARY_DIR \"${PROJECT_BINARY_DIR}/packaging\")
        set(RT_VERSION \"${PROJECT_VERSION}\")
        include(\"${PROJECT_SOURCE_DIR}/cmake/InstallService.cmake\")"
        COMPONENT server)
endif()

set(CPACK_PACKAGE_NAME realtime-server)
set(CPACK_PACKAGE_VENDOR qtrealtime)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
# Each component's description below starts with its own summary line. CPackDeb would put
# CPACK_PACKAGE_DESCRIPTION_SUMMARY in front of it unless that is CPack's default text.
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "${CMAKE_PROJECT_NAME} built using CMake")
set(CPACK_PACKAGE_CONTACT "qtrealtime maintainers <maintainers@qtrealtime.invalid>")
set(CPACK_GENERATOR DEB)
# Install with DESTDIR=<staging> and the prefix /usr, so that the unit written at install time
# names /usr/bin and /etc, not the staging directory.
set(CPACK_SET_DESTDIR ON)
set(CPACK_INSTALL_PREFIX /usr)
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_STRIP_FILES ON)

set(CPACK_DEB_COMPONENT_INSTALL ON)
set(CPACK_COMPONENTS_ALL)
if(RT_BUILD_SERVER)
    list(APPEND CPACK_COMPONENTS_ALL server)
endif()
if(RT_BUILD_DASHBOARD)
    list(APPEND CPACK_COMPONENTS_ALL dashboard)
endif()

set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_RELEASE 1)
set(CPACK_DEBIAN_PACKAGE_MAINTAINER "${CPACK_PACKAGE_CONTACT}")
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
set(CPACK_DEBIAN_PACKAGE_HOMEPAGE "https://github.com/supabase/realtime")
# Library dependencies from the binaries (dpkg-shlibdeps, from dpkg-dev).
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)

set(CPACK_DEBIAN_SERVER_PACKAGE_NAME realtime-server)
set(CPACK_DEBIAN_SERVER_PACKAGE_SECTION net)
set(CPACK_COMPONENT_SERVER_DESCRIPTION "Supabase-Realtime-compatible realtime server
One node of a qtrealtime cluster: WebSocket channels (broadcast, presence) on the Phoenix
protocol versions 1.0.0 and 2.0.0 and the REST API of Supabase Realtime, on one port. The
unchanged @supabase/realtime-js client connects to it.

Runs as the systemd service realtime-server, configured in
/etc/realtime-server/realtime-server.env. A new installation is neither enabled nor started
until a secret (API_JWT_SECRET) is set there: then systemctl enable --now realtime-server.")
# Qt loads its SQL drivers as plugins at run time, which dpkg-shlibdeps cannot see: SQLite for
# the embedded control plane, PostgreSQL for DB_HOST. deb-systemd-helper for the scripts.
set(CPACK_DEBIAN_SERVER_PACKAGE_DEPENDS "libqt6sql6-sqlite, libqt6sql6-psql, init-system-helpers")
set(CPACK_DEBIAN_SERVER_PACKAGE_CONTROL_EXTRA
    ${RT_PACKAGING_DIR}/debian/conffiles
    ${RT_PACKAGING_DIR}/debian/postinst
    ${RT_PACKAGING_DIR}/debian/prerm
    ${RT_PACKAGING_DIR}/debian/postrm)
set(CPACK_DEBIAN_SERVER_PACKAGE_CONTROL_STRICT_PERMISSION ON)

set(CPACK_DEBIAN_DASHBOARD_PACKAGE_NAME realtime-dashboard)
set(CPACK_DEBIAN_DASHBOARD_PACKAGE_SECTION utils)
set(CPACK_COMPONENT_DASHBOARD_DESCRIPTION "Operator dashboard for qtrealtime realtime servers
A Qt Widgets desktop application for the operators of a qtrealtime cluster.")

include(CPack)

# ctest -L packaging (scripts/test.sh runs it after the build): installs with DESTDIR and to a
# temporary prefix, verifies the unit, builds the .deb packages and checks their control data.
if(RT_BUILD_TESTS AND RT_BUILD_SERVER AND RT_BUILD_DASHBOARD)
    add_test(NAME packaging_install
        COMMAND ${RT_PACKAGING_DIR}/tests/check-install.sh ${PROJECT_BINARY_DIR})
    set_tests_properties(packaging_install PROPERTIES LABELS packaging TIMEOUT 180)
endif()
