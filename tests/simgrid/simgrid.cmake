# SimGrid's side of the speed comparison (issue 10, item 5): tests/simgrid/
# holds a SimGrid program that runs geodes's own task graph, and its tests.
# Built only where Debian's libsimgrid-dev (3.32) is installed; never
# required: without it the bench says so and its figure is absent.
pkg_check_modules(SIMGRID QUIET IMPORTED_TARGET simgrid)
if(NOT SIMGRID_FOUND)
  find_library(SIMGRID_LIBRARY simgrid)
  find_path(SIMGRID_INCLUDE_DIR simgrid/engine.h)
  if(SIMGRID_LIBRARY AND SIMGRID_INCLUDE_DIR)
    add_library(PkgConfig::SIMGRID UNKNOWN IMPORTED)
    set_target_properties(PkgConfig::SIMGRID PROPERTIES
      IMPORTED_LOCATION ${SIMGRID_LIBRARY}
      INTERFACE_INCLUDE_DIRECTORIES ${SIMGRID_INCLUDE_DIR})
    set(SIMGRID_FOUND TRUE)
  endif()
endif()

if(SIMGRID_FOUND)
  add_executable(simgrid_train ${CMAKE_SOURCE_DIR}/tests/simgrid/simgrid_train.c
                             ${CMAKE_SOURCE_DIR}/tests/simgrid/simgrid_platform.c)
  target_link_libraries(simgrid_train PRIVATE geodes_sim PkgConfig::SIMGRID)
  # The bench's figure: one and 100 iterations of the 64-GPU worldwide
  # workload with 4 and 32 micro-batches per pipeline, SimGrid's defaults,
  # each beside geodes's sim_run repeated as often on the same workload.
  add_dependencies(bench simgrid_train)
  foreach(mb 4 32)
    foreach(n 1 100)
      foreach(engine simgrid geodes)
        add_custom_command(TARGET bench POST_BUILD
          COMMAND simgrid_train --engine ${engine} --micro-batches ${mb}
                                --iterations ${n} VERBATIM)
      endforeach()
    endforeach()
  endforeach()
  if(CRITERION_FOUND)
    # Registered as the top CMakeLists.txt registers tests/test_*.c, with the
    # program's path and the platform writer added.
    foreach(t test_simgrid_train test_simgrid_platform)
      geodes_criterion_test(${t} ${CMAKE_SOURCE_DIR}/tests/simgrid/${t}.c
                                 ${CMAKE_SOURCE_DIR}/tests/simgrid/simgrid_platform.c)
      target_link_libraries(${t} PRIVATE PkgConfig::SIMGRID)
      target_compile_definitions(${t} PRIVATE
        SIMGRID_TRAIN_BIN="$<TARGET_FILE:simgrid_train>")
      add_dependencies(${t} simgrid_train)
    endforeach()
  endif()
else()
  add_custom_command(TARGET bench POST_BUILD
    COMMAND ${CMAKE_COMMAND} -E echo
            "simgrid_train: SimGrid is not installed (Debian: libsimgrid-dev), so SimGrid's figure is absent"
    VERBATIM)
endif()
