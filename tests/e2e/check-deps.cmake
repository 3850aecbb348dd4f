# cmake -DNODE=<node or NOTFOUND> -DE2E_DIR=<tests/e2e> -P check-deps.cmake
# Fails with instructions when Node.js or the e2e npm packages are missing.
if(NOT NODE OR NODE MATCHES "NOTFOUND$")
    message(FATAL_ERROR "e2e: Node.js (>= 20) not found on PATH; install it (scripts/install-deps.sh)")
endif()
execute_process(COMMAND ${NODE} -p "process.versions.node.split('.')[0]"
    OUTPUT_VARIABLE major OUTPUT_STRIP_TRAILING_WHITESPACE RESULT_VARIABLE rc)
if(NOT rc EQUAL 0 OR major LESS 20)
    message(FATAL_ERROR "e2e: Node.js >= 20 required, found '${major}' at ${NODE}")
endif()
foreach(pkg @supabase/realtime-js ws)
    if(NOT EXISTS ${E2E_DIR}/node_modules/${pkg}/package.json)
        message(FATAL_ERROR "e2e: ${E2E_DIR}/node_modules/${pkg} is missing; run `npm ci` in "
                            "${E2E_DIR} (scripts/install-deps.sh does it)")
    endif()
endforeach()
message(STATUS "e2e: Node.js ${major} and npm packages present")
