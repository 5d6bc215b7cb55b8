# tfdebug_add_library(NAME SOURCES file... DEPS area... [PUBLIC_LIBS lib...] [PRIVATE_LIBS lib...])
#
# One library target of ours: tfdebug_NAME with the alias tfdebug::NAME, its public headers under
# include/tfdebug/NAME/ (include/README.md), its sources and private headers under src/NAME/,
# the project's warning set and install rules. DEPS names the areas of ours it builds on (core,
# io, session, ...): they are linked PUBLIC, so a user who links tfdebug::NAME gets what its
# headers include. PUBLIC_LIBS and PRIVATE_LIBS are other projects' targets.
#
# Every call records the area and its DEPS; tfdebug_write_area_graph() writes them to
# ${PROJECT_BINARY_DIR}/tfdebug_areas.txt, which tests/deps/check_includes.py holds against the
# rules of include/README.md and against every #include of our headers and sources.
include_guard(GLOBAL)

function(tfdebug_add_library name)
  cmake_parse_arguments(PARSE_ARGV 1 arg "" "" "SOURCES;DEPS;PUBLIC_LIBS;PRIVATE_LIBS")
  if(arg_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "tfdebug_add_library(${name}): unknown arguments ${arg_UNPARSED_ARGUMENTS}")
  endif()
  set(target tfdebug_${name})
  add_library(${target} ${arg_SOURCES})
  add_library(tfdebug::${name} ALIAS ${target})
  set_target_properties(${target} PROPERTIES EXPORT_NAME ${name} OUTPUT_NAME ${target})
  target_include_directories(${target}
    PUBLIC
      $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}/include>
      $<BUILD_INTERFACE:${PROJECT_BINARY_DIR}/include>
      $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>
    PRIVATE
      ${CMAKE_CURRENT_SOURCE_DIR})
  target_compile_features(${target} PUBLIC cxx_std_20)
  foreach(dep IN LISTS arg_DEPS)
    target_link_libraries(${target} PUBLIC tfdebug::${dep})
  endforeach()
  if(arg_PUBLIC_LIBS)
    target_link_libraries(${target} PUBLIC ${arg_PUBLIC_LIBS})
  endif()
  if(arg_PRIVATE_LIBS)
    target_link_libraries(${target} PRIVATE ${arg_PRIVATE_LIBS})
  endif()
  tfdebug_set_warnings(${target})
  if(TFDEBUG_INSTALL)
    install(TARGETS ${target} EXPORT tfdebugTargets
      ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
      LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
  endif()
  set_property(GLOBAL APPEND PROPERTY TFDEBUG_AREAS "${name}")
  set_property(GLOBAL PROPERTY TFDEBUG_DEPS_${name} "${arg_DEPS}")
endfunction()

# Writes the areas and their direct DEPS, one line each: "area: dep dep".
function(tfdebug_write_area_graph)
  get_property(areas GLOBAL PROPERTY TFDEBUG_AREAS)
  set(text "")
  foreach(area IN LISTS areas)
    get_property(deps GLOBAL PROPERTY TFDEBUG_DEPS_${area})
    list(JOIN deps " " joined)
    string(APPEND text "${area}: ${joined}\n")
  endforeach()
  file(WRITE ${PROJECT_BINARY_DIR}/tfdebug_areas.txt "${text}")
endfunction()
