# Runs at install time (cmake --install, cpack), included by the install code of
# cmake/Packaging.cmake with RT_PACKAGING_DIR and RT_PACKAGING_BINARY_DIR set. The systemd unit
# and the environment file name paths under the prefix, and the prefix is only known now
# (`cmake --install build --prefix /usr`), so both are written here rather than at configure time.
#
#   <prefix>/lib/systemd/system/realtime-server.service
#   <sysconfdir>/realtime-server/realtime-server.env     (0600; kept if it already exists)
#   <prefix>/share/doc/realtime-server/realtime-server.env (the pristine template)
#   <prefix>/share/man/man8/realtime-server.8.gz
#
# <sysconfdir> follows GNUInstallDirs: /etc for the prefix /usr, /etc/opt/... for /opt/...,
# <prefix>/etc otherwise. DESTDIR is honoured by file(INSTALL).

set(prefix "${CMAKE_INSTALL_PREFIX}")
if(prefix STREQUAL "/usr")
    set(sysconfdir "/etc")
elseif(prefix MATCHES "^/opt/(.*)")
    set(sysconfdir "/etc/opt/${CMAKE_MATCH_1}")
else()
    set(sysconfdir "${prefix}/etc")
endif()
set(RT_BINDIR "${prefix}/bin")
set(RT_ENV_FILE "${sysconfdir}/realtime-server/realtime-server.env")

set(staging "${RT_PACKAGING_BINARY_DIR}/install-staging")
file(MAKE_DIRECTORY "${staging}")
configure_file("${RT_PACKAGING_DIR}/realtime-server.service.in"
    "${staging}/realtime-server.service" @ONLY)
file(INSTALL "${staging}/realtime-server.service"
    DESTINATION "${prefix}/lib/systemd/system"
    PERMISSIONS OWNER_READ OWNER_WRITE GROUP_READ WORLD_READ)

# The environment file holds the secrets once edited: never overwrite an existing one (dpkg
# treats it as a conffile; this covers repeated `cmake --install`).
if(EXISTS "$ENV{DESTDIR}${RT_ENV_FILE}")
    message(STATUS "Keeping existing: $ENV{DESTDIR}${RT_ENV_FILE} "
        "(the current template is in ${prefix}/share/doc/realtime-server/)")
else()
    file(INSTALL "${RT_PACKAGING_DIR}/realtime-server.env"
        DESTINATION "${sysconfdir}/realtime-server"
        PERMISSIONS OWNER_READ OWNER_WRITE)
endif()
file(INSTALL "${RT_PACKAGING_DIR}/realtime-server.env"
    DESTINATION "${prefix}/share/doc/realtime-server"
    PERMISSIONS OWNER_READ OWNER_WRITE GROUP_READ WORLD_READ)

# Manual page, compressed as Debian ships them.
configure_file("${RT_PACKAGING_DIR}/realtime-server.8.in" "${staging}/realtime-server.8" @ONLY)
execute_process(COMMAND gzip -9nf "${staging}/realtime-server.8" RESULT_VARIABLE gzip_result)
if(gzip_result EQUAL 0)
    set(manpage "${staging}/realtime-server.8.gz")
else()
    set(manpage "${staging}/realtime-server.8")
endif()
file(INSTALL "${manpage}" DESTINATION "${prefix}/share/man/man8"
    PERMISSIONS OWNER_READ OWNER_WRITE GROUP_READ WORLD_READ)
