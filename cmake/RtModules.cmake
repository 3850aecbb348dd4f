# Build helpers that keep the build graph equal to the architecture diagram.
#
# Every module is a static library created with rt_add_module(). Each module declares a LAYER;
# a module may link only modules of a strictly lower layer, so dependencies point inwards
# (shared/core = 0 ... server/app = 9). A link that points outwards fails at configure time.

set(RT_STRICT_QT_DEFINES
    QT_NO_KEYWORDS
    QT_NO_CAST_FROM_ASCII
    QT_NO_CAST_TO_ASCII
    QT_NO_CAST_FROM_BYTEARRAY
    QT_NO_URL_CAST_FROM_STRING
    QT_USE_QSTRINGBUILDER
    QT_NO_FOREACH
    QT_NO_NARROWING_CONVERSIONS_IN_CONNECT
    QT_DISABLE_DEPRECATED_BEFORE=0x060400)

set(RT_WARNING_FLAGS -Wall -Wextra -Wpedantic -Wshadow -Wnon-virtual-dtor -Woverloaded-virtual
    -Wold-style-cast)

if(RT_SANITIZE)
    add_compile_options(-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined)
    add_link_options(-fsanitize=address,undefined)
endif()
if(RT_TSAN)
    if(RT_SANITIZE)
        message(FATAL_ERROR "RT_TSAN and RT_SANITIZE cannot be combined")
    endif()
    add_compile_options(-fsanitize=thread -fno-omit-frame-pointer)
    add_link_options(-fsanitize=thread)
endif()

# Flags every target of ours gets (libraries, executables, tests).
function(rt_apply_project_flags target)
    target_compile_definitions(${target} PRIVATE ${RT_STRICT_QT_DEFINES})
    target_compile_options(${target} PRIVATE ${RT_WARNING_FLAGS})
    if(RT_WARNINGS_AS_ERRORS)
        target_compile_options(${target} PRIVATE -Werror)
    endif()
endfunction()

# rt_add_module(<name> LAYER <n> SOURCES ... [DEPS rt::x ...] [QT Core Network ...] [LIBS ...])
# Creates static library rt_<name> with alias rt::<name>; <name> is e.g. server_gateway.
function(rt_add_module name)
    cmake_parse_arguments(ARG "" "LAYER" "SOURCES;DEPS;QT;LIBS" ${ARGN})
    if(NOT DEFINED ARG_LAYER)
        message(FATAL_ERROR "rt_add_module(${name}): LAYER is required")
    endif()
    set(target rt_${name})
    add_library(${target} STATIC ${ARG_SOURCES})
    add_library(rt::${name} ALIAS ${target})
    set_property(GLOBAL PROPERTY RT_LAYER_${name} ${ARG_LAYER})
    # Every module and its layer, for the module-map check (cmake/CheckModuleMap.cmake).
    set_property(GLOBAL APPEND PROPERTY RT_MODULES "${name}:${ARG_LAYER}")
    foreach(dep IN LISTS ARG_DEPS)
        string(REPLACE "rt::" "" dep_name "${dep}")
        get_property(dep_layer GLOBAL PROPERTY RT_LAYER_${dep_name})
        if("${dep_layer}" STREQUAL "")
            message(FATAL_ERROR "rt_add_module(${name}): unknown module ${dep} (declare it first)")
        endif()
        if(NOT dep_layer LESS ARG_LAYER)
            message(FATAL_ERROR "rt_add_module(${name}, layer ${ARG_LAYER}): may not depend on "
                "${dep} (layer ${dep_layer}); dependencies must point inwards")
        endif()
    endforeach()
    # The repository root is the include root: #include "server/auth/jwt.h".
    target_include_directories(${target} PUBLIC ${PROJECT_SOURCE_DIR} ${PROJECT_BINARY_DIR})
    set(qt_libs)
    foreach(component IN LISTS ARG_QT)
        list(APPEND qt_libs Qt6::${component})
    endforeach()
    target_link_libraries(${target} PUBLIC ${ARG_DEPS} ${qt_libs} ${ARG_LIBS})
    rt_apply_project_flags(${target})
    if(RT_FUZZ)
        # Coverage instrumentation inside the libraries, so libFuzzer sees their branches.
        target_compile_options(${target} PRIVATE -fsanitize=fuzzer-no-link)
    endif()
endfunction()

# rt_add_unit_test(<name> SOURCES ... DEPS ... [LABELS unit] [ENV ...])
# A QtTest executable registered with CTest; label "unit" unless LABELS says otherwise.
function(rt_add_test name)
    cmake_parse_arguments(ARG "" "TIMEOUT" "SOURCES;DEPS;LABELS;ENV" ${ARGN})
    add_executable(${name} ${ARG_SOURCES})
    target_link_libraries(${name} PRIVATE ${ARG_DEPS} Qt6::Test)
    target_include_directories(${name} PRIVATE ${PROJECT_SOURCE_DIR} ${PROJECT_BINARY_DIR})
    rt_apply_project_flags(${name})
    set_target_properties(${name} PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/tests)
    add_test(NAME ${name} COMMAND ${name})
    if(NOT ARG_LABELS)
        set(ARG_LABELS unit)
    endif()
    get_filename_component(suite ${CMAKE_CURRENT_SOURCE_DIR} NAME)
    if(suite IN_LIST RT_TSAN_SUITES)
        list(APPEND ARG_LABELS tsan)
    endif()
    if(suite IN_LIST RT_ASAN_SUITES)
        list(APPEND ARG_LABELS asan)
    endif()
    if(NOT ARG_TIMEOUT)
        set(ARG_TIMEOUT 120)
    endif()
    set_tests_properties(${name} PROPERTIES LABELS "${ARG_LABELS}" TIMEOUT ${ARG_TIMEOUT}
        ENVIRONMENT "QT_QPA_PLATFORM=offscreen;QT_LOGGING_RULES=*.debug=false;${ARG_ENV}")
endfunction()

# rt_add_fuzz_target(<name> SOURCE fuzz_x.cpp CORPUS dir DEPS ...)
# With RT_FUZZ (clang): a libFuzzer binary fuzz_<name>. Always: replay_<name>, a plain executable
# that runs LLVMFuzzerTestOneInput over every file of the seed corpus; CTest label "fuzz-replay".
function(rt_add_fuzz_target name)
    cmake_parse_arguments(ARG "" "SOURCE;CORPUS" "DEPS" ${ARGN})
    if(RT_FUZZ)
        add_executable(fuzz_${name} ${ARG_SOURCE})
        target_link_libraries(fuzz_${name} PRIVATE ${ARG_DEPS})
        target_compile_options(fuzz_${name} PRIVATE -fsanitize=fuzzer)
        target_link_options(fuzz_${name} PRIVATE -fsanitize=fuzzer)
        target_include_directories(fuzz_${name} PRIVATE ${PROJECT_SOURCE_DIR})
        rt_apply_project_flags(fuzz_${name})
        set_target_properties(fuzz_${name} PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/fuzz)
    endif()
    add_executable(replay_${name} ${ARG_SOURCE} ${PROJECT_SOURCE_DIR}/tests/fuzz/replay_main.cpp)
    target_link_libraries(replay_${name} PRIVATE ${ARG_DEPS})
    target_include_directories(replay_${name} PRIVATE ${PROJECT_SOURCE_DIR})
    rt_apply_project_flags(replay_${name})
    set_target_properties(replay_${name} PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/tests)
    add_test(NAME replay_${name} COMMAND replay_${name} ${ARG_CORPUS})
    set_tests_properties(replay_${name} PROPERTIES LABELS "fuzz-replay" TIMEOUT 300)
endfunction()
